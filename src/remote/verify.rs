//! `verify --remote`: checks a shipped copy trusting nothing but hashes and signatures.
//!
//! For every stream (a host's session's main or rescue journal) under the scope: the header
//! decodes and names a session whose file stem is the key's; segments are contiguous (the
//! first seq of each is the last seq of the one before plus one: a gap is a deleted segment,
//! an overlap a seq in two objects); every frame's length and CRC and every chain link, across
//! objects too (`sj-prev-hash` is the previous segment's head); each segment's metadata
//! (first, last, head, blake3) is what its bytes give; each checkpoint note pins the computed
//! `(last, head)` for the session's origin and, with `--pubkey`, carries a valid signature by
//! one of the keys; quarantine objects hash to the digest in their names; and, on S3, every
//! key has exactly one version and no delete marker (a rewrite or deletion leaves a version
//! behind in a versioned or locked bucket). With a local root whose host id is the stream's, it
//! also says how the local journal relates: in sync, local extends remote, remote extends local,
//! or diverged at seq N. Remote extends local (or the local journal is gone) is a finding: the
//! remote holds records this host acknowledged and shipped, which the local journal lost; the
//! finding names the session, the seqs, and the `sjournal fetch` that rebuilds them.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::Serialize;
use signed_note::{NoteError, StandardVerifier, VerifierList};

use super::error::Result;
use super::layout::{parse_key, Location, Part, StreamKind};
use super::segment::{self, check_body, SegmentMeta};
use super::store::Remote;
use crate::audit::checkpoint;
use crate::format::hash::{content_hash, genesis_hash};
use crate::format::{Hash, Header};
use crate::journal::paths::file_stem;
use crate::journal::{JournalReader, Root};

/// A verifier key, with the name it signs under (`sjournal-<host id>` for shipped keys).
#[derive(Clone)]
pub struct Key {
    pub name: String,
    pub text: String,
}

impl Key {
    /// Reads verifier keys from text: one per non-empty line.
    pub fn parse_all(text: &str) -> std::result::Result<Vec<Key>, checkpoint::CheckpointError> {
        text.lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .map(|l| {
                checkpoint::verifier(l)?;
                let name = l.split('+').next().unwrap_or_default().to_owned();
                Ok(Key {
                    name,
                    text: l.to_owned(),
                })
            })
            .collect()
    }
}

/// What to check besides the bucket itself.
#[derive(Default)]
pub struct Options {
    /// Checkpoints must carry a valid signature by one of these. A key named
    /// `sjournal-<host>` is used only for that host's streams; other keys for any host.
    pub keys: Vec<Key>,
    /// A local root to compare with (its streams of host `local_host`).
    pub local: Option<(Root, String)>,
}

/// The verdict on one stream. `verify --remote --json` prints one per line.
#[derive(Debug, Clone, Default, Serialize)]
pub struct StreamVerdict {
    pub location: Option<Location>,
    pub session_id: Option<String>,
    pub ok: bool,
    pub segments: u64,
    pub records: u64,
    pub last_seq: u64,
    pub head: Option<String>,
    /// What is wrong, one sentence each, naming the object.
    pub findings: Vec<String>,
    /// What was not checked, and why.
    pub notes: Vec<String>,
    /// How the local journal relates: `in sync`, `local extends remote …`, `remote extends
    /// local …`, `diverged at seq N`, `diverged at the header`; None without a local journal.
    pub local: Option<String>,
    /// Set when the local journal diverged (a finding too).
    #[serde(skip)]
    pub local_diverged: bool,
    /// The seqs the remote holds and the local journal lacks (records lost locally: a
    /// rollback, a cut, a deleted journal): a finding.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub local_lacks: Option<SeqRange>,
    /// The command that fetches the shipped copy of the session, when the local journal lacks
    /// records the remote holds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fetch: Option<String>,
    #[serde(skip)]
    pub genesis: Option<Hash>,
    /// Record hashes by seq (index seq − 1), as verified.
    #[serde(skip)]
    pub hashes: Vec<Hash>,
    /// The records erased after they were shipped (`erasure/<seq>` objects), as local verify
    /// reports them on the journal rebuilt with the erasure objects in place.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub erasures: Vec<crate::journal::verify::Erasure>,
    /// The journal's bytes with the erasure objects applied (only when there are some): what
    /// `fetch` writes.
    #[serde(skip)]
    pub rebuilt: Option<Vec<u8>>,
}

/// Seqs `first..=last`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct SeqRange {
    pub first: u64,
    pub last: u64,
}

