//! The outbox is the session's journal itself: an event is owed to a webhook when its record
//! matches the webhook's `events` and no `sjournal.webhook` record with outcome `delivered`
//! for that webhook names its seq. So the hook adds nothing to its own path (no second copy,
//! no second fsync), the body sent is the journaled JSON by construction, spooled events join
//! the outbox when they are merged, and the delivery log is chained and verified with the
//! events it reports on (the reasons are in the module docs of `webhook`).
//!
//! Per session, `sessions/<stem>.webhook/` (0700) holds:
//! - `deliver.lock`: flock held by the one deliverer of the session; it holds the pid of the
//!   last deliverer that took it (for `webhook status`);
//! - `<name>.cursor`: per webhook, where the next scan may start (every event before it is
//!   delivered) and what the last attempts were. A hint, never trusted: the scan resumes only
//!   if the record at its offset carries the seq and chain link the cursor names; otherwise it
//!   scans from the start. It is rewritten (renamed into place, not synced) after each
//!   delivery; losing it costs a scan, never a delivery.
//!
//! The directory's existence also marks the session as subscribed: `deliver --all` and
//! `status` visit only sessions where a hook found a matching webhook.

use std::collections::{BTreeMap, BTreeSet};
use std::fs::File;
use std::io::{Seek, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::config::webhook::WebhookHandler;
use crate::error::{Error, Result};
use crate::format::payload::{self, Webhook, WebhookOutcome, KIND_WEBHOOK};
use crate::format::Hash;
use crate::journal::paths::{self, ensure_dir};
use crate::journal::reader::Records;
use crate::journal::scan::Chain;
use crate::journal::{JournalReader, Root, SessionPaths};
use crate::limits::WEBHOOK_PLAN_MAX_EVENTS;
use crate::storage::lock::{self, Mode};

pub(crate) const STATE_EXT: &str = "webhook";
const LOCK_FILE: &str = "deliver.lock";
const CURSOR_EXT: &str = "cursor";

/// The session's webhook state directory.
pub fn state_dir(paths: &SessionPaths) -> PathBuf {
    paths.dir.join(format!("{}.{STATE_EXT}", paths.stem))
}

/// Creates the state directory (and `sessions/`) if missing; refuses symlinks.
pub fn ensure_state_dir(root: &Root, paths: &SessionPaths) -> Result<PathBuf> {
    root.ensure()?;
    let dir = state_dir(paths);
    ensure_dir(&dir, false)?;
    Ok(dir)
}

/// Sessions with webhook state, by file stem, sorted.
pub fn subscribed_stems(root: &Root) -> Result<Vec<String>> {
    let dir = root.sessions_dir();
    let entries = match std::fs::read_dir(&dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(Error::io("read directory", dir, e)),
    };
    let mut out = Vec::new();
    for e in entries {
        let e = e.map_err(|e| Error::io("read directory", &dir, e))?;
        let name = e.file_name();
        let Some(stem) = name.to_str().and_then(|n| n.strip_suffix(".webhook")) else {
            continue;
        };
        if e.file_type().is_ok_and(|t| t.is_dir()) {
            out.push(stem.to_owned());
        }
    }
    out.sort();
    Ok(out)
}

fn open_lock(dir: &Path) -> Result<File> {
    paths::open_file(&dir.join(LOCK_FILE), true, true)
}

/// True if the session's delivery lock is free right now (nobody delivers). Holds it only
/// for the instant of the check. A hook calls this before it starts a deliverer.
pub fn lock_is_free(dir: &Path) -> Result<bool> {
    let f = open_lock(dir)?;
    match f.try_lock() {
        Ok(()) => Ok(true),
        Err(std::fs::TryLockError::WouldBlock) => Ok(false),
        Err(std::fs::TryLockError::Error(e)) => Err(Error::io("lock", dir.join(LOCK_FILE), e)),
    }
}

/// The session's delivery lock, held: only its holder delivers the session's webhooks.
pub struct DeliveryLock {
    file: File,
}

/// Takes the delivery lock, waiting at most `wait` (a hook's probe holds it for an instant; a
/// deliverer for as long as it delivers). None: another deliverer holds it.
pub fn acquire(dir: &Path, wait: Duration) -> Result<Option<DeliveryLock>> {
    let mut file = open_lock(dir)?;
    let path = dir.join(LOCK_FILE);
    match lock::lock(&file, &path, Mode::Exclusive, Some(Instant::now() + wait)) {
        Ok(()) => {}
        Err(Error::LockTimeout { .. }) => return Ok(None),
        Err(e) => return Err(e),
    }
    // Informative only (status shows it); the flock is what excludes.
    let _ = file.set_len(0);
    let _ = file.rewind();
    let _ = write!(file, "{}", std::process::id());
    Ok(Some(DeliveryLock { file }))
}

impl Drop for DeliveryLock {
    fn drop(&mut self) {
        let _ = self.file.set_len(0);
    }
}

/// The pid of the deliverer holding the session's lock, if one runs. Reads the pid the
/// deliverer wrote and checks the process is alive; it never touches the lock itself, so
/// asking cannot keep a deliverer (or a hook's probe) out.
pub fn holder(dir: &Path) -> Option<u32> {
    let s = crate::storage::read_regular_text(
        &dir.join(LOCK_FILE),
        crate::storage::Owner::Anyone,
        4096,
    )
    .ok()?;
    let pid: u32 = s.trim().parse().ok()?;
    alive(pid).then_some(pid)
}

/// True if the process exists and has not exited (a zombie nobody reaped yet has: where init
/// does not reap orphans, a finished deliverer lingers as one).
pub fn alive(pid: u32) -> bool {
    let Some(p) = rustix::process::Pid::from_raw(pid as i32) else {
        return false;
    };
    if rustix::process::test_kill_process(p).is_err() {
        return false;
    }
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        // "pid (comm) S ...": the state follows the last ')'.
        Ok(stat) => stat
            .rsplit_once(')')
            .is_none_or(|(_, rest)| !rest.trim_start().starts_with(['Z', 'X'])),
        Err(_) => true,
    }
}

