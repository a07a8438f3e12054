//! `sjournal migrate`: rewrites a format-1 or -2 journal in the current format (3), so that
//! its payloads can be erased later (`journal::erase`, format 1) and it verifies as fast as
//! format 1 (format 2), and leaves a statement binding the old head to the new.
//!
//! Every record keeps its seq, timestamp, kind and payload; a format-1 record gets a fresh
//! salt, a format-2 one keeps its salt and payload digest (an erased one stays erased, with
//! the digest it had, so the `sjournal.erased` record naming it still holds); each gets a new
//! link, so the chain (and every hash) is new. The header keeps the session id and creation
//! time, with the current format version. The old file is kept beside the journal under
//! `<stem>.sjl.v<old version>-<blake3/16>.bin` (a hard link, as `repair` keeps a damaged
//! journal), and the statement is written to `<stem>.sjl.migrated-<new head/16>.note`: a C2SP
//! checkpoint of the new journal (so `verify --checkpoint` takes it as it is) with three
//! extension lines naming the old journal (format in `journal-format.md`, "Migration
//! statements"), signed as a C2SP signed note when a signer key is given. `verify --migration
//! FILE` checks it ([`check`]).
//!
//! Order, under the session's lock (and the rescue journal's), so that a crash or a storage
//! fault anywhere before the rename leaves the journal as it was: the old journal is verified
//! (a damaged one is refused: `repair` it first); the new one is written to
//! `<stem>.sjl.migrate` (0600), synced, and verified; the old one is linked aside; the
//! statement is written and synced; the new file is renamed over the journal; the high-water
//! mark and its copy are set to the new head (`hwm::reset`); a snapshot (which binds the old
//! head) is renamed aside (`<stem>.snap.superseded-<blake3/16>.bin`); the directory is synced.
//! Nothing is deleted. A crash between the rename and the mark's reset leaves a mark naming the
//! old hash at the same seq: verify reports it, and the next writer finishes the migration
//! (`finish_on_open`), as `migrate` run again does: the statement, written before the rename,
//! binds that old head to the journal's head; only then is the mark reset.
//!
//! A journal with a rescue journal is refused (`repair` merges it first), and so is a shipped
//! one (its segments and ship cursors bind the old chain). Events waiting in
//! the spool need nothing: they hold no hash of the journal, and merge into the new journal as
//! records of its format. A journal of the current format is left alone.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use base64::engine::general_purpose::STANDARD as B64;
use base64::Engine;
use serde::Serialize;

use crate::audit::checkpoint::{self, check_signature, Checkpoint, SignatureCheck};
use crate::audit::checkpoint::{CheckpointError, SignatureStatus};
use crate::error::Error;
use crate::format::hash::{content_hash, genesis_hash};
use crate::format::header::{Header, FORMAT_VERSION};
use crate::format::mark::Mark;
use crate::format::record::{self, FrameRef, Salts};
use crate::format::Hash;
use crate::journal::reader::Records;
use crate::journal::repair::{file_name, hold, link_beside, present, read_whole};
use crate::journal::scan::{self, Chain};
use crate::journal::verify::verify_bytes;
use crate::journal::{hwm, paths, Root};
use crate::storage::{Fs, RealFs};

/// The extension line naming the migration, right after the checkpoint's three lines.
const MARKER: &str = "sjournal migration";

/// How to migrate.
#[derive(Debug, Clone)]
pub struct Options {
    /// Build and check the new journal, report, and change nothing.
    pub dry_run: bool,
    /// The signer key file's contents (`sjournal checkpoint keygen`): the statement is signed.
    pub key: Option<String>,
    /// Give up waiting for the session's locks at this instant.
    pub deadline: Option<Instant>,
    /// The file system the writes, links, renames and the mark go through (tests inject
    /// faults here).
    pub fs: Arc<dyn Fs>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            dry_run: false,
            key: None,
            deadline: None,
            fs: Arc::new(RealFs),
        }
    }
}