impl StreamVerdict {
    pub fn summary(&self) -> String {
        let loc = self
            .location
            .as_ref()
            .map(|l| l.display())
            .unwrap_or_default();
        let mut s = if self.ok {
            format!(
                "ok  {loc}: {} segment(s), seq 1..={}, head {}",
                self.segments,
                self.last_seq,
                self.head.as_deref().unwrap_or("-")
            )
        } else {
            format!("BAD {loc}: {}", self.findings.join("; "))
        };
        if let Some(l) = &self.local {
            s.push_str(&format!(" [local: {l}]"));
        }
        for n in &self.notes {
            s.push_str(&format!(" ({n})"));
        }
        for e in &self.erasures {
            s.push_str(&format!(
                "\n    erased seq {}{}: digest {}, reason {:?}, recorded at seq {}",
                e.seq,
                e.field
                    .as_deref()
                    .map(|f| format!(" field {f}"))
                    .unwrap_or_default(),
                e.erased_digest,
                e.reason,
                e.recorded_at
            ));
        }
        s
    }
}

#[derive(Default)]
struct Parts {
    header: bool,
    segments: Vec<u64>,
    quarantine: Vec<String>,
    erasures: Vec<u64>,
    other: Vec<String>,
    /// key -> (versions, delete markers)
    versions: BTreeMap<String, (u32, u32)>,
}

/// Verifies every stream under the remote's scope. Keys outside the layout are reported as a
/// verdict without a location.
pub async fn verify(remote: &Remote, opts: &Options) -> Result<Vec<StreamVerdict>> {
    let keys = remote.list(remote.scope()).await?;
    let versions = remote.versions(remote.scope()).await?;
    let mut streams: BTreeMap<Location, Parts> = BTreeMap::new();
    let mut stray = Vec::new();
    for k in &keys {
        match parse_key(k) {
            Some((loc, part)) => {
                let p = streams.entry(loc).or_default();
                match part {
                    Part::Header => p.header = true,
                    Part::Segment(f) => p.segments.push(f),
                    Part::Quarantine(n) => p.quarantine.push(n),
                    Part::Erasure(seq) => p.erasures.push(seq),
                    Part::Other(o) => p.other.push(o),
                }
            }
            None => stray.push(k.clone()),
        }
    }
    if let Some(vs) = &versions {
        for v in vs {
            if let Some((loc, _)) = parse_key(&v.key) {
                let e = streams
                    .entry(loc)
                    .or_default()
                    .versions
                    .entry(v.key.clone())
                    .or_default();
                if v.delete_marker {
                    e.1 += 1;
                } else {
                    e.0 += 1;
                }
            }
        }
    }
    let mut out = Vec::new();
    for (loc, mut parts) in streams {
        parts.segments.sort();
        let mut v = verify_stream(remote, &loc, &parts, opts).await?;
        if versions.is_none() {
            v.notes
                .push("object versions not checked: this store keeps none".into());
        }
        if let Some((root, host)) = &opts.local {
            if *host == loc.host {
                compare_local(root, remote.url(), &loc, &mut v)?;
            }
        }
        v.ok = v.findings.is_empty();
        out.push(v);
    }
    if !stray.is_empty() {
        out.push(StreamVerdict {
            findings: stray
                .iter()
                .map(|k| format!("{k}: an object outside the sjournal layout"))
                .collect(),
            ..Default::default()
        });
    }
    Ok(out)
}

fn key_for(loc: &Location, k: &Key) -> bool {
    match k.name.strip_prefix("sjournal-") {
        Some(h) => h == loc.host,
        None => true,
    }
}

/// Verifies one stream as [`verify`] does (object versions left out), given its keys: whether
/// it has a header, its segments' first seqs (sorted) and its erasure objects' seqs.
pub(crate) async fn verify_one(
    remote: &Remote,
    loc: &Location,
    header: bool,
    segments: &[u64],
    erasures: &[u64],
    opts: &Options,
) -> Result<StreamVerdict> {
    let parts = Parts {
        header,
        segments: segments.to_vec(),
        erasures: erasures.to_vec(),
        ..Default::default()
    };
    let mut v = verify_stream(remote, loc, &parts, opts).await?;
    v.ok = v.findings.is_empty();
    Ok(v)
}

