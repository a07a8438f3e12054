//! What writing commands print: where a record landed (`append`, `context set|clear`, `slot
//! set`, `list push|clear`), and the summaries of `import`, `flush`, `checkpoint` and
//! `snapshot`.

use std::path::Path;

use serde::Serialize;

use crate::journal::{Appended, MergeReport, PendingSpool};

/// `append`: the record is durable in the session's journal (exit 0).
///
/// `{"seq": 7, "hash": "<64 hex digits>"}`: its seq and its chain hash.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AppendedLine {
    pub seq: u64,
    pub hash: String,
}

impl From<&Appended> for AppendedLine {
    fn from(a: &Appended) -> Self {
        AppendedLine {
            seq: a.seq,
            hash: a.hash.to_hex(),
        }
    }
}

/// `context set|clear`, `slot set`, `list push|clear`: the record is durable in the
/// session's journal (exit 0).
///
/// `{"seq": 7}`: its seq (what `slot set --expect-seq` compares against).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SeqLine {
    pub seq: u64,
}

/// Any writing command, when the journal is damaged and the record went to the session's
/// rescue journal instead (exit 1).
///
/// `{"seq": 1|null, "hash": "<hex>"|null, "rescued": true, "rescue_journal": "<path>"}`:
/// the record's seq and hash in the rescue journal.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RescuedLine<'a> {
    pub seq: Option<u64>,
    pub hash: Option<String>,
    /// Always true.
    pub rescued: bool,
    pub rescue_journal: &'a Path,
}

impl<'a> RescuedLine<'a> {
    pub fn new(first: Option<&Appended>, rescue_journal: &'a Path) -> Self {
        RescuedLine {
            seq: first.map(|a| a.seq),
            hash: first.map(|a| a.hash.to_hex()),
            rescued: true,
            rescue_journal,
        }
    }
}

/// Any writing command, when the journal could not take the record now and it was spooled,
/// to be merged by the next writer, reader or `flush` (exit 1).
///
/// `{"spooled": true, "spool_file": "<path>"|null, "fallback": bool, "reason": "<why>"}`;
/// `fallback` is true when the spool file is outside the root (less durable).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SpooledLine<'a> {
    /// Always true.
    pub spooled: bool,
    pub spool_file: Option<&'a Path>,
    pub fallback: bool,
    pub reason: &'a str,
}

/// `import --json`: what was imported.
///
/// `{"session", "appended", "events", "system", "first_seq", "last_seq", "head",
/// "skipped_system", "already_present", "syncs"}`: `appended` = `events` + `system`;
/// `first_seq`, `last_seq` and `head` (the chain hash after the last record, hex) are null
/// when nothing was appended; `skipped_system` counts the system records left out;
/// `already_present` the export lines the session already held; `syncs` the fsyncs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ImportSummary<'a> {
    pub session: &'a str,
    pub appended: u64,
    pub events: u64,
    pub system: u64,
    pub first_seq: Option<u64>,
    pub last_seq: Option<u64>,
    pub head: Option<String>,
    pub skipped_system: u64,
    /// Export lines whose record the session already held (imported before): not imported.
    pub already_present: u64,
    /// Erased records, the records binding them, and the system records after the first of
    /// them, left out (`--skip-erased`).
    pub skipped_erased: u64,
    pub syncs: usize,
}

/// `flush --json`: one line per session.
///
/// `{"session", "merged", "merged_records", "merged_fallback", "settled", "damaged":
/// ["<file>"..], "pending", "why", "warnings": [".."]}`: spool files merged (and their
/// records; those from the fallback spool), intents settled, files set aside as damaged,
/// files still pending and why (null if none), and warnings.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FlushSummary<'a> {
    pub session: &'a str,
    pub merged: usize,
    pub merged_records: u64,
    pub merged_fallback: usize,
    pub settled: usize,
    pub damaged: &'a [String],
    /// Spool files refused as not the user's own (set aside as `.untrusted`).
    pub untrusted: &'a [String],
    pub pending: usize,
    pub why: Option<&'a str>,
    pub warnings: &'a [String],
}

impl<'a> FlushSummary<'a> {
    pub fn new(
        session: &'a str,
        merged: &'a MergeReport,
        pending: usize,
        why: Option<&'a str>,
    ) -> Self {
        FlushSummary {
            session,
            merged: merged.merged.len(),
            merged_records: merged.merged_records,
            merged_fallback: merged.merged_fallback,
            settled: merged.settled.len(),
            damaged: &merged.damaged,
            untrusted: &merged.untrusted,
            pending,
            why,
            warnings: &merged.warnings,
        }
    }
}

/// `verify --all --json`, `flush --json`: a spool file or directory sjournal refuses to
/// merge from (a finding, exit 1).
///
/// `{"refused_spool": <journal::spool::RefusedSpool>}`.
#[derive(Debug, Clone, Serialize)]
pub struct RefusedSpoolLine<'a> {
    pub refused_spool: &'a crate::journal::spool::RefusedSpool,
}

/// `verify --json`, after the journal reports: a session with spooled events not yet in
/// its journal (a finding, exit 1).
///
/// `{"session", "pending_spool": [<journal::PendingSpool>..]}`.
#[derive(Debug, Clone, Serialize)]
pub struct PendingSpoolLine<'a> {
    pub session: &'a str,
    pub pending_spool: &'a [PendingSpool],
}

/// `verify --digests --json`, after a journal's report: what the digest check found.
///
/// `{"path", "digests": <audit::digests::DigestReport>}`.
#[derive(Debug, Clone, Serialize)]
pub struct VerifyDigestsLine<'a> {
    pub path: &'a std::path::Path,
    pub digests: &'a crate::audit::digests::DigestReport,
}

/// `verify --json`, after a journal's line when it holds `sjournal.redacted` records:
/// `{"path", "redactions": <redact::Summary>}`.
#[derive(Debug, Clone, Serialize)]
pub struct VerifyRedactionsLine<'a> {
    pub path: &'a std::path::Path,
    pub redactions: &'a crate::redact::Summary,
}

/// `checkpoint --json`: the checkpoint of a journal's head.
///
/// `{"origin", "size", "hash", "signed", "note"}`: `size` is the last seq, `hash` the chain
/// hash after it (hex), `note` the checkpoint text (a signed note when `signed`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CheckpointLine<'a> {
    pub origin: &'a str,
    pub size: u64,
    pub hash: String,
    pub signed: bool,
    pub note: &'a str,
}

/// `snapshot`: one line per snapshot written.
///
/// `{"session", "seq", "state_hash", "bytes"}`: the last record the snapshot covers, the
/// state hash there (hex) and the file's size.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SnapshotLine<'a> {
    pub session: &'a str,
    pub seq: u64,
    pub state_hash: String,
    pub bytes: u64,
}

impl<'a> SnapshotLine<'a> {
    pub fn new(session: &'a str, w: &crate::snapshot::Written) -> Self {
        SnapshotLine {
            session,
            seq: w.seq,
            state_hash: w.state_hash.to_hex(),
            bytes: w.bytes,
        }
    }
}