/// Why a journal was not migrated. Nothing was changed.
#[derive(Debug, thiserror::Error)]
pub enum MigrateError {
    /// The journal cannot be migrated as it is; the message says why and what to do.
    #[error("{0}; nothing was migrated")]
    Refused(String),
    #[error("signer key: {0}")]
    Key(CheckpointError),
    #[error(transparent)]
    Journal(#[from] Error),
}

/// What `migrate` did (or, with `dry_run`, would do); `migrate --json` prints it.
#[derive(Debug, Clone, Serialize)]
pub struct Migrated {
    pub session_id: String,
    pub journal: PathBuf,
    /// False when the journal was of the current format already (nothing else is set then).
    pub migrated: bool,
    pub dry_run: bool,
    pub old_format: u16,
    /// Records (= the last seq) and chain head (hex) of the old and the new journal.
    pub records: u64,
    pub old_head: String,
    pub new_head: String,
    /// The old journal, kept byte for byte.
    pub kept: Option<PathBuf>,
    /// The statement binding the old head to the new.
    pub statement: Option<PathBuf>,
    pub signed: bool,
    /// A migration (by this build, or to format 2 by an older one) interrupted after its
    /// rename had left the witnesses naming the old chain; this run finished it (mark, its
    /// copy and the tail hint set to the new head, a snapshot of the old chain set aside), or
    /// with `dry_run` would, and stopped there. A format-2 journal is then migrated too.
    pub finished: bool,
}

/// What a statement says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Statement {
    /// The new journal's checkpoint: origin, records, head.
    pub new: Checkpoint,
    pub old_format: u16,
    pub old_records: u64,
    pub old_head: Hash,
    /// The kept old file's name (beside the journal) and its blake3.
    pub old_file: String,
    pub old_blake3: Hash,
}

impl Statement {
    /// The note text (unsigned).
    pub fn body(&self) -> String {
        format!(
            "{}{MARKER}\nold {} {} {}\nold-file {} {}\n",
            self.new.body(),
            self.old_format,
            self.old_records,
            B64.encode(self.old_head.0),
            self.old_file,
            self.old_blake3.to_hex()
        )
    }

    /// The body followed by a signature by `key` (a signer key file's contents).
    pub fn signed(&self, key: &str) -> Result<String, CheckpointError> {
        checkpoint::sign_text(&self.body(), key)
    }

    /// Reads a statement (signed or not); the parsed note comes back for the signature check.
    pub fn parse(text: &str) -> Result<(Statement, checkpoint::Parsed), CheckpointError> {
        let parsed = checkpoint::parse(text)?;
        let body = match &parsed.note {
            Some(n) => String::from_utf8_lossy(n.text()).into_owned(),
            None => text.to_owned(),
        };
        let mut lines = body.lines().skip(3);
        if lines.next() != Some(MARKER) {
            return Err(CheckpointError::MissingLine("sjournal migration"));
        }
        let bad = |l: &str| CheckpointError::MalformedNote(format!("bad line {l:?}"));
        let old = lines.next().ok_or(CheckpointError::MissingLine("old"))?;
        let f: Vec<&str> = old.split(' ').collect();
        let (old_format, old_records, old_head) = match f.as_slice() {
            ["old", v, n, h] => (
                v.parse().map_err(|_| bad(old))?,
                n.parse().map_err(|_| bad(old))?,
                B64.decode(h)
                    .ok()
                    .and_then(|b| <[u8; 32]>::try_from(b).ok())
                    .ok_or_else(|| bad(old))?,
            ),
            _ => return Err(bad(old)),
        };
        let file = lines
            .next()
            .ok_or(CheckpointError::MissingLine("old-file"))?;
        let f: Vec<&str> = file.split(' ').collect();
        let (old_file, old_blake3) = match f.as_slice() {
            ["old-file", name, digest] => (
                (*name).to_owned(),
                Hash::from_hex(digest).ok_or_else(|| bad(file))?,
            ),
            _ => return Err(bad(file)),
        };
        Ok((
            Statement {
                new: parsed.checkpoint.clone(),
                old_format,
                old_records,
                old_head: Hash(old_head),
                old_file,
                old_blake3,
            },
            parsed,
        ))
    }
}

/// Every session id under the root whose journal has a header (main journals, scope
/// journals included; rescue journals are not migrated on their own).
pub fn sessions(root: &Root) -> crate::error::Result<Vec<String>> {
    let mut out = Vec::new();
    for path in root.journals()? {
        if file_name(&path).ends_with(".rescue.sjl") {
            continue;
        }
        let bytes = read_whole(&path)?;
        if let Ok((h, _)) = Header::decode(&bytes) {
            out.push(h.session_id);
        }
    }
    Ok(out)
}