async fn verify_stream(
    remote: &Remote,
    loc: &Location,
    parts: &Parts,
    opts: &Options,
) -> Result<StreamVerdict> {
    let mut v = StreamVerdict {
        location: Some(loc.clone()),
        ..Default::default()
    };
    for (key, (n, deleted)) in &parts.versions {
        if *n > 1 {
            v.findings.push(format!(
                "{key} has {n} versions: the object was rewritten after it was created"
            ));
        }
        if *deleted > 0 {
            v.findings
                .push(format!("{key} was deleted (a delete marker is there)"));
        }
    }
    for o in &parts.other {
        v.findings.push(format!(
            "{}/{o}: an object outside the sjournal layout",
            loc.base()
        ));
    }
    // Header, then segments: the stream's bytes, for the erasures.
    let mut whole = Vec::new();
    let session_id = if !parts.header {
        v.findings.push(format!("{} is missing", loc.header_key()));
        None
    } else {
        match remote.get(&loc.header_key()).await? {
            None => {
                v.findings
                    .push(format!("{} vanished while verifying", loc.header_key()));
                None
            }
            Some(o) => match Header::decode(&o.bytes) {
                Ok((h, len)) if len == o.bytes.len() => {
                    whole.extend_from_slice(&o.bytes);
                    let g = genesis_hash(&o.bytes);
                    v.genesis = Some(g);
                    if file_stem(&h.session_id).ok().as_deref() != Some(loc.stem.as_str()) {
                        v.findings.push(format!(
                            "{}: the header names session {:?}, whose file stem is not {:?}: \
                             the header was moved or replaced",
                            loc.header_key(),
                            h.session_id,
                            loc.stem
                        ));
                    }
                    if o.meta.get("sj-genesis").is_some_and(|m| *m != g.to_hex()) {
                        v.findings.push(format!(
                            "{}: metadata sj-genesis is not the header's genesis hash",
                            loc.header_key()
                        ));
                    }
                    v.session_id = Some(h.session_id.clone());
                    Some(h.session_id)
                }
                Ok(_) => {
                    v.findings
                        .push(format!("{}: bytes follow the header", loc.header_key()));
                    None
                }
                Err(e) => {
                    v.findings
                        .push(format!("{}: not a journal header: {e}", loc.header_key()));
                    None
                }
            },
        }
    };
    let keys: Vec<&Key> = opts.keys.iter().filter(|k| key_for(loc, k)).collect();
    if opts.keys.is_empty() {
        v.notes
            .push("checkpoint signatures not checked (no --pubkey)".into());
    } else if keys.is_empty() {
        v.findings.push(format!(
            "no --pubkey key is for host {:?} (keys named sjournal-<host> apply to that host only)",
            loc.host
        ));
    }
    // Segments.
    let mut expected = 1u64;
    let mut prev = v.genesis;
    for &first in &parts.segments {
        let key = loc.segment_key(first);
        if first > expected {
            v.findings.push(format!(
                "seq {expected}..={} are in no object (a segment before {key} was deleted)",
                first - 1
            ));
            prev = None;
        } else if first < expected {
            v.findings.push(format!(
                "{key} starts at seq {first}, inside the segment before it (which ends at seq {}): \
                 seqs in two objects",
                expected - 1
            ));
            prev = None;
        }
        let Some(obj) = remote.get(&key).await? else {
            v.findings.push(format!("{key} vanished while verifying"));
            continue;
        };
        v.segments += 1;
        let meta = match SegmentMeta::from_meta(&obj.meta) {
            Ok(m) => m,
            Err(e) => {
                v.findings
                    .push(format!("{key}: {e} (not written by sjournal ship)"));
                // Keep checking the chain through it, from its own bytes.
                let start = prev.unwrap_or(Hash::ZERO);
                match check_body(&obj.bytes, first, start) {
                    Ok(c) => {
                        expected = c.last + 1;
                        prev = Some(c.head);
                    }
                    Err(_) => prev = None,
                }
                continue;
            }
        };
        if meta.first != first {
            v.findings
                .push(format!("{key}: metadata sj-first-seq is {}", meta.first));
        }
        let link = prev.unwrap_or(meta.prev_hash);
        if meta.prev_hash != link {
            v.findings.push(format!(
                "{key}: metadata sj-prev-hash is not the head of the segment before it"
            ));
        }
        match check_body(&obj.bytes, first, link) {
            Err(e) => {
                v.findings.push(format!("{key}: {e}"));
                prev = Some(meta.head);
                expected = meta.last + 1;
                continue;
            }
            Ok(c) => {
                if c.last != meta.last {
                    v.findings.push(format!(
                        "{key}: metadata sj-last-seq is {}, the records end at seq {}",
                        meta.last, c.last
                    ));
                }
                if c.head != meta.head {
                    v.findings.push(format!(
                        "{key}: metadata sj-head {} is not the computed head {}",
                        meta.head, c.head
                    ));
                }
                if content_hash(&obj.bytes) != meta.blake3 {
                    v.findings.push(format!(
                        "{key}: metadata sj-blake3 is not the body's blake3"
                    ));
                }
                if let Some(sid) = &session_id {
                    check_note(
                        &mut v,
                        &key,
                        &meta.checkpoint,
                        sid,
                        loc.kind,
                        c.last,
                        c.head,
                        &keys,
                    );
                }
                whole.extend_from_slice(&obj.bytes);
                v.records += c.records;
                v.last_seq = c.last;
                v.head = Some(c.head.to_hex());
                if v.hashes.len() as u64 == first - 1 {
                    v.hashes.extend(&c.hashes);
                }
                expected = c.last + 1;
                prev = Some(c.head);
            }
        }
    }
    if parts.segments.is_empty() {
        v.head = v.genesis.map(|g| g.to_hex());
    }
    if !parts.erasures.is_empty() {
        check_erasures(remote, loc, parts, &mut v, whole).await?;
    } else if v.genesis.is_some() {
        // No erasure objects: every frame must still have the header's layout, and a frame
        // shipped erased must be bound by its chained `sjournal.erased` record, as local
        // verify checks (over the segments whose frames checked: `whole` holds only those).
        if let Ok((h, hlen)) = Header::decode(&whole) {
            match crate::journal::verify::erasures(&whole, hlen, whole.len(), h.format_version) {
                Ok(list) => v.erasures = list,
                Err((offset, seq, what)) => v.findings.push(format!(
                    "{}: at byte {offset} of the stream (seq {seq}): {what}",
                    loc.display()
                )),
            }
        }
    }
    // Quarantine evidence.
    for name in &parts.quarantine {
        let key = loc.quarantine_key(name);
        let Some(obj) = remote.get(&key).await? else {
            continue;
        };
        let digest = content_hash(&obj.bytes).to_hex();
        let named = name
            .strip_suffix(".bin")
            .and_then(|n| n.rsplit_once('-'))
            .map(|(_, d)| d.to_owned());
        if named.as_deref() != Some(&digest[..16]) {
            v.findings.push(format!(
                "{key}: the bytes' blake3 {} is not the digest in the file name",
                &digest[..16]
            ));
        }
    }
    Ok(v)
}