/// A place in the journal: where a record starts, and the chain state it must continue.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Position {
    pub offset: u64,
    pub chain: Chain,
}

/// One event owed to a webhook.
#[derive(Debug, Clone)]
pub struct Pending {
    pub seq: u64,
    pub kind: String,
    pub hash: Hash,
    pub at: Position,
}

/// The last attempt (or the last failed one) for a webhook, as `status` shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LastAttempt {
    /// Seq and time of the `sjournal.webhook` record.
    pub record_seq: u64,
    pub ts_unix_ns: i64,
    pub event_seq: u64,
    pub attempt: u32,
    pub outcome: WebhookOutcome,
    pub status: Option<u16>,
    pub error: Option<String>,
}

/// What a cursor file holds (JSON).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Cursor {
    pub offset: u64,
    pub next_seq: u64,
    /// Hex of the record hash before `offset` (the genesis hash at the start).
    pub prev_hash: String,
    /// Events delivered before `offset`.
    pub delivered: u64,
    pub last: Option<LastAttempt>,
    pub last_failure: Option<LastAttempt>,
}

pub fn cursor_path(dir: &Path, webhook: &str) -> PathBuf {
    dir.join(format!("{webhook}.{CURSOR_EXT}"))
}

pub fn read_cursor(dir: &Path, webhook: &str) -> Option<Cursor> {
    let f = paths::open_file(&cursor_path(dir, webhook), false, false).ok()?;
    serde_json::from_reader(std::io::BufReader::new(f)).ok()
}

/// Replaces the cursor file (a temporary file renamed into place; not synced: it is a hint).
pub fn write_cursor(dir: &Path, webhook: &str, c: &Cursor) -> Result<()> {
    let path = cursor_path(dir, webhook);
    let tmp = dir.join(format!(
        ".{webhook}.{CURSOR_EXT}.tmp-{}",
        std::process::id()
    ));
    let _ = std::fs::remove_file(&tmp);
    let mut f = paths::create_new(&tmp)?;
    f.write_all(&serde_json::to_vec(c).expect("a cursor serializes"))
        .map_err(|e| Error::io("write", &tmp, e))?;
    std::fs::rename(&tmp, &path).map_err(|e| Error::io("rename", &path, e))
}