/// Migrates one session's journal (see the module docs).
pub fn migrate(root: &Root, session_id: &str, opts: &Options) -> Result<Migrated, MigrateError> {
    let refuse = |m: String| Err(MigrateError::Refused(m));
    let sessions = root.ensure()?;
    let paths = root.session(session_id)?;
    if !present(&paths.journal)? {
        return Err(Error::NoSuchSession {
            session: session_id.to_owned(),
            root: root.dir().to_owned(),
        }
        .into());
    }
    let fs = &*opts.fs;
    let _lock = hold(fs, &paths.lock, opts.deadline)?;
    let _rescue_lock = hold(fs, &paths.rescue_lock, opts.deadline)?;
    let mut report = Migrated {
        session_id: session_id.to_owned(),
        journal: paths.journal.clone(),
        migrated: false,
        dry_run: opts.dry_run,
        old_format: 0,
        records: 0,
        old_head: String::new(),
        new_head: String::new(),
        kept: None,
        statement: None,
        signed: false,
        finished: false,
    };
    let old = read_whole(&paths.journal)?;
    let (header, hlen) = Header::decode(&old).map_err(|e| {
        MigrateError::Refused(format!(
            "session {session_id:?}: the journal's header does not decode ({e}); run `sjournal \
             repair --session ID` first"
        ))
    })?;
    report.old_format = header.format_version;
    // A migration (to this format, or to format 2 by an older build) interrupted after its
    // rename is finished first.
    if header.format_version >= 2 {
        report.finished = finish_interrupted(fs, &sessions, &paths, &old, hlen, !opts.dry_run)?;
    }
    // A dry run stops at a migration to finish: until it is, the witnesses name the old chain.
    if header.format_version >= FORMAT_VERSION || (report.finished && opts.dry_run) {
        return Ok(report);
    }
    if header.session_id != session_id {
        return Err(Error::SessionMismatch {
            path: paths.journal.clone(),
            expected: session_id.to_owned(),
            found: header.session_id,
        }
        .into());
    }
    if present(&paths.rescue)? {
        return refuse(format!(
            "session {session_id:?} has a rescue journal (events its journal refused); run \
             `sjournal repair --session ID` to merge it first"
        ));
    }
    // The old journal's records must verify to its end, and no witness may name records it
    // lacks: migrating a damaged or rolled back journal would bless what is wrong with it
    // under a new chain. (A mark that is only missing, as in a journal copied in without it,
    // is no reason: the migration writes one.)
    let v = crate::journal::verify_file(&paths.journal, opts.deadline)?;
    let wrong = match chain_end(&old, hlen) {
        Err(what) => Some(what),
        Ok(_) if v.rolled_back => Some(v.problem.as_ref().map_or_else(
            || "its witnesses name records it lacks".to_owned(),
            |f| f.what.clone(),
        )),
        // Every frame of the header's layout, every erased record bound by its erasure.
        Ok(_) => erasures_hold(&old, hlen, header.format_version).err(),
    };
    if let Some(what) = wrong {
        return refuse(format!(
            "session {session_id:?}'s journal does not verify ({what}); run `sjournal repair \
             --session ID` first"
        ));
    }

    // Shipped segments bind the old chain, and their cursors name its hashes: the new chain
    // would disagree with both, and an object store under retention cannot take it instead.
    if let Some(w) = v
        .witnesses
        .iter()
        .find(|w| w.kind == crate::journal::verify::witness::WitnessKind::RemoteCursor)
    {
        return refuse(format!(
            "session {session_id:?} was shipped ({}); shipped segments and their ship cursors \
             bind its format-{} chain, so this build does not migrate a shipped journal",
            w.destination.as_deref().unwrap_or("a ship cursor"),
            header.format_version
        ));
    }

    let new_header = Header::with_version(session_id, header.created_unix_ns, FORMAT_VERSION);
    let mut new = new_header.encode();
    let mut prev = genesis_hash(&new);
    let mut old_head = genesis_hash(&old[..hlen]);
    let salts = Salts::new();
    let mut last: Option<(u64, Hash, u64)> = None;
    let mut at = hlen;
    while at < old.len() {
        let f = scan::frame(&old[at..]).map_err(|e| {
            MigrateError::Refused(format!("record at offset {at}: {e}; run `sjournal verify`"))
        })?;
        old_head = f.hash();
        let offset = new.len() as u64;
        // A digested record keeps its salt and digest (erased: zero salt, the digest it had).
        let (salt, erased) = if f.digested() {
            (f.salt, f.erased().then_some(&f.payload_digest))
        } else {
            (salts.salt(f.seq), None)
        };
        prev = record::encode_digested(
            &mut new,
            FORMAT_VERSION,
            f.seq,
            f.ts_unix_ns,
            f.kind,
            &prev,
            f.payload,
            &salt,
            erased,
        );
        last = Some((f.seq, prev, offset));
        at += f.len();
    }
    let records = last.map_or(0, |(s, _, _)| s);
    let check = verify_bytes(&paths.journal, &new, Ok(None), |s, c| {
        Records::new(&new, s, c)
    })?;
    if let Some(f) = check.problem {
        return Err(Error::io(
            "verify",
            &paths.journal,
            std::io::Error::other(format!(
                "the migrated journal does not verify at offset {}: {} (nothing was replaced; \
                 please report this)",
                f.offset, f.what
            )),
        )
        .into());
    }
    let old_blake3 = content_hash(&old);
    let kept_name = format!(
        "{}.v{}-{}.bin",
        file_name(&paths.journal),
        header.format_version,
        &old_blake3.to_hex()[..16]
    );
    let statement = Statement {
        new: Checkpoint {
            origin: checkpoint::origin_for(session_id),
            size: records,
            hash: prev,
        },
        old_format: header.format_version,
        old_records: records,
        old_head,
        old_file: kept_name.clone(),
        old_blake3,
    };
    let text = match &opts.key {
        Some(k) => statement.signed(k).map_err(MigrateError::Key)?,
        None => statement.body(),
    };
    report.migrated = true;
    report.records = records;
    report.old_head = old_head.to_hex();
    report.new_head = prev.to_hex();
    report.signed = opts.key.is_some();
    if opts.dry_run {
        return Ok(report);
    }

    let mut tmp = paths.journal.clone().into_os_string();
    tmp.push(".migrate");
    let tmp = PathBuf::from(tmp);
    // A temporary left by an interrupted migration holds nothing the journal needs.
    let _ = fs.remove_file(&tmp);
    fs.write_new(&tmp, &new)
        .map_err(|e| Error::io("write", &tmp, e))?;
    let written = read_whole(&tmp)?;
    if written != new {
        let _ = fs.remove_file(&tmp);
        return Err(Error::io(
            "verify",
            &tmp,
            std::io::Error::other("the written file differs from what was written"),
        )
        .into());
    }
    let kept = link_beside(fs, &paths.journal, &sessions.join(&kept_name), &old)?;
    let note = sessions.join(format!(
        "{}.migrated-{}.note",
        file_name(&paths.journal),
        &prev.to_hex()[..16]
    ));
    let _ = fs.remove_file(&note);
    if let Err(e) = fs.write_new(&note, text.as_bytes()) {
        let _ = fs.remove_file(&tmp);
        return Err(Error::io("write", &note, e).into());
    }
    if let Err(e) = fs.rename(&tmp, &paths.journal) {
        // The journal is as it was: a statement naming a journal that is not there would
        // only mislead.
        let _ = fs.remove_file(&tmp);
        let _ = fs.remove_file(&note);
        return Err(Error::io("rename", &paths.journal, e).into());
    }
    // The snapshot first: once the mark names the new head, a snapshot left binding the old
    // chain would make every writer refuse the journal with nothing left to finish.
    crate::journal::repair::set_snapshot_aside(fs, &paths.snapshot, &paths.journal)?;
    if let Some((seq, hash, _)) = last {
        hwm::reset(fs, &paths.journal, Mark { seq, hash })?;
    } else {
        hwm::reset(
            fs,
            &paths.journal,
            Mark {
                seq: 0,
                hash: Hash::ZERO,
            },
        )?;
    }
    paths::sync_dir_with(fs, &sessions)?;
    report.kept = Some(kept);
    report.statement = Some(note);
    Ok(report)
}