/// Applies the stream's erasure objects to its bytes (header and segments, `whole`) and
/// verifies the result as local verify does: each erased record must be bound by its chained
/// `sjournal.erased` record, and each erasure object must name that record (`sj-erased-by`).
async fn check_erasures(
    remote: &Remote,
    loc: &Location,
    parts: &Parts,
    v: &mut StreamVerdict,
    whole: Vec<u8>,
) -> Result<()> {
    if !v.findings.is_empty() || v.genesis.is_none() {
        v.notes
            .push("erasure objects not checked: the segments have findings".into());
        return Ok(());
    }
    let mut objects = BTreeMap::new();
    for &seq in &parts.erasures {
        let key = loc.erasure_key(seq);
        match remote.get(&key).await? {
            Some(o) => {
                objects.insert(seq, (key, o));
            }
            None => v.findings.push(format!("{key} vanished while verifying")),
        }
    }
    let Ok((_, hlen)) = Header::decode(&whole) else {
        return Ok(());
    };
    let (rebuilt, applied, findings) = super::erasure::apply(&whole, hlen, &v.hashes, &objects);
    v.findings.extend(findings);
    let name = match loc.kind {
        StreamKind::Main => format!("{}.sjl", loc.stem),
        StreamKind::Rescue => format!("{}.rescue.sjl", loc.stem),
    };
    let report = crate::journal::verify::verify_bytes(
        std::path::Path::new(&name),
        &rebuilt,
        Ok(None),
        |start, chain| crate::journal::reader::Records::new(&rebuilt, start, chain),
    )?;
    if let Some(p) = &report.problem {
        v.findings.push(format!(
            "{}: with the erasure objects in place, the journal does not verify at seq {}: {}",
            loc.display(),
            p.seq,
            p.what
        ));
        return Ok(());
    }
    for a in &applied {
        let recorded = report
            .erasures
            .iter()
            .find(|e| e.seq == a.seq)
            .map(|e| e.recorded_at);
        if a.erased_by != recorded {
            v.findings.push(format!(
                "{}: metadata sj-erased-by is {}, the record's erasure is recorded at seq {}",
                loc.erasure_key(a.seq),
                a.erased_by.map_or("missing".into(), |s| s.to_string()),
                recorded.map_or("-".into(), |s| s.to_string())
            ));
        }
    }
    v.erasures = report.erasures;
    v.rebuilt = Some(rebuilt);
    Ok(())
}

