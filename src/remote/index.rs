//! `index`: a PostgreSQL read model of shipped journals, rebuildable from the bucket at any
//! time. Each new segment is verified first (metadata, every CRC and chain link from the last
//! indexed head, the checkpoint and, with keys, its signature); then, in one transaction, its
//! records, their facts ([`super::facts`]), the segment, the stream's fold state and the
//! session's row are written. Rows are keyed by `(host, stem, stream, seq)` and inserted with
//! `ON CONFLICT DO NOTHING`, and nothing in a row depends on when or how often it was indexed,
//! so re-indexing changes nothing and dropping the schema and indexing again gives identical
//! rows. The tables are in the module docs of `remote`.
//!
//! Erasures (`erasure/<seq>` objects, see [`super::erasure`]): a stream with erasure objects
//! not applied yet is verified as `verify --remote` verifies it, and each erased record is
//! indexed from its erased frame: its row keeps seq, time, kind and hashes, says `erased`, and
//! its JSON and facts come from what is left of the payload. When an erasure names a record
//! already indexed, the stream's rows (and its session's) are deleted and the stream indexed
//! again from its header, so no row, fact or fold state keeps the erased content; the result
//! equals a rebuild. The segments' original bytes stay in the bucket (create-only storage).

use std::collections::BTreeMap;

use serde::Serialize;
use tokio_postgres::{Client, NoTls};

use super::error::{RemoteError, Result};
use super::facts;
use super::layout::{parse_key, Location, Part, StreamKind};
use super::segment::{check_body, SegmentMeta};
use super::store::Remote;
use super::verify::Key;
use crate::fold::{RecordView, State, FOLD_VERSION};
use crate::format::hash::genesis_hash;
use crate::format::payload::to_json;
use crate::format::{Hash, Header};
use crate::journal::reader::Records;
use crate::journal::scan::Chain;

