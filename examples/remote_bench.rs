//! Ship and index throughput against real servers (run by `tools/bench-remote.sh`, which
//! starts them): `SJOURNAL_TEST_S3` (+ `_KEY`, `_SECRET`) and `SJOURNAL_TEST_PG`.
//!
//! Builds `SESSIONS` journals of `RECORDS` events each (realistic hook payloads, about
//! `SIZE` bytes), then, interleaving `ROUNDS` rounds, measures:
//! - `sjournal ship` of every journal into a fresh bucket (header, segments of ≤ 4 MiB, signed
//!   checkpoints, cursor writes), against a baseline of plain PUTs of the same segment bytes
//!   (create-only, no metadata, no checks) into another bucket;
//! - `sjournal index` of that bucket into a fresh schema, against a baseline of inserting the
//!   same number of bare rows (seq, payload as jsonb) with the same unnest statement shape.
//!
//! Prints one markdown row per measurement with medians and ratios.

use std::time::Instant;

use object_store::{PutMode, PutOptions};
use sjournal::journal::{Root, Writer, WriterOptions};
use sjournal::remote::store::S3Config;
use sjournal::remote::{cursor, index, ship, Remote};

fn env(k: &str, d: &str) -> String {
    std::env::var(k).unwrap_or_else(|_| d.to_owned())
}