#[allow(clippy::too_many_arguments)]
pub(crate) fn check_note(
    v: &mut StreamVerdict,
    key: &str,
    note: &str,
    session_id: &str,
    kind: StreamKind,
    last: u64,
    head: Hash,
    keys: &[&Key],
) {
    let parsed = match checkpoint::parse(note) {
        Ok(p) => p,
        Err(e) => {
            v.findings.push(format!(
                "{key}: the checkpoint in sj-checkpoint is unreadable: {e}"
            ));
            return;
        }
    };
    let cp = &parsed.checkpoint;
    let origin = segment::origin(session_id, kind);
    if cp.origin != origin || cp.size != last || cp.hash != head {
        v.findings.push(format!(
            "{key}: the checkpoint pins ({}, seq {}, {}), the segment is ({origin}, seq {last}, {head})",
            cp.origin, cp.size, cp.hash
        ));
    }
    if keys.is_empty() {
        return;
    }
    let Some(n) = &parsed.note else {
        v.findings
            .push(format!("{key}: the checkpoint is not signed"));
        return;
    };
    let verifiers: Vec<Box<dyn signed_note::Verifier>> = keys
        .iter()
        .filter_map(|k| StandardVerifier::new(&k.text).ok())
        .map(|k| Box::new(k) as Box<dyn signed_note::Verifier>)
        .collect();
    match n.verify(&VerifierList::new(verifiers)) {
        Ok(_) => {}
        Err(NoteError::UnverifiedNote) => v.findings.push(format!(
            "{key}: the checkpoint carries no signature by the given key(s)"
        )),
        Err(e) => v
            .findings
            .push(format!("{key}: BAD SIGNATURE on the checkpoint: {e}")),
    }
}

/// The URL of a session's shipped copy (both its streams), for `sjournal fetch`: the
/// destination part of `url` (everything before its `v1/` scope) and the session's keys.
pub(crate) fn session_url(url: &str, loc: &Location) -> String {
    let main = Location::new(&loc.host, &loc.stem, StreamKind::Main);
    // The scope starts at the first `v1` path component after the bucket (s3) or the
    // directory's root (file), as `Remote::open` splits it.
    let (scheme, rest) = url.split_once("://").unwrap_or(("", url));
    let skip = match scheme {
        "s3" => rest.find('/').unwrap_or(rest.len()),
        _ => 0,
    };
    let (head, path) = rest.split_at(skip);
    let mut kept = Vec::new();
    for c in path.split('/') {
        if c == super::layout::LAYOUT_VERSION {
            break;
        }
        kept.push(c);
    }
    let dest = format!("{scheme}://{head}{}", kept.join("/"));
    format!("{}/{}", dest.trim_end_matches('/'), main.base())
}

/// The findings for records the remote holds and the local journal lacks.
fn lacks(v: &mut StreamVerdict, url: &str, loc: &Location, path: &std::path::Path, from: u64) {
    let to = v.hashes.len() as u64;
    let session = v.session_id.clone().unwrap_or_else(|| loc.stem.clone());
    let fetch = format!("sjournal fetch {} --into DIR", session_url(url, loc));
    let local = if from == 1 {
        format!("missing (no {})", path.display())
    } else {
        format!("ends at seq {}", from - 1)
    };
    v.findings.push(format!(
        "the local journal of session {session:?} ({} stream) {local}: it lacks seq {from}..={to}, \
         which the remote holds (records lost locally: a rollback, a cut or a deletion); `{fetch}` \
         rebuilds the shipped copy to compare or restore from",
        loc.kind.as_str()
    ));
    v.local_lacks = Some(SeqRange {
        first: from,
        last: to,
    });
    v.fetch = Some(fetch);
}