pub struct Options {
    /// PostgreSQL schema of the tables (created if missing).
    pub schema: String,
    /// Drop the schema first and index everything again.
    pub rebuild: bool,
    /// Checkpoints must be signed by one of these (see `verify::Options::keys`).
    pub keys: Vec<Key>,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct Report {
    pub streams: u64,
    pub segments_indexed: u64,
    pub segments_already: u64,
    pub records: u64,
    /// Segments that failed verification (and everything after them in their stream, which
    /// was not indexed), one sentence each.
    pub findings: Vec<String>,
}

/// The schema's DDL; `{s}` is the schema name.
pub(crate) const SCHEMA_SQL: &str = include_str!("index.sql");

fn valid_schema(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 63
        && s.bytes()
            .next()
            .is_some_and(|b| b.is_ascii_lowercase() || b == b'_')
        && s.bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
}

/// Connects (no TLS: use a local socket, a tunnel, or `sslmode=disable` on a trusted network).
pub async fn connect(pg: &str) -> Result<Client> {
    let (client, conn) = tokio_postgres::connect(pg, NoTls)
        .await
        .map_err(|e| RemoteError::pg("connect", e))?;
    tokio::spawn(async move {
        let _ = conn.await;
    });
    Ok(client)
}

pub async fn index(remote: &Remote, pg: &str, opts: &Options) -> Result<Report> {
    if !valid_schema(&opts.schema) {
        return Err(RemoteError::Config(format!(
            "schema name {:?}: use lower-case letters, digits and _",
            opts.schema
        )));
    }
    let mut client = connect(pg).await?;
    let s = &opts.schema;
    if opts.rebuild {
        client
            .batch_execute(&format!("DROP SCHEMA IF EXISTS {s} CASCADE"))
            .await
            .map_err(|e| RemoteError::pg("drop schema", e))?;
    }
    client
        .batch_execute(&SCHEMA_SQL.replace("{s}", s))
        .await
        .map_err(|e| RemoteError::pg("create tables", e))?;
    let mut streams: BTreeMap<Location, StreamKeys> = BTreeMap::new();
    for k in remote.list(remote.scope()).await? {
        match parse_key(&k) {
            Some((loc, Part::Segment(f))) => streams.entry(loc).or_default().segments.push(f),
            Some((loc, Part::Header)) => streams.entry(loc).or_default().header = true,
            Some((loc, Part::Erasure(seq))) => streams.entry(loc).or_default().erasures.push(seq),
            _ => {}
        }
    }
    let mut report = Report::default();
    for (loc, mut keys) in streams {
        keys.segments.sort();
        keys.erasures.sort();
        report.streams += 1;
        if let Err(f) = index_stream(remote, &mut client, s, &loc, &keys, opts, &mut report).await?
        {
            report.findings.push(format!("{}: {f}", loc.display()));
        }
    }
    Ok(report)
}

/// A stream's objects, as listed.
#[derive(Default)]
struct StreamKeys {
    header: bool,
    segments: Vec<u64>,
    erasures: Vec<u64>,
}

/// An erased record's frame (from its `erasure/<seq>` object) and the seq of its
/// `sjournal.erased` record.
struct ErasedFrame {
    frame: Vec<u8>,
    erased_by: u64,
}

struct StreamState {
    session_id: String,
    last_seq: u64,
    head: Hash,
    state: State,
}

/// Ok(Err(finding)) when a segment fails verification.
async fn index_stream(
    remote: &Remote,
    client: &mut Client,
    s: &str,
    loc: &Location,
    keys: &StreamKeys,
    opts: &Options,
    report: &mut Report,
) -> Result<std::result::Result<(), String>> {
    let segs = &keys.segments[..];
    let kind = loc.kind.as_str();
    let row = client
        .query_opt(
            &format!(
                "SELECT session_id, last_seq, head, fold_version, state FROM {s}.stream \
                 WHERE host = $1 AND stem = $2 AND stream = $3"
            ),
            &[&loc.host, &loc.stem, &kind],
        )
        .await
        .map_err(|e| RemoteError::pg("read stream", e))?;
    let mut st = match row {
        Some(r) => {
            let fv: i32 = r.get(3);
            if fv as u32 != FOLD_VERSION {
                return Ok(Err(format!(
                    "indexed with fold version {fv}, this sjournal folds with {FOLD_VERSION}: \
                     rebuild the index (`sjournal index --rebuild`)"
                )));
            }
            let state: Vec<u8> = r.get(4);
            let head: String = r.get(2);
            StreamState {
                session_id: r.get(0),
                last_seq: r.get::<_, i64>(1) as u64,
                head: Hash::from_hex(&head).unwrap_or(Hash::ZERO),
                state: State::decode(&state).map_err(|e| {
                    RemoteError::Config(format!(
                        "the index's fold state of {} does not decode ({e}): rebuild the index",
                        loc.display()
                    ))
                })?,
            }
        }
        None => match fresh_state(remote, loc).await? {
            Ok(st) => st,
            Err(f) => return Ok(Err(f)),
        },
    };
    let erased = match erased_frames(remote, client, s, loc, keys, opts).await? {
        Ok(e) => e,
        Err(f) => return Ok(Err(f)),
    };
    if let Some(e) = &erased {
        if e.new.iter().any(|&seq| seq <= st.last_seq) {
            // An erasure of a record already indexed: its rows, the facts derived from it and
            // the fold state that saw it all go; the stream is indexed again from its header
            // with the erased frames in place.
            forget_stream(client, s, loc).await?;
            st = match fresh_state(remote, loc).await? {
                Ok(st) => st,
                Err(f) => return Ok(Err(f)),
            };
        }
    }
    let frames = erased.map(|e| e.frames).unwrap_or_default();
    for &first in segs {
        if first <= st.last_seq {
            report.segments_already += 1;
            continue;
        }
        let key = loc.segment_key(first);
        if first != st.last_seq + 1 {
            return Ok(Err(format!(
                "seq {}..={} are in no object: stopped before {key}",
                st.last_seq + 1,
                first - 1
            )));
        }
        let Some(obj) = remote.get(&key).await? else {
            return Ok(Err(format!("{key} vanished")));
        };
        let meta = match SegmentMeta::from_meta(&obj.meta) {
            Ok(m) => m,
            Err(e) => return Ok(Err(format!("{key}: {e}"))),
        };
        let checked = match check_body(&obj.bytes, first, st.head) {
            Ok(c) => c,
            Err(e) => return Ok(Err(format!("{key}: {e}"))),
        };
        if meta.first != first
            || meta.last != checked.last
            || meta.head != checked.head
            || meta.prev_hash != st.head
            || crate::format::hash::content_hash(&obj.bytes) != meta.blake3
        {
            return Ok(Err(format!("{key}: its metadata does not match its bytes")));
        }
        let mut v = super::verify::StreamVerdict::default();
        let keys: Vec<&Key> = opts
            .keys
            .iter()
            .filter(|k| {
                k.name
                    .strip_prefix("sjournal-")
                    .is_none_or(|h| h == loc.host)
            })
            .collect();
        super::verify::check_note(
            &mut v,
            &key,
            &meta.checkpoint,
            &st.session_id,
            loc.kind,
            checked.last,
            checked.head,
            &keys,
        );
        if !opts.keys.is_empty() && keys.is_empty() {
            v.findings
                .push(format!("no key given for host {:?}", loc.host));
        }
        if let Some(f) = v.findings.first() {
            return Ok(Err(f.clone()));
        }
        let n = insert_segment(client, s, loc, &mut st, first, &obj.bytes, &meta, &frames).await?;
        report.segments_indexed += 1;
        report.records += n;
    }
    Ok(Ok(()))
}

async fn fresh_state(
    remote: &Remote,
    loc: &Location,
) -> Result<std::result::Result<StreamState, String>> {
    let Some(h) = remote.get(&loc.header_key()).await? else {
        return Ok(Err("no header object".into()));
    };
    let header = match Header::decode(&h.bytes) {
        Ok((hd, len)) if len == h.bytes.len() => hd,
        _ => return Ok(Err("the header object is not a journal header".into())),
    };
    Ok(Ok(StreamState {
        session_id: header.session_id,
        last_seq: 0,
        head: genesis_hash(&h.bytes),
        state: State::new(),
    }))
}

/// The erased frames of a stream with erasure objects not applied yet (`new`); `frames` holds
/// every erasure's frame, applied or not.
struct Erasures {
    new: Vec<u64>,
    frames: BTreeMap<u64, ErasedFrame>,
}

/// None when every erasure object of the stream is applied already. Otherwise the stream is
/// verified as `verify --remote` does (segments, checkpoints and each erasure bound by its
/// chained `sjournal.erased` record); an erasure object that does not check is a finding and
/// nothing of the stream is indexed further (the index keeps what it had).
async fn erased_frames(
    remote: &Remote,
    client: &Client,
    s: &str,
    loc: &Location,
    keys: &StreamKeys,
    opts: &Options,
) -> Result<std::result::Result<Option<Erasures>, String>> {
    if keys.erasures.is_empty() {
        return Ok(Ok(None));
    }
    let applied: std::collections::BTreeSet<u64> = client
        .query(
            &format!("SELECT seq FROM {s}.erasure WHERE host = $1 AND stem = $2 AND stream = $3"),
            &[&loc.host, &loc.stem, &loc.kind.as_str()],
        )
        .await
        .map_err(|e| RemoteError::pg("read erasures", e))?
        .iter()
        .map(|r| r.get::<_, i64>(0) as u64)
        .collect();
    let new: Vec<u64> = keys
        .erasures
        .iter()
        .copied()
        .filter(|seq| !applied.contains(seq))
        .collect();
    if new.is_empty() {
        return Ok(Ok(None));
    }
    let vopts = super::verify::Options {
        keys: opts.keys.clone(),
        local: None,
    };
    let v = super::verify::verify_one(
        remote,
        loc,
        keys.header,
        &keys.segments,
        &keys.erasures,
        &vopts,
    )
    .await?;
    let rebuilt = match (&v.findings[..], &v.rebuilt) {
        ([], Some(r)) => r,
        ([], None) => {
            return Ok(Err(
                "erasure objects not applied: they were not checked".into()
            ))
        }
        ([f, ..], _) => return Ok(Err(format!("erasure objects not applied: {f}"))),
    };
    let Ok((_, hlen)) = Header::decode(rebuilt) else {
        return Ok(Err("the header object is not a journal header".into()));
    };
    let recorded: BTreeMap<u64, u64> = v.erasures.iter().map(|e| (e.seq, e.recorded_at)).collect();
    let mut frames = BTreeMap::new();
    let mut at = hlen;
    while at < rebuilt.len() {
        let Ok(f) = crate::format::record::parse(&rebuilt[at..]) else {
            break;
        };
        if let (true, Some(&by)) = (f.erased(), recorded.get(&f.seq)) {
            frames.insert(
                f.seq,
                ErasedFrame {
                    frame: f.bytes.to_vec(),
                    erased_by: by,
                },
            );
        }
        at += f.len();
    }
    Ok(Ok(Some(Erasures { new, frames })))
}

/// Deletes every row of the stream (and its session's row, for a main stream), in one
/// transaction: the next segment indexed starts from the header.
async fn forget_stream(client: &mut Client, s: &str, loc: &Location) -> Result<()> {
    let tx = client
        .transaction()
        .await
        .map_err(|e| RemoteError::pg("begin", e))?;
    let kind = loc.kind.as_str();
    for t in [
        "record",
        "file_touch",
        "command",
        "prompt",
        "segment",
        "stream",
        "erasure",
    ] {
        tx.execute(
            &format!("DELETE FROM {s}.{t} WHERE host = $1 AND stem = $2 AND stream = $3"),
            &[&loc.host, &loc.stem, &kind],
        )
        .await
        .map_err(|e| RemoteError::pg("forget the stream's rows", e))?;
    }
    if loc.kind == StreamKind::Main {
        tx.execute(
            &format!("DELETE FROM {s}.session WHERE host = $1 AND stem = $2"),
            &[&loc.host, &loc.stem],
        )
        .await
        .map_err(|e| RemoteError::pg("forget the session's row", e))?;
    }
    tx.commit().await.map_err(|e| RemoteError::pg("commit", e))
}

#[derive(Default)]
struct Rows {
    seq: Vec<i64>,
    ts: Vec<i64>,
    kind: Vec<String>,
    hash: Vec<Vec<u8>>,
    prev: Vec<Vec<u8>>,
    event: Vec<Option<serde_json::Value>>,
    erased: Vec<bool>,
    e_seq: Vec<i64>,
    e_by: Vec<i64>,
    e_blake3: Vec<String>,
    f_seq: Vec<i64>,
    f_path: Vec<String>,
    f_op: Vec<String>,
    c_seq: Vec<i64>,
    c_tool: Vec<String>,
    c_cmd: Vec<String>,
    c_exit: Vec<Option<i32>>,
    c_failed: Vec<bool>,
    p_seq: Vec<i64>,
    p_text: Vec<String>,
}

fn no_nul(s: String) -> String {
    // PostgreSQL text cannot hold NUL.
    if s.contains('\0') {
        s.replace('\0', "\u{FFFD}")
    } else {
        s
    }
}

#[allow(clippy::too_many_arguments)]
async fn insert_segment(
    client: &mut Client,
    s: &str,
    loc: &Location,
    st: &mut StreamState,
    first: u64,
    body: &[u8],
    meta: &SegmentMeta,
    erased: &BTreeMap<u64, ErasedFrame>,
) -> Result<u64> {
    let mut rows = Rows::default();
    // The erased frames in place of the segment's (same record hashes: the chain holds).
    let here: BTreeMap<u64, &[u8]> = erased
        .range(first..=meta.last)
        .map(|(&seq, e)| (seq, &e.frame[..]))
        .collect();
    let replaced;
    let body = if here.is_empty() {
        body
    } else {
        replaced = super::erasure::replace_frames(body, 0, &here);
        &replaced[..]
    };
    for (&seq, e) in erased.range(first..=meta.last) {
        rows.e_seq.push(seq as i64);
        rows.e_by.push(e.erased_by as i64);
        rows.e_blake3
            .push(crate::format::hash::content_hash(&e.frame).to_hex());
    }
    let recs = Records::new(
        body,
        0,
        Chain {
            next_seq: first,
            prev_hash: st.head,
        },
    );
    for r in recs {
        let r =
            r.map_err(|e| RemoteError::Config(format!("segment re-read failed: {}", e.problem)))?;
        let seq = r.seq as i64;
        rows.seq.push(seq);
        rows.ts.push(r.ts_unix_ns);
        rows.kind.push(r.kind.to_owned());
        rows.hash.push(r.hash.0.to_vec());
        rows.prev.push(r.prev_hash.0.to_vec());
        let event = to_json(r.seq, r.kind, r.payload)
            .ok()
            .filter(|j| !j.get().contains("\\u0000"))
            .and_then(|j| crate::event::lenient::value(j.get().as_bytes()).ok());
        rows.event.push(event);
        rows.erased.push(r.erased());
        let f = facts::extract(r.kind, r.seq, r.payload);
        let mut seen = std::collections::BTreeSet::new();
        for (path, op) in f.files {
            if seen.insert((path.clone(), op)) {
                rows.f_seq.push(seq);
                rows.f_path.push(no_nul(path));
                rows.f_op.push(op.to_owned());
            }
        }
        if let Some(c) = f.command {
            rows.c_seq.push(seq);
            rows.c_tool.push(no_nul(c.tool));
            rows.c_cmd.push(no_nul(c.command));
            rows.c_exit.push(c.exit_code);
            rows.c_failed.push(c.failed);
        }
        if let Some(p) = f.prompt {
            rows.p_seq.push(seq);
            rows.p_text.push(no_nul(p));
        }
        if loc.kind == StreamKind::Main {
            st.state.apply(&RecordView::from(&r));
        }
    }
    let n = rows.seq.len() as u64;
    let (host, stem, kind) = (&loc.host, &loc.stem, loc.kind.as_str());
    let tx = client
        .transaction()
        .await
        .map_err(|e| RemoteError::pg("begin", e))?;
    let pg = |what: &'static str| move |e| RemoteError::pg(what, e);
    tx.execute(
        &format!(
            "INSERT INTO {s}.record (host, stem, stream, seq, ts_ns, ts, kind, hash, prev_hash, event, erased) \
             SELECT $1, $2, $3, u.seq, u.ts_ns, to_timestamp(u.ts_ns::float8 / 1e9), u.kind, u.hash, u.prev, u.event, u.erased \
             FROM unnest($4::bigint[], $5::bigint[], $6::text[], $7::bytea[], $8::bytea[], $9::jsonb[], $10::bool[]) \
               AS u(seq, ts_ns, kind, hash, prev, event, erased) \
             ON CONFLICT DO NOTHING"
        ),
        &[host, stem, &kind, &rows.seq, &rows.ts, &rows.kind, &rows.hash, &rows.prev, &rows.event, &rows.erased],
    )
    .await
    .map_err(pg("insert records"))?;
    tx.execute(
        &format!(
            "INSERT INTO {s}.erasure (host, stem, stream, seq, erased_by, blake3) \
             SELECT $1, $2, $3, u.seq, u.erased_by, u.blake3 FROM unnest($4::bigint[], $5::bigint[], $6::text[]) AS u(seq, erased_by, blake3) \
             ON CONFLICT DO NOTHING"
        ),
        &[host, stem, &kind, &rows.e_seq, &rows.e_by, &rows.e_blake3],
    )
    .await
    .map_err(pg("insert erasures"))?;
    tx.execute(
        &format!(
            "INSERT INTO {s}.file_touch (host, stem, stream, seq, path, op) \
             SELECT $1, $2, $3, u.seq, u.path, u.op FROM unnest($4::bigint[], $5::text[], $6::text[]) AS u(seq, path, op) \
             ON CONFLICT DO NOTHING"
        ),
        &[host, stem, &kind, &rows.f_seq, &rows.f_path, &rows.f_op],
    )
    .await
    .map_err(pg("insert file_touch"))?;
    tx.execute(
        &format!(
            "INSERT INTO {s}.command (host, stem, stream, seq, tool, command, exit_code, failed) \
             SELECT $1, $2, $3, u.seq, u.tool, u.command, u.exit_code, u.failed \
             FROM unnest($4::bigint[], $5::text[], $6::text[], $7::int[], $8::bool[]) AS u(seq, tool, command, exit_code, failed) \
             ON CONFLICT DO NOTHING"
        ),
        &[host, stem, &kind, &rows.c_seq, &rows.c_tool, &rows.c_cmd, &rows.c_exit, &rows.c_failed],
    )
    .await
    .map_err(pg("insert command"))?;
    tx.execute(
        &format!(
            "INSERT INTO {s}.prompt (host, stem, stream, seq, text) \
             SELECT $1, $2, $3, u.seq, u.text FROM unnest($4::bigint[], $5::text[]) AS u(seq, text) \
             ON CONFLICT DO NOTHING"
        ),
        &[host, stem, &kind, &rows.p_seq, &rows.p_text],
    )
    .await
    .map_err(pg("insert prompt"))?;
    tx.execute(
        &format!(
            "INSERT INTO {s}.segment (host, stem, stream, first_seq, last_seq, head, blake3) \
             VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT DO NOTHING"
        ),
        &[
            host,
            stem,
            &kind,
            &(first as i64),
            &(meta.last as i64),
            &meta.head.to_hex(),
            &meta.blake3.to_hex(),
        ],
    )
    .await
    .map_err(pg("insert segment"))?;
    st.last_seq = meta.last;
    st.head = meta.head;
    let state = st.state.encode();
    tx.execute(
        &format!(
            "INSERT INTO {s}.stream (host, stem, stream, session_id, last_seq, head, fold_version, state) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8) \
             ON CONFLICT (host, stem, stream) DO UPDATE SET last_seq = EXCLUDED.last_seq, \
               head = EXCLUDED.head, fold_version = EXCLUDED.fold_version, state = EXCLUDED.state \
             WHERE {s}.stream.last_seq < EXCLUDED.last_seq"
        ),
        &[
            host,
            stem,
            &kind,
            &no_nul(st.session_id.clone()),
            &(st.last_seq as i64),
            &st.head.to_hex(),
            &(FOLD_VERSION as i32),
            &state,
        ],
    )
    .await
    .map_err(pg("update stream"))?;
    if loc.kind == StreamKind::Main {
        let f = &st.state;
        let ns = |v: i64| (v != 0).then_some(v);
        tx.execute(
            &format!(
                "INSERT INTO {s}.session (host, stem, session_id, agent_host, cwd, model, started_ns, \
                   started, ended_ns, ended, end_reason, records, last_seq, head, state_hash) \
                 VALUES ($1, $2, $3, $4, $5, $6, $7::bigint, to_timestamp($7::bigint::float8 / 1e9), $8::bigint, \
                   to_timestamp($8::bigint::float8 / 1e9), $9, $10, $11, $12, $13) \
                 ON CONFLICT (host, stem) DO UPDATE SET session_id = EXCLUDED.session_id, \
                   agent_host = EXCLUDED.agent_host, cwd = EXCLUDED.cwd, model = EXCLUDED.model, \
                   started_ns = EXCLUDED.started_ns, started = EXCLUDED.started, \
                   ended_ns = EXCLUDED.ended_ns, ended = EXCLUDED.ended, end_reason = EXCLUDED.end_reason, \
                   records = EXCLUDED.records, last_seq = EXCLUDED.last_seq, head = EXCLUDED.head, \
                   state_hash = EXCLUDED.state_hash \
                 WHERE {s}.session.last_seq < EXCLUDED.last_seq"
            ),
            &[
                host,
                stem,
                &no_nul(st.session_id.clone()),
                &f.identity.host,
                &f.identity.cwd.clone().map(no_nul),
                &f.identity.model.clone().map(no_nul),
                &ns(f.first_ts_unix_ns),
                &f.ended.as_ref().map(|e| e.ts_unix_ns),
                &f.ended.as_ref().and_then(|e| e.reason.clone()).map(no_nul),
                &(f.records as i64),
                &(st.last_seq as i64),
                &st.head.to_hex(),
                &f.state_hash().to_hex(),
            ],
        )
        .await
        .map_err(pg("upsert session"))?;
    }
    tx.commit().await.map_err(pg("commit"))?;
    Ok(n)
}