/// What a writer does when the high-water mark (or its copy) names another record at the
/// journal's head (`refusal`): if a migration of this journal was interrupted after its rename
/// — the statement written before it, `<journal>.migrated-<head>.note`, is there — the
/// migration is finished as `sjournal migrate` would (the session's locks taken until
/// `deadline`): the snapshot that binds the old chain set aside, then the mark and its copy
/// reset to the head. What it checks comes from the refusal (the seq, the hash the mark names,
/// the journal's head the writer just read), the statement, the mark's copy and the header:
/// no walk of the journal. One `stat` when there is no such statement; nothing when the
/// session has a rescue journal (its events would drop out of the state once the journal is
/// taken again: `repair` merges them). True when the caller should open the journal again: the
/// statement was there and its locks were taken (a concurrent writer may have finished it).
pub fn finish_on_open(
    root: &Root,
    session_id: &str,
    refusal: &crate::journal::error::Corrupt,
    deadline: Option<Instant>,
    fs: &Arc<dyn Fs>,
) -> bool {
    use crate::journal::recovery::Corruption;
    use crate::journal::verify::witness::WitnessKind;
    let Corruption::Replaced {
        seq,
        hash: named,
        found: head,
        by: WitnessKind::Mark | WitnessKind::MarkCopy,
    } = refusal.reason
    else {
        return false;
    };
    let Ok(paths) = root.session(session_id) else {
        return false;
    };
    let sessions = root.sessions_dir();
    let note = sessions.join(format!(
        "{}.migrated-{}.note",
        file_name(&paths.journal),
        &head.to_hex()[..16]
    ));
    if std::fs::symlink_metadata(&note).is_err() || present(&paths.rescue).unwrap_or(true) {
        return false;
    }
    if deadline.is_some_and(|d| Instant::now() >= d) {
        return false;
    }
    let locked = (|| -> Result<bool, MigrateError> {
        let _lock = hold(&**fs, &paths.lock, deadline)?;
        let _rescue_lock = hold(&**fs, &paths.rescue_lock, deadline)?;
        let finish = || -> Result<(), MigrateError> {
            let text =
                crate::storage::read_regular_text(&note, crate::storage::Owner::Me, 1 << 20)?;
            let Ok((st, _)) = Statement::parse(&text) else {
                return Ok(());
            };
            let now = Mark { seq, hash: head };
            let old = Mark {
                seq: st.old_records,
                hash: st.old_head,
            };
            let names_old = |m: Option<Mark>| m.is_none_or(|m| m == now || m == old);
            let mark = hwm::read(&paths.journal).ok().flatten();
            let copy = hwm::read_copy(&paths.journal);
            let binds = st.new.size == seq && st.new.hash == head && old.hash == named;
            if !binds || !names_old(mark) || !names_old(copy) {
                return Ok(());
            }
            let reader = crate::journal::reader::JournalReader::open(&paths.journal, deadline)?;
            let header_ok = reader.header().is_ok_and(|(h, _, _)| {
                // Format 2 too: a migration an older build made to format 2.
                h.format_version >= 2 && h.session_id == session_id
            });
            drop(reader);
            if !header_ok {
                return Ok(());
            }
            crate::journal::repair::set_snapshot_aside(
                fs.as_ref(),
                &paths.snapshot,
                &paths.journal,
            )?;
            hwm::reset(fs.as_ref(), &paths.journal, now)?;
            paths::sync_dir_with(fs.as_ref(), &sessions)?;
            Ok(())
        };
        // Whatever it found, the journal may be open now (a concurrent writer finished it).
        let _ = finish();
        Ok(true)
    })();
    locked.unwrap_or(false)
}