/// True if a copy `repair` kept of the stream's journal (`<journal>.merged-*.bin` for a rescue
/// journal it merged, `<journal>.damaged-*.bin` for a journal it replaced) holds every record
/// the remote holds: the local journal did not lose them, repair moved them.
fn kept_by_repair(journal: &std::path::Path, v: &StreamVerdict) -> bool {
    let (Some(dir), Some(name)) = (journal.parent(), journal.file_name()) else {
        return false;
    };
    let name = name.to_string_lossy();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return false;
    };
    entries.flatten().any(|e| {
        let n = e.file_name().to_string_lossy().into_owned();
        let kept = n.strip_prefix(&*name).is_some_and(|r| {
            (r.starts_with(".merged-") || r.starts_with(".damaged-")) && r.ends_with(".bin")
        });
        // Read only if it is a regular file, opened without waiting (a FIFO by that name
        // must not hang verify).
        kept && crate::storage::read_regular(&e.path(), crate::storage::Owner::Anyone, u64::MAX)
            .is_ok_and(|b| holds_remote(&b, v))
    })
}

/// True if journal bytes `b` begin with the remote stream's records: same genesis, same hash
/// at every seq the remote holds.
fn holds_remote(b: &[u8], v: &StreamVerdict) -> bool {
    let Ok((_, hlen)) = Header::decode(b) else {
        return false;
    };
    let genesis = genesis_hash(&b[..hlen]);
    if v.genesis.is_some_and(|g| g != genesis) {
        return false;
    }
    let records = crate::journal::reader::Records::new(
        b,
        hlen,
        crate::journal::scan::Chain::genesis(genesis),
    );
    let mut n = 0;
    for r in records {
        let Ok(rec) = r else { break };
        match v.hashes.get(rec.seq as usize - 1) {
            Some(h) if *h == rec.hash => n = rec.seq,
            Some(_) => return false,
            None => break,
        }
    }
    n == v.hashes.len() as u64
}

/// Compares the local journal of the stream, if the root has one.
fn compare_local(root: &Root, url: &str, loc: &Location, v: &mut StreamVerdict) -> Result<()> {
    let name = match loc.kind {
        StreamKind::Main => format!("{}.sjl", loc.stem),
        StreamKind::Rescue => format!("{}.rescue.sjl", loc.stem),
    };
    let path: PathBuf = root.sessions_dir().join(name);
    if !path.exists() {
        // This host shipped the stream, and its journal is gone: unless repair moved it aside
        // whole, its records were lost here.
        if !v.hashes.is_empty() {
            if kept_by_repair(&path, v) {
                v.local = Some("kept aside by `sjournal repair` (merged into the journal)".into());
            } else {
                v.local = Some("missing".into());
                lacks(v, url, loc, &path, 1);
            }
        }
        return Ok(());
    }
    let reader = JournalReader::open(&path, None)?;
    let Ok((_, _, genesis)) = reader.header() else {
        v.local = Some("diverged at the header (the local header is damaged)".into());
        v.local_diverged = true;
        return Ok(());
    };
    if v.genesis.is_some_and(|g| g != genesis) {
        v.local = Some("diverged at the header (the local journal is another journal)".into());
        v.local_diverged = true;
    } else {
        let mut local_last = 0u64;
        let mut diverged = None;
        let mut damaged = None;
        for r in reader.records()? {
            match r {
                Ok(rec) => {
                    local_last = rec.seq;
                    if let Some(h) = v.hashes.get(rec.seq as usize - 1) {
                        if *h != rec.hash {
                            diverged = Some(rec.seq);
                            break;
                        }
                    }
                }
                Err(s) => {
                    damaged = Some(s.offset);
                    break;
                }
            }
        }
        let remote_last = v.hashes.len() as u64;
        v.local = Some(match (diverged, damaged) {
            (Some(n), _) => {
                v.local_diverged = true;
                format!("diverged at seq {n}")
            }
            (None, Some(off)) if local_last < remote_last => {
                v.local_diverged = true;
                format!(
                    "diverged at seq {}: the local journal is damaged at offset {off}, the remote has \
                     seq 1..={remote_last} intact (`sjournal fetch` restores it)",
                    local_last + 1
                )
            }
            _ if local_last > remote_last => format!(
                "local extends remote ({} record(s) not shipped yet)",
                local_last - remote_last
            ),
            _ if local_last < remote_last => {
                lacks(v, url, loc, &path, local_last + 1);
                format!(
                    "remote extends local (the local journal ends at seq {local_last}, the remote at seq {remote_last})"
                )
            }
            _ => "in sync".into(),
        });
    }
    if v.local_diverged {
        v.findings.push(format!(
            "the local journal {}: {}",
            path.display(),
            v.local.as_deref().unwrap_or_default()
        ));
    }
    Ok(())
}