/// What one webhook is owed in one session.
#[derive(Debug, Clone)]
pub struct Scan {
    /// The first owed events, in seq order (at most `WEBHOOK_PLAN_MAX_EVENTS`).
    pub pending: Vec<Pending>,
    /// The first matching event left out of `pending` by its bound: no cursor may pass it.
    pub unplanned: Option<Position>,
    /// All owed events.
    pub pending_total: u64,
    /// Attempts recorded so far for each owed event.
    pub attempts: BTreeMap<u64, u32>,
    /// Events delivered (distinct seqs).
    pub delivered: u64,
    pub last: Option<LastAttempt>,
    pub last_failure: Option<LastAttempt>,
    /// Where the scan ended: the end of the valid records.
    pub end: Position,
    /// The scan stopped at damage (the message); the events after it cannot be read.
    pub problem: Option<String>,
    /// Delivered seqs seen at or after `start`, to count a moved cursor's base exactly.
    delivered_seqs: BTreeSet<u64>,
    base_delivered: u64,
}

impl Scan {
    /// The cursor for when `pending[..=i]` are delivered (`None`: nothing delivered yet).
    pub fn cursor_after(&self, i: Option<usize>) -> Cursor {
        let next = i.map_or(0, |i| i + 1);
        let pos = match (self.pending.get(next), self.unplanned) {
            (Some(p), _) => p.at,
            (None, Some(u)) => u,
            (None, None) => self.end,
        };
        // Delivered events before `pos`: the base, those this scan saw delivered, and those
        // just sent (owed events are never among those seen delivered).
        let seen_before = self.delivered_seqs.range(..pos.chain.next_seq).count() as u64;
        let sent = i.map_or(0, |i| i as u64 + 1);
        Cursor {
            offset: pos.offset,
            next_seq: pos.chain.next_seq,
            prev_hash: pos.chain.prev_hash.to_hex(),
            delivered: self.base_delivered + seen_before + sent,
            last: self.last.clone(),
            last_failure: self.last_failure.clone(),
        }
    }
}

/// Reads the session's journal from `cursor` (else from the start) and says what `hook` is
/// owed. A cursor that does not fit the journal is ignored.
pub fn scan(paths: &SessionPaths, hook: &WebhookHandler, cursor: Option<&Cursor>) -> Result<Scan> {
    scan_bounded(paths, hook, cursor, WEBHOOK_PLAN_MAX_EVENTS)
}

/// [`scan`], planning at most `bound` events.
pub(crate) fn scan_bounded(
    paths: &SessionPaths,
    hook: &WebhookHandler,
    cursor: Option<&Cursor>,
    bound: usize,
) -> Result<Scan> {
    let reader = JournalReader::open(&paths.journal, None)?;
    if let Some(c) = cursor {
        if let Some(s) = scan_from(&reader, hook, Some(c), bound)? {
            return Ok(s);
        }
    }
    Ok(scan_from(&reader, hook, None, bound)?.expect("a scan from the header always starts"))
}

