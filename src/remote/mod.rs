//! Beyond one machine: journals shipped to object storage, verified there, fetched back and
//! indexed into PostgreSQL (built with the `remote` cargo feature). The bucket is the system
//! of record; it holds the journal's own bytes, never re-encoded, as create-only objects (S3
//! `If-None-Match: *`, `object_store`'s `PutMode::Create`; the static-CT / Tessera pattern),
//! and auditors trust only hashes and signatures, not the server.
//!
//! - [`ship`]: sealed segments of acknowledged records, one create-only object each, with a
//!   durable local cursor; exactly once by construction (a refused create is answered by
//!   reading the object and comparing bytes).
//! - [`verify`]: contiguity, every CRC and chain link, heads, checkpoint signatures, one
//!   version per key; and how a local journal relates to the remote one.
//! - [`fetch`]: rebuilds the journals byte for byte.
//! - [`index`]: a rebuildable PostgreSQL read model of records and the facts the fold extracts.
//!
//! The hook never calls any of this: shipping is its own command (or a detached process
//! spawned after a session's last event, see [`spawn`]).
//!
//! # Layout
//!
//! Under the destination `s3://BUCKET/PREFIX` (or `file:///DIR`; [`store`]):
//!
//! ```text
//! v1/hosts/<host>/sessions/<stem>/header                        the header bytes (offset 0 .. header_len)
//! v1/hosts/<host>/sessions/<stem>/seg/<first seq, 20 digits>    record frames first..=last, back to back
//! v1/hosts/<host>/sessions/<stem>/quarantine/<file name>        a quarantine file's bytes (evidence)
//! v1/hosts/<host>/sessions/<stem>/rescue/header                 the same three for the rescue journal
//! v1/hosts/<host>/sessions/<stem>/rescue/seg/<first seq>
//! v1/hosts/<host>/sessions/<stem>/rescue/quarantine/<file name>
//! ```
//!
//! `header` followed by every `seg/*` in key order (zero-padded, so lexicographic = numeric)
//! is **byte for byte the local journal** up to the last shipped record. `<stem>` is the
//! session's file stem; `<host>` is the shipping machine's host id ([`identity`]):
//! `[remote] host_id` in `<root>/config.toml`, else `<root>/remote/host-id`, made once as the
//! short host name and 8 random hex digits (1–128 of `[A-Za-z0-9_-]`). Keys are thus
//! `(host, stem, first seq)`: the idempotency key of a segment.
//!
//! # Object metadata
//!
//! S3 user metadata (`x-amz-meta-*`), immutable with the object; the directory backend keeps
//! the same map as JSON in a `<key>.sjmeta` sidecar.
//!
//! | object | key | value |
//! |---|---|---|
//! | all | `sj-format` | `1` |
//! | header | `sj-genesis` | hex of the genesis hash |
//! | header, quarantine | `sj-blake3` | hex of the unkeyed blake3 of the bytes |
//! | segment | `sj-first-seq`, `sj-last-seq` | decimal |
//! | segment | `sj-prev-hash` | hex of record `first`'s `prev_hash`: the link into the segment (= the previous segment's `sj-head`, or the genesis hash) |
//! | segment | `sj-head` | hex of the record hash of record `last` |
//! | segment | `sj-blake3` | hex of the unkeyed blake3 of the body |
//! | segment | `sj-checkpoint` | base64 of a C2SP signed note (`audit::checkpoint`) of `(origin, last, head)`, signed by the host key; the origin is the session's checkpoint origin, with `/rescue` appended for a rescue journal |
//!
//! The host key is `<root>/remote/host.key` (made once, named `sjournal-<host id>`; the
//! verifier key beside it, `host.key.pub`, is what auditors pass to `--pubkey`), or
//! `[remote] sign_key`. AWS limits user metadata to 2 KiB: a session id over about 1,500
//! bytes of printable ASCII makes the note too long for AWS (other stores accept it).
//!
//! # Segments and what is shipped
//!
//! A segment holds at most `SEGMENT_MAX_BYTES` (4 MiB) of frames, or one larger frame alone.
//! Only records that are complete and valid (CRC, seq, chain) from the header on are shipped,
//! after an `fdatasync` of the journal (so a record whose writer had not yet synced it is
//! durable before it leaves): nothing past a torn tail, which recovery may still cut.
//! Recovery never cuts a valid record, so shipped bytes are never cut later. Quarantine files
//! are shipped as they are, under their own names (which carry their offset and blake3
//! prefix).
//!
//! # The cursor
//!
//! `<root>/remote/cursors/<16 hex of blake3(URL)>/<stem>[.rescue].cursor` (directories 0700,
//! files 0600, symlinks refused; a `dest` file names the URL):
//!
//! ```text
//! {"v":1,"genesis":"<hex>","last_seq":N,"end":OFFSET,"head":"<hex>","quarantine":["<name>",…]}
//! <crc32 of the line above, 8 hex digits>
//! ```
//!
//! Written to a temporary file, fsynced, renamed into place, directory fsynced. A cursor that
//! fails its CRC is ignored (shipping then compares with the remote instead). A ship cursor is
//! also one of the journal's witnesses (`journal-format.md`, "Witnesses"): `verify` and `ship`
//! report a journal that no longer holds what it names.
//!
//! # Ship, exactly once
//!
//! 1. Map the journal (shared lock), `fdatasync` it, and read every record from the header,
//!    checking it. The journal must still hold record `cursor.last_seq` ending at `cursor.end`
//!    with hash `cursor.head`, its genesis must be `cursor.genesis`, and no damage may come
//!    before `cursor.last_seq`: otherwise **DIVERGED** — reported, exit 1, nothing written.
//! 2. Without a cursor: PUT `header` create-only. If it exists, its bytes must be equal (else
//!    DIVERGED), and `seg/` is LISTed so that what is there is adopted (compared) rather than
//!    uploaded again; a header this run created means no segment of this journal can exist.
//! 3. Quarantine files not yet in the cursor: PUT create-only (an existing one must be equal).
//! 4. From the cursor, cut the next segment and PUT `seg/<first>` create-only with its
//!    metadata. Created: the cursor moves to its last record. Exists (another shipper, or a run
//!    that crashed before its cursor write): GET it; its bytes must equal the local bytes from
//!    record `first` on and end at a record boundary (the other shipper may have cut a shorter
//!    or a longer segment) — then the cursor moves to its end (adopted); else DIVERGED. If the
//!    object reaches past the local journal's valid end, the journal is read again (it may
//!    have grown); if it still does, the remote extends the local journal: DIVERGED.
//! 5. Write the cursor; repeat from 4.
//!
//! `seg/<k>` is written only once the segment before it is known to end at `k − 1`, and
//! objects are never overwritten: every seq is in exactly one object, whatever crashes or
//! races.
//!
//! | crash after | the next run |
//! |---|---|
//! | the header PUT, before the first cursor | header exists, equal: LIST, goes on |
//! | a segment PUT, before the cursor write | the PUT finds the object: compares, adopts |
//! | a cursor's temporary file, before the rename | the old cursor: as above |
//! | a quarantine PUT | finds it, equal: records it |
//! | losing the cursor directory | header equal; LIST; each segment compared and adopted |
//!
//! # verify --remote
//!
//! Per stream under the URL's scope: the header decodes, names a session whose file stem is
//! the key's, and matches `sj-genesis`; segments are contiguous (a gap is a deleted segment,
//! an overlap a seq in two objects); every frame's length, CRC, seq and chain link, across
//! objects (`sj-prev-hash` = previous `sj-head`); `sj-last-seq`, `sj-head`, `sj-blake3` are
//! what the bytes give; the checkpoint pins the computed `(origin, last, head)` and, with
//! `--pubkey`, carries a valid signature by a given key (a key named `sjournal-<host>` counts
//! for that host only); quarantine objects hash to the digest in their name; on S3,
//! `ListObjectVersions` shows exactly one version and no delete marker per key. With a local
//! root whose host id is the stream's: `in sync`, `local extends remote (N record(s) not
//! shipped yet)`, `remote extends local (…)`, or `diverged at seq N` (a finding). Remote
//! extends local is a finding too, and so is a local journal that is gone (unless `repair`
//! kept it aside, merged, with every shipped record): only synced records are shipped, so the
//! local journal lost records it had acknowledged (a rollback, a cut, a deletion). The finding
//! names the session, the seqs the local journal lacks (`local_lacks: {first, last}` in
//! `--json`) and the command that rebuilds the shipped copy (`sjournal fetch
//! <destination>/v1/hosts/<host>/sessions/<stem> --into DIR`).
//!
//! # fetch
//!
//! Verifies first; a stream with findings is not written. Writes `header` + segments as
//! `<DIR>/sessions/<stem>.sjl` (or `<DIR>/<host>/sessions/…` when the URL covers several
//! hosts), and quarantine objects beside it; an existing file is replaced only by bytes that
//! extend it. Each journal it writes gets its high-water mark.
//!
//! # The index (PostgreSQL)
//!
//! `sjournal index` verifies each new segment (metadata, CRC, chain from the last indexed
//! head, checkpoint, signatures with `--pubkey`) and, in one transaction per segment, inserts
//! with `ON CONFLICT DO NOTHING` (DDL in `src/remote/index.sql`; schema `sjournal` unless
//! `--schema`):
//!
//! | table | key | what |
//! |---|---|---|
//! | `record` | host, stem, stream, seq | ts (ns and timestamptz), kind, hash, prev_hash, `event` jsonb (an event's own JSON, a system record's fields), `erased` (only what is left of the payload after `sjournal erase`) |
//! | `session` | host, stem | session id, agent host, cwd, model, started, ended, end reason, records, last seq, head, state hash — the fold's view (main journals) |
//! | `file_touch` | host, stem, stream, seq, path, op | files read, written or edited by a tool call that succeeded, or reported by the host |
//! | `command` | host, stem, stream, seq | shell tool, command, exit code ([`facts`]), failed |
//! | `prompt` | host, stem, stream, seq | the prompt text, and `tsv` (tsvector, GIN index) for full-text search |
//! | `segment`, `stream` | | bookkeeping: segments indexed; each stream's head and fold state (to continue without re-reading) |
//! | `erasure` | host, stem, stream, seq | erasure objects applied: the seq of the `sjournal.erased` record, the erased frame's blake3 |
//!
//! No row holds an insertion time or a serial id, so indexing again changes nothing and
//! dropping the schema and indexing from the bucket gives identical rows. A change of
//! `FOLD_VERSION` asks for `--rebuild`.

pub mod cursor;
pub mod erasure;
pub mod error;
pub mod facts;
pub mod fetch;
pub mod identity;
pub mod index;
pub mod layout;
pub mod s3raw;
pub mod segment;
pub mod ship;
pub mod spawn;
pub mod store;
pub mod verify;

pub use error::RemoteError;
pub use layout::{Location, StreamKind};
pub use store::Remote;

/// Builds the single-threaded runtime the remote commands run on (the library's functions are
/// async; the CLI blocks on them).
pub fn runtime() -> std::io::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
}