/// Finishes a migration that stopped (a crash, a failed write) after the new journal was
/// renamed over the old one and before its mark was reset: the mark (or its copy) names the
/// old chain's head at the same seq, which makes a writer refuse the journal (the next
/// writer therefore finishes it first: `finish_on_open`; so does `migrate` run again). The
/// mark is reset only when the statement written before the rename binds exactly that: the
/// old head the mark names to the journal's head now. Anything else is left for `verify` and
/// `repair`. True if it finished one.
fn finish_interrupted(
    fs: &dyn Fs,
    sessions: &Path,
    paths: &crate::journal::paths::SessionPaths,
    bytes: &[u8],
    hlen: usize,
    apply: bool,
) -> Result<bool, MigrateError> {
    let Ok((seq, head)) = chain_end(bytes, hlen) else {
        return Ok(false);
    };
    let now = Mark { seq, hash: head };
    let mark = hwm::read(&paths.journal).ok().flatten();
    let copy = hwm::read_copy(&paths.journal);
    if mark.is_none_or(|m| m == now) && copy.is_none_or(|m| m == now) {
        return Ok(false);
    }
    let note = sessions.join(format!(
        "{}.migrated-{}.note",
        file_name(&paths.journal),
        &head.to_hex()[..16]
    ));
    let Ok(text) = std::fs::read_to_string(&note) else {
        return Ok(false);
    };
    let Ok((st, _)) = Statement::parse(&text) else {
        return Ok(false);
    };
    let old = Mark {
        seq: st.old_records,
        hash: st.old_head,
    };
    let binds = st.new.size == seq && st.new.hash == head;
    let names_old = |m: Option<Mark>| m.is_none_or(|m| m == now || m == old);
    if !binds || !names_old(mark) || !names_old(copy) {
        return Ok(false);
    }
    if !apply {
        return Ok(true);
    }
    crate::journal::repair::set_snapshot_aside(fs, &paths.snapshot, &paths.journal)?;
    hwm::reset(fs, &paths.journal, now)?;
    paths::sync_dir_with(fs, sessions)?;
    Ok(true)
}