/// None: the cursor does not fit this journal.
fn scan_from(
    reader: &JournalReader,
    hook: &WebhookHandler,
    cursor: Option<&Cursor>,
    bound: usize,
) -> Result<Option<Scan>> {
    let (start, mut scan) = match cursor {
        Some(c) => {
            let Some(prev_hash) = Hash::from_hex(&c.prev_hash) else {
                return Ok(None);
            };
            if c.offset > reader.bytes().len() as u64 || c.next_seq == 0 {
                return Ok(None);
            }
            let chain = Chain {
                next_seq: c.next_seq,
                prev_hash,
            };
            let pos = Position {
                offset: c.offset,
                chain,
            };
            let mut s = Scan::empty(pos, c.delivered);
            s.last = c.last.clone();
            s.last_failure = c.last_failure.clone();
            (pos, s)
        }
        None => {
            let (_, hlen, genesis) = reader.header().map_err(|e| Error::BadHeader {
                path: reader.path().to_owned(),
                reason: e.to_string(),
            })?;
            let pos = Position {
                offset: hlen as u64,
                chain: Chain::genesis(genesis),
            };
            (pos, Scan::empty(pos, 0))
        }
    };
    let mut owed: BTreeMap<u64, Pending> = BTreeMap::new();
    let mut matching = 0u64;
    let mut records = reader.records_from(start.offset as usize, start.chain);
    let mut first = true;
    loop {
        let at = Position {
            offset: records.offset(),
            chain: Records::chain(&records),
        };
        let Some(r) = records.next() else { break };
        let rec = match r {
            Ok(rec) => rec,
            Err(_) if first && cursor.is_some() => return Ok(None),
            Err(stop) => {
                scan.problem = Some(format!(
                    "{}: {} (at offset {}); events after it cannot be delivered until the \
                     journal is repaired",
                    reader.path().display(),
                    stop.problem,
                    stop.offset
                ));
                break;
            }
        };
        first = false;
        if rec.kind == KIND_WEBHOOK {
            let Ok(w) = payload::decode_system::<Webhook>(rec.seq, rec.payload) else {
                continue;
            };
            if w.webhook != hook.name || w.event_seq < start.chain.next_seq {
                continue;
            }
            let last = LastAttempt {
                record_seq: rec.seq,
                ts_unix_ns: rec.ts_unix_ns,
                event_seq: w.event_seq,
                attempt: w.attempt,
                outcome: w.outcome,
                status: w.status,
                error: w.error.clone(),
            };
            *scan.attempts.entry(w.event_seq).or_default() += 1;
            if w.outcome == WebhookOutcome::Delivered {
                owed.remove(&w.event_seq);
                scan.delivered_seqs.insert(w.event_seq);
            } else {
                scan.last_failure = Some(last.clone());
            }
            scan.last = Some(last);
        } else if !payload::is_system_kind(rec.kind) && hook.matches(rec.kind) {
            matching += 1;
            if scan.unplanned.is_some() || owed.len() >= bound {
                // Planned later; a delivered record for it (seen below) still counts.
                scan.unplanned.get_or_insert(at);
            } else {
                owed.insert(
                    rec.seq,
                    Pending {
                        seq: rec.seq,
                        kind: rec.kind.to_owned(),
                        hash: rec.hash,
                        at,
                    },
                );
            }
        }
    }
    scan.end = Position {
        offset: records.offset(),
        chain: Records::chain(&records),
    };
    scan.delivered = scan.base_delivered + scan.delivered_seqs.len() as u64;
    scan.pending_total = matching.saturating_sub(scan.delivered_seqs.len() as u64);
    scan.pending = owed.into_values().collect();
    scan.attempts
        .retain(|seq, _| scan.pending.iter().any(|p| p.seq == *seq));
    Ok(Some(scan))
}

impl Scan {
    fn empty(start: Position, base_delivered: u64) -> Scan {
        Scan {
            pending: Vec::new(),
            unplanned: None,
            pending_total: 0,
            attempts: BTreeMap::new(),
            delivered: base_delivered,
            last: None,
            last_failure: None,
            end: start,
            problem: None,
            delivered_seqs: BTreeSet::new(),
            base_delivered,
        }
    }
}

