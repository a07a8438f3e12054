//! Folds: journals written with fixed timestamps, records made from payloads, full replays.

use sjournal::fold::{RecordView, State};
use sjournal::journal::{JournalReader, Root, Writer, WriterOptions};

/// A fresh root in a temporary directory (removed when dropped).
pub fn temp_root() -> (tempfile::TempDir, Root) {
    let dir = super::scratch();
    let root = Root::new(dir.path().join("root"));
    (dir, root)
}

/// Appends `records` (kind, payload) to a session's journal in batches of 16 (one write and
/// one fsync each); the records of batch `i` get the timestamp `base_ns + i` seconds.
pub fn write_journal(root: &Root, session: &str, records: &[(String, Vec<u8>)], base_ns: i64) {
    let mut w = Writer::open(root, session, &WriterOptions::default()).unwrap();
    for (i, chunk) in records.chunks(16).enumerate() {
        let items: Vec<(&str, &[u8])> = chunk
            .iter()
            .map(|(k, p)| (k.as_str(), p.as_slice()))
            .collect();
        w.append_batch_at(base_ns + i as i64 * 1_000_000_000, &items)
            .unwrap();
    }
}

/// An event record for a JSON payload: kind from `hook_event_name` (else "event").
pub fn event(raw: &str) -> (String, Vec<u8>) {
    let v: serde_json::Value = serde_json::from_str(raw).unwrap_or_default();
    let kind = v
        .get("hook_event_name")
        .or_else(|| v.get("hookName"))
        .and_then(|k| k.as_str())
        .filter(|k| sjournal::format::record::valid_kind(k))
        .unwrap_or("event")
        .to_owned();
    let payload = sjournal::fold::digest::encode_event(&kind, raw);
    (kind, payload)
}

/// A system record.
pub fn system<T: serde::Serialize>(kind: &str, v: &T) -> (String, Vec<u8>) {
    (kind.to_owned(), sjournal::format::payload::encode_system(v))
}

/// A full replay of a session's journal, without any snapshot.
pub fn replay(root: &Root, session: &str) -> State {
    let r = JournalReader::open(&root.session(session).unwrap().journal, None).unwrap();
    let mut s = State::new();
    for rec in r.records().unwrap() {
        s.apply(&RecordView::from(&rec.unwrap()));
    }
    s
}