fn num(k: &str, d: usize) -> usize {
    env(k, &d.to_string()).parse().unwrap()
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

fn event(i: usize, size: usize) -> (&'static str, String) {
    let pad = "x".repeat(size.saturating_sub(220));
    match i % 3 {
        0 => (
            "PreToolUse",
            format!(
                r#"{{"session_id":"s","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{{"command":"cargo build {i}"}},"tool_use_id":"t{i}"}}"#
            ),
        ),
        1 => (
            "PostToolUse",
            format!(
                r#"{{"session_id":"s","hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{{"command":"cargo build {i}"}},"tool_response":{{"stdout":"{pad}"}},"tool_use_id":"t{i}"}}"#
            ),
        ),
        _ => (
            "UserPromptSubmit",
            format!(
                r#"{{"session_id":"s","hook_event_name":"UserPromptSubmit","prompt":"next step {i}"}}"#
            ),
        ),
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let s3 = env("SJOURNAL_TEST_S3", "");
    let pg = env("SJOURNAL_TEST_PG", "");
    assert!(
        !s3.is_empty() && !pg.is_empty(),
        "set SJOURNAL_TEST_S3 and SJOURNAL_TEST_PG (tools/bench-remote.sh does)"
    );
    let (sessions, records, size, rounds) = (
        num("SESSIONS", 20),
        num("RECORDS", 500),
        num("SIZE", 3072),
        num("ROUNDS", 3),
    );
    let cfg = S3Config {
        endpoint: Some(s3),
        region: "us-east-1".into(),
        keys: Some((
            env("SJOURNAL_TEST_S3_KEY", "sjtest"),
            env("SJOURNAL_TEST_S3_SECRET", "sjtestsecret123"),
        )),
    };
    let dir = tempfile::tempdir().unwrap();
    let root = Root::new(dir.path().join("root"));
    for s in 0..sessions {
        let mut w = Writer::open(&root, &format!("sess-{s}"), &WriterOptions::default()).unwrap();
        let batch: Vec<(String, Vec<u8>)> = (0..records)
            .map(|i| {
                let (k, j) = event(i, size);
                (
                    k.to_owned(),
                    sjournal::format::payload::encode_event_json(&j),
                )
            })
            .collect();
        for chunk in batch.chunks(500) {
            let refs: Vec<(&str, &[u8])> = chunk
                .iter()
                .map(|(k, p)| (k.as_str(), p.as_slice()))
                .collect();
            w.append_batch(&refs).unwrap();
        }
    }
    let journals = root.journals().unwrap();
    let total_bytes: u64 = journals
        .iter()
        .map(|j| std::fs::metadata(j).unwrap().len())
        .sum();
    let total_records = (sessions * records) as f64;
    let (signer, _) = sjournal::audit::checkpoint::generate_keys("sjournal-bench").unwrap();
    let id = sjournal::remote::identity::Identity {
        host_id: "bench".into(),
        signer,
        signer_path: dir.path().join("k"),
    };
    let (mut ship_s, mut put_s, mut index_s, mut rows_s) = (vec![], vec![], vec![], vec![]);
    let mut segments = 0;
    for round in 0..rounds {
        // sjournal ship into a fresh bucket.
        let bucket = format!("bench-ship-{}-{round}", std::process::id());
        let remote = Remote::open_s3(&format!("s3://{bucket}/p"), &bucket, "p", &cfg).unwrap();
        remote.s3().unwrap().create_bucket(false).await.unwrap();
        let cursors = cursor::dir_for(&root, remote.url());
        let t = Instant::now();
        segments = 0;
        for j in &journals {
            let r = ship::ship_journal(&remote, j, &id, &cursors, &ship::NoFaults)
                .await
                .unwrap();
            assert!(r.ok());
            segments += r.created;
        }
        ship_s.push(t.elapsed().as_secs_f64());

        // Baseline: the same segment bytes, plain create-only PUTs, nothing else.
        let bucket2 = format!("bench-put-{}-{round}", std::process::id());
        let raw = Remote::open_s3(&format!("s3://{bucket2}/p"), &bucket2, "p", &cfg).unwrap();
        raw.s3().unwrap().create_bucket(false).await.unwrap();
        let mut bodies = Vec::new();
        for k in remote.list("v1/").await.unwrap() {
            bodies.push((k.clone(), remote.get(&k).await.unwrap().unwrap().bytes));
        }
        let t = Instant::now();
        for (k, b) in bodies {
            let opts = PutOptions {
                mode: PutMode::Create,
                ..Default::default()
            };
            raw.store()
                .put_opts(&raw.path(&k), b.into(), opts)
                .await
                .unwrap();
        }
        put_s.push(t.elapsed().as_secs_f64());

        // sjournal index into a fresh schema.
        let schema = format!("bench_{}_{round}", std::process::id());
        let t = Instant::now();
        let r = index::index(
            &remote,
            &pg,
            &index::Options {
                schema: schema.clone(),
                rebuild: true,
                keys: vec![],
            },
        )
        .await
        .unwrap();
        index_s.push(t.elapsed().as_secs_f64());
        assert_eq!(r.records as f64, total_records);

        // Baseline: bare rows (seq, the event as jsonb), same unnest shape, one transaction
        // per 4 MiB worth of rows as index does per segment.
        let c = index::connect(&pg).await.unwrap();
        c.batch_execute(&format!("DROP TABLE IF EXISTS {schema}.bare; CREATE TABLE {schema}.bare (k text, seq bigint, event jsonb, PRIMARY KEY (k, seq))")).await.unwrap();
        let per = (records as f64 / (segments as f64 / sessions as f64)).ceil() as usize;
        let t = Instant::now();
        for s in 0..sessions {
            for chunk in (0..records).collect::<Vec<_>>().chunks(per.max(1)) {
                let seqs: Vec<i64> = chunk.iter().map(|&i| i as i64 + 1).collect();
                let ev: Vec<serde_json::Value> = chunk
                    .iter()
                    .map(|&i| serde_json::from_str(&event(i, size).1).unwrap())
                    .collect();
                c.execute(&format!("INSERT INTO {schema}.bare SELECT $1, u.seq, u.e FROM unnest($2::bigint[], $3::jsonb[]) AS u(seq, e) ON CONFLICT DO NOTHING"), &[&format!("s{s}"), &seqs, &ev]).await.unwrap();
            }
        }
        rows_s.push(t.elapsed().as_secs_f64());
        c.batch_execute(&format!("DROP SCHEMA {schema} CASCADE"))
            .await
            .unwrap();
    }
    let mb = total_bytes as f64 / 1e6;
    let (ship_m, put_m, index_m, rows_m) = (
        median(ship_s),
        median(put_s),
        median(index_s),
        median(rows_s),
    );
    println!("workload: {sessions} sessions x {records} records of ~{size} B = {mb:.1} MB, {segments} segments; median of {rounds} rounds");
    println!("| measurement | sjournal | baseline | ratio |");
    println!("|---|---|---|---|");
    println!("| ship to SeaweedFS S3 (127.0.0.1) | {:.1} MB/s, {:.1} segments/s | plain create-only PUTs of the same segments: {:.1} MB/s | {:.2}x |", mb / ship_m, segments as f64 / ship_m, mb / put_m, put_m / ship_m);
    println!("| index into PostgreSQL 15 (127.0.0.1) | {:.0} records/s | bare unnest insert (key, seq, jsonb), same batches: {:.0} rows/s | {:.2}x |", total_records / index_m, total_records / rows_m, rows_m / index_m);
}