/// What `verify --migration FILE` found; its JSON form (`verify --json`) is this struct.
#[derive(Debug, Clone, Serialize)]
pub struct MigrationReport {
    pub statement: PathBuf,
    /// Signature fine (or not asked for) and no finding.
    pub ok: bool,
    pub origin: String,
    pub records: u64,
    pub old_head: String,
    pub new_head: String,
    pub signature: SignatureStatus,
    pub signed: bool,
    /// Each thing that does not hold, naming the seq where there is one.
    pub findings: Vec<String>,
    /// Records erased in the current journal since the migration (not in the old one): what
    /// they held is no longer what the old journal holds, and the statement cannot vouch
    /// for what is left of them.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub erased_since: Vec<u64>,
}

impl MigrationReport {
    /// The text form: one line, then one per finding.
    pub fn summary(&self) -> String {
        let sig = match self.signature {
            SignatureStatus::NotChecked if !self.signed => "none",
            SignatureStatus::NotChecked => "not checked (no --pubkey)",
            SignatureStatus::Valid => "valid",
            SignatureStatus::Missing => "MISSING: no signature by that key",
            SignatureStatus::Invalid => "INVALID: the signature does not verify",
        };
        let mut s = format!(
            "{} migration {} ({} records, old head {}, new head {}): {}; signature: {sig}",
            if self.ok { "ok " } else { "BAD" },
            self.statement.display(),
            self.records,
            &self.old_head[..16.min(self.old_head.len())],
            &self.new_head[..16.min(self.new_head.len())],
            match (self.findings.is_empty(), self.erased_since.is_empty()) {
                (true, true) =>
                    "the old journal is kept, and the new one holds the same records".to_owned(),
                (true, false) => format!(
                    "the old journal is kept, and the new one holds the same records but {} \
                     erased since (seq {}): what is left of them is the erasures' word",
                    self.erased_since.len(),
                    self.erased_since
                        .iter()
                        .map(u64::to_string)
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
                (false, _) => "the migration does not check".to_owned(),
            }
        );
        for f in &self.findings {
            s.push_str("\n  ");
            s.push_str(&crate::escape::text(f));
        }
        s
    }
}

/// `verify --migration FILE [--pubkey KEYFILE]` for one session: the statement's signature
/// (if a key is given); the kept old file (named by the statement, beside the journal) has
/// the statement's blake3, verifies as a chain, and its record at the statement's count has
/// the old head; the current journal's record at the statement's count has the new head; and
/// every record up to there has the same seq, timestamp, kind and payload in both (a record
/// erased since the migration is compared on seq, timestamp and kind: its erasure is bound in
/// the journal, which `verify` checks).
pub fn check(
    root: &Root,
    session: &str,
    statement: &Path,
    pubkey: Option<&Path>,
) -> Result<MigrationReport, checkpoint::Error> {
    use crate::storage::{read_regular_text, Owner};
    let text = read_regular_text(statement, Owner::Anyone, 1 << 20)?;
    let (st, parsed) = Statement::parse(&text).map_err(|reason| checkpoint::Error::Checkpoint {
        path: statement.to_owned(),
        reason,
    })?;
    let signature = match pubkey {
        None => SignatureStatus::NotChecked,
        Some(k) => {
            let text = read_regular_text(k, Owner::Anyone, 1 << 20)?;
            let key = checkpoint::verifier(&text).map_err(|reason| checkpoint::Error::Key {
                path: k.to_owned(),
                reason,
            })?;
            match check_signature(&parsed, key) {
                SignatureCheck::Valid => SignatureStatus::Valid,
                SignatureCheck::Missing => SignatureStatus::Missing,
                SignatureCheck::Invalid => SignatureStatus::Invalid,
            }
        }
    };
    let paths = root.existing_session(session)?;
    let mut findings = Vec::new();
    if st.new.origin != checkpoint::origin_for(session) {
        findings.push(format!(
            "the statement is for {:?}, not this session ({:?})",
            st.new.origin,
            checkpoint::origin_for(session)
        ));
    }
    if st.old_records != st.new.size {
        findings.push(format!(
            "the statement names {} old records and {} new ones; a migration keeps every seq",
            st.old_records, st.new.size
        ));
    }
    let old = if st.old_file.contains('/') || st.old_file.starts_with('.') {
        findings.push(format!(
            "the old file's name {:?} is not a file beside the journal",
            st.old_file
        ));
        None
    } else {
        match read_whole(&paths.dir.join(&st.old_file)) {
            Ok(b) => Some(b),
            Err(e) => {
                findings.push(format!("the old journal is not readable: {e}"));
                None
            }
        }
    };
    let new = read_whole(&paths.journal)?;
    let old_records = old.as_deref().and_then(|old| {
        if content_hash(old) != st.old_blake3 {
            findings.push(format!(
                "the old file {} is not the one migrated (its blake3 differs)",
                st.old_file
            ));
        }
        let records = walk(old, "old", st.old_records, &st.old_head, &mut findings)?;
        // The old journal verified as a whole: layouts and erasures too.
        let (h, hlen) = Header::decode(old).ok()?;
        // Up to the end of the records walked (what follows them is not checked here).
        let end = records.last().map_or(hlen, |f| {
            f.bytes.as_ptr() as usize - old.as_ptr() as usize + f.len()
        });
        if let Err(what) = erasures_hold(&old[..end], hlen, h.format_version) {
            findings.push(format!("the old journal does not verify: {what}"));
        }
        Some(records)
    });
    let new_records = walk(&new, "current", st.new.size, &st.new.hash, &mut findings);
    let mut erased_since = Vec::new();
    if let (Some(o), Some(n)) = (old_records, new_records) {
        for (a, b) in o.iter().zip(&n) {
            // A digested old record keeps its digest (the one thing binding a field-erased
            // record's content); an erased one stays erased, with what its erasure left.
            let digest_kept = !a.digested() || a.payload_digest == b.payload_digest;
            let erasure_kept = !a.erased() || (b.erased() && a.payload == b.payload);
            if b.erased() && !a.erased() {
                erased_since.push(a.seq);
            }
            let same = a.seq == b.seq
                && a.ts_unix_ns == b.ts_unix_ns
                && a.kind == b.kind
                && (b.erased() || a.payload == b.payload);
            if !digest_kept || !erasure_kept {
                findings.push(format!(
                    "seq {}: the current journal does not keep the old record's {}",
                    a.seq,
                    if digest_kept {
                        "erasure"
                    } else {
                        "payload digest"
                    }
                ));
            } else if !same {
                findings.push(format!(
                    "seq {}: the record differs between the old journal and the current one \
                     ({})",
                    a.seq,
                    if a.kind != b.kind {
                        "kind"
                    } else if a.ts_unix_ns != b.ts_unix_ns {
                        "timestamp"
                    } else {
                        "payload"
                    }
                ));
            }
        }
    }
    let sig_ok = matches!(
        signature,
        SignatureStatus::NotChecked | SignatureStatus::Valid
    );
    Ok(MigrationReport {
        statement: statement.to_owned(),
        ok: findings.is_empty() && sig_ok,
        origin: st.new.origin.clone(),
        records: st.new.size,
        old_head: st.old_head.to_hex(),
        new_head: st.new.hash.to_hex(),
        signature,
        signed: parsed.note.is_some(),
        findings,
        erased_since,
    })
}

/// Verify's layout and erasure checks over a whole journal whose chain holds (Err: what is
/// wrong, and where).
fn erasures_hold(bytes: &[u8], hlen: usize, version: u16) -> Result<(), String> {
    crate::journal::verify::erasures(bytes, hlen, bytes.len(), version)
        .map(|_| ())
        .map_err(|(offset, _, what)| format!("offset {offset}: {what}"))
}

/// Walks every record of a journal's bytes, checking frames and links, to the exact end of
/// the bytes: the last seq and head, or what is wrong and where.
fn chain_end(bytes: &[u8], hlen: usize) -> Result<(u64, Hash), String> {
    let mut chain = Chain::genesis(genesis_hash(&bytes[..hlen]));
    let mut at = hlen;
    while at < bytes.len() {
        let f = scan::frame(&bytes[at..]).map_err(|e| format!("offset {at}: {e}"))?;
        chain.accept(&f).map_err(|p| format!("offset {at}: {p}"))?;
        at += f.len();
    }
    Ok((chain.last_seq(), chain.prev_hash))
}

/// Walks a journal's chain from its header through record `count`, checking every link and
/// that record `count` has hash `head`; returns the records 1..=count, or None (with a
/// finding) if the chain does not hold.
fn walk<'a>(
    bytes: &'a [u8],
    which: &str,
    count: u64,
    head: &Hash,
    findings: &mut Vec<String>,
) -> Option<Vec<FrameRef<'a>>> {
    let (_, hlen) = match Header::decode(bytes) {
        Ok(h) => h,
        Err(e) => {
            findings.push(format!("the {which} journal's header does not decode: {e}"));
            return None;
        }
    };
    let mut chain = Chain::genesis(genesis_hash(&bytes[..hlen]));
    let mut out = Vec::new();
    let mut at = hlen;
    let mut hash = chain.prev_hash;
    while chain.last_seq() < count {
        let f = match scan::frame(&bytes[at..]) {
            Ok(f) => f,
            Err(e) => {
                findings.push(format!(
                    "the {which} journal ends or is damaged before seq {} (offset {at}: {e})",
                    chain.next_seq
                ));
                return None;
            }
        };
        match chain.accept(&f) {
            Ok(h) => hash = h,
            Err(p) => {
                findings.push(format!("the {which} journal: {p}"));
                return None;
            }
        }
        out.push(f);
        at += f.len();
    }
    if hash != *head {
        findings.push(format!(
            "seq {count}: the {which} journal's head is {}, the statement says {}",
            hash.to_hex(),
            head.to_hex()
        ));
        return None;
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statement_reads_back_and_a_checkpoint_is_not_one() {
        let st = Statement {
            new: Checkpoint {
                origin: checkpoint::origin_for("s"),
                size: 3,
                hash: Hash([1; 32]),
            },
            old_format: 1,
            old_records: 3,
            old_head: Hash([2; 32]),
            old_file: "s.sjl.v1-0011223344556677.bin".into(),
            old_blake3: Hash([3; 32]),
        };
        let (back, parsed) = Statement::parse(&st.body()).unwrap();
        assert_eq!(back, st);
        assert!(parsed.note.is_none());
        let (skey, _) = checkpoint::generate_keys("k").unwrap();
        let (back, parsed) = Statement::parse(&st.signed(&skey).unwrap()).unwrap();
        assert_eq!(back, st);
        assert!(parsed.note.is_some());
        // A plain checkpoint of the same journal is no migration statement.
        assert_eq!(
            Statement::parse(&st.new.body()).unwrap_err(),
            CheckpointError::MissingLine("sjournal migration")
        );
        let bad = st.body().replace("\nold 1 3 ", "\nold 1 x ");
        assert!(Statement::parse(&bad).is_err());
    }
}