/// The JSON text of an owed event, exactly as journaled.
pub fn load(paths: &SessionPaths, p: &Pending) -> Result<String> {
    let reader = JournalReader::open(&paths.journal, None)?;
    let changed = |reason: &str| Error::Changed {
        path: paths.journal.clone(),
        reason: format!("record seq {} {reason}", p.seq),
    };
    match reader.records_from(p.at.offset as usize, p.at.chain).next() {
        // Erased since it was scanned: what is left of it (`null` for the whole payload).
        Some(Ok(rec)) if rec.seq == p.seq && rec.hash == p.hash && rec.erased() => {
            Ok(payload::to_json(rec.seq, rec.kind, rec.payload)?
                .get()
                .to_owned())
        }
        Some(Ok(rec)) if rec.seq == p.seq && rec.hash == p.hash => {
            Ok(payload::decode_event(rec.seq, rec.payload)?.to_owned())
        }
        Some(Ok(_)) => Err(changed("is no longer the record that was scanned")),
        Some(Err(stop)) => Err(changed(&format!("no longer reads: {}", stop.problem))),
        None => Err(changed("is gone")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::webhook::RetryPolicy;
    use crate::journal::{Writer, WriterOptions};

    fn hook() -> WebhookHandler {
        WebhookHandler {
            name: "ci".into(),
            events: vec!["Stop".into()],
            url: "http://127.0.0.1:9/".into(),
            timeout_ms: 1000,
            headers: BTreeMap::new(),
            retry: RetryPolicy::default(),
            ca_file: None,
        }
    }

    fn delivered(w: &mut Writer, seq: u64, outcome: WebhookOutcome) {
        let rec = Webhook {
            webhook: "ci".into(),
            event_seq: seq,
            event_kind: "Stop".into(),
            key: String::new(),
            attempt: 1,
            outcome,
            status: None,
            error: None,
            response: None,
            duration_ms: 0,
            url: String::new(),
            retry_in_ms: None,
        };
        w.append(KIND_WEBHOOK, &payload::encode_system(&rec))
            .unwrap();
    }

    fn seqs(s: &Scan) -> Vec<u64> {
        s.pending.iter().map(|p| p.seq).collect()
    }

    /// Owed = matching events without a `delivered` record; a cursor resumes where the first
    /// owed event is, and a scan from it agrees with a scan from the start.
    #[test]
    fn owed_events_and_a_resumable_cursor() {
        let dir = tempfile::tempdir().unwrap();
        let root = Root::new(dir.path());
        let paths = root.session("s").unwrap();
        let mut w = Writer::open(&root, "s", &WriterOptions::default()).unwrap();
        for kind in ["Stop", "PreToolUse", "Stop", "Stop"] {
            w.append(kind, &crate::fold::digest::encode_event(kind, "{}"))
                .unwrap(); // seqs 1..=4
        }
        delivered(&mut w, 1, WebhookOutcome::Delivered);
        delivered(&mut w, 3, WebhookOutcome::Failed);
        let s = scan(&paths, &hook(), None).unwrap();
        assert_eq!(seqs(&s), [3, 4]);
        assert_eq!((s.pending_total, s.delivered), (2, 1));
        assert_eq!(s.attempts.get(&3), Some(&1));
        let c = s.cursor_after(None);
        assert_eq!((c.next_seq, c.delivered), (3, 1));
        // 3 is delivered now; the cursor moves to 4.
        delivered(&mut w, 3, WebhookOutcome::Delivered);
        let from_cursor = scan(&paths, &hook(), Some(&c)).unwrap();
        let from_start = scan(&paths, &hook(), None).unwrap();
        assert_eq!(seqs(&from_cursor), [4]);
        assert_eq!(seqs(&from_start), [4]);
        assert_eq!(from_cursor.delivered, 2);
        assert_eq!(from_start.delivered, 2);
        assert_eq!(
            from_cursor.cursor_after(None),
            from_start.cursor_after(None)
        );
        let done = from_cursor.cursor_after(Some(0));
        assert_eq!((done.delivered, done.offset), (3, from_cursor.end.offset));
    }

    /// A bounded plan never lets the cursor pass the first event it left out, even when every
    /// planned event is then delivered.
    #[test]
    fn the_cursor_never_passes_an_unplanned_event() {
        let dir = tempfile::tempdir().unwrap();
        let root = Root::new(dir.path());
        let paths = root.session("s").unwrap();
        let mut w = Writer::open(&root, "s", &WriterOptions::default()).unwrap();
        for _ in 0..5 {
            w.append("Stop", &crate::fold::digest::encode_event("Stop", "{}"))
                .unwrap();
        }
        for seq in 1..=2 {
            delivered(&mut w, seq, WebhookOutcome::Delivered);
        }
        let s = scan_bounded(&paths, &hook(), None, 2).unwrap();
        assert_eq!(
            seqs(&s),
            [] as [u64; 0],
            "1 and 2 were delivered after the plan filled"
        );
        assert_eq!(s.pending_total, 3);
        let c = s.cursor_after(None);
        assert_eq!(c.next_seq, 3, "stops at the first unplanned event");
        let next = scan_bounded(&paths, &hook(), Some(&c), 2).unwrap();
        assert_eq!(seqs(&next), [3, 4]);
        assert_eq!(next.cursor_after(Some(1)).next_seq, 5);
    }

    /// A cursor from another journal (or a journal recovered below it) is ignored.
    #[test]
    fn a_cursor_that_does_not_fit_is_ignored() {
        let dir = tempfile::tempdir().unwrap();
        let root = Root::new(dir.path());
        let paths = root.session("s").unwrap();
        let mut w = Writer::open(&root, "s", &WriterOptions::default()).unwrap();
        for _ in 0..3 {
            w.append("Stop", &crate::fold::digest::encode_event("Stop", "{}"))
                .unwrap();
        }
        let s = scan(&paths, &hook(), None).unwrap();
        let mut c = s.cursor_after(Some(0));
        c.prev_hash = Hash([7; 32]).to_hex();
        assert_eq!(seqs(&scan(&paths, &hook(), Some(&c)).unwrap()), [1, 2, 3]);
        c.offset = 1 << 40;
        assert_eq!(seqs(&scan(&paths, &hook(), Some(&c)).unwrap()), [1, 2, 3]);
    }
}
