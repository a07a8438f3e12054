//! Tampering on the server, and what `verify --remote` says. Each case changes one thing in a
//! shipped copy, through the store itself (as someone with write access to the bucket would):
//! a new version of a segment (S3: the bucket keeps both, and verify lists versions), a
//! deleted segment (a gap), metadata whose head is not the computed one, a checkpoint signed
//! by another key or edited, a flipped byte in a segment, a header replaced. Each is found and
//! named; an untouched copy verifies clean.
#![cfg(feature = "remote")]

use crate::support;

use bytes::Bytes;
use object_store::{Attribute, Attributes, ObjectStoreExt, PutOptions, PutPayload};
use sjournal::journal::Root;
use sjournal::remote::segment::SegmentMeta;
use sjournal::remote::ship::{ship_journal, NoFaults};
use sjournal::remote::store::Meta;
use sjournal::remote::verify::{self, Options};
use sjournal::remote::{cursor, Remote};
use support::remote::*;

async fn shipped(remote: &Remote, dir: &std::path::Path, tag: &str) -> (Root, Options) {
    let root = Root::new(dir.join(format!("root-{tag}")));
    let id = identity(dir);
    let cursors = cursor::dir_for(&root, remote.url());
    append(&root, "s", 0, 10, 300);
    let j = journal(&root, "s");
    ship_journal(remote, &j, &id, &cursors, &NoFaults)
        .await
        .unwrap();
    append(&root, "s", 10, 20, 300);
    ship_journal(remote, &j, &id, &cursors, &NoFaults)
        .await
        .unwrap();
    append(&root, "s", 20, 30, 300);
    ship_journal(remote, &j, &id, &cursors, &NoFaults)
        .await
        .unwrap();
    let opts = Options {
        keys: vec![verifier_key(dir)],
        local: None,
    };
    (root, opts)
}

/// Overwrites a key with `bytes` and `meta` (no create-only condition: a rewrite).
async fn overwrite(remote: &Remote, key: &str, bytes: Bytes, meta: &Meta) {
    let path = remote.path(key);
    let mut attrs = Attributes::new();
    for (k, v) in meta {
        attrs.insert(Attribute::Metadata(k.clone().into()), v.clone().into());
    }
    let opts = PutOptions {
        attributes: attrs,
        ..Default::default()
    };
    remote
        .store()
        .put_opts(&path, PutPayload::from_bytes(bytes), opts)
        .await
        .unwrap();
}

async fn findings(remote: &Remote, opts: &Options) -> Vec<String> {
    let v = verify::verify(remote, opts).await.unwrap();
    v.into_iter().flat_map(|v| v.findings).collect()
}

fn seg(n: u64) -> String {
    main_loc("s").segment_key(n)
}

/// Backends that keep object metadata with the object (the tamper helpers write it).
async fn stores(tag: &str, dir: &std::path::Path) -> Vec<(&'static str, Remote)> {
    backends(tag, dir)
        .await
        .into_iter()
        .filter(|(n, _)| *n != "dir")
        .collect()
}

#[tokio::test]
async fn untouched_copies_verify_clean() {
    let d = tempfile::tempdir().unwrap();
    for (name, remote) in backends("clean", d.path()).await {
        let (_, opts) = shipped(&remote, d.path(), name).await;
        assert_eq!(
            findings(&remote, &opts).await,
            Vec::<String>::new(),
            "{name}"
        );
    }
}

#[tokio::test]
async fn a_new_version_of_a_segment_is_named() {
    let d = tempfile::tempdir().unwrap();
    for (name, remote) in stores("ver", d.path()).await {
        let (_, opts) = shipped(&remote, d.path(), name).await;
        // Rewrite seg 11 with its own bytes and metadata: content checks all pass; only the
        // version history shows it (on S3).
        let o = remote.get(&seg(11)).await.unwrap().unwrap();
        overwrite(&remote, &seg(11), o.bytes.clone(), &o.meta).await;
        let f = findings(&remote, &opts).await;
        if name == "s3" {
            assert!(
                f.iter()
                    .any(|f| f.contains(&seg(11)) && f.contains("2 versions")),
                "{f:?}"
            );
        } else {
            let v = verify::verify(&remote, &opts).await.unwrap();
            assert!(
                v[0].notes
                    .iter()
                    .any(|n| n.contains("versions not checked")),
                "{:?}",
                v[0].notes
            );
        }
        // A rewrite with other bytes: found by content on every store.
        let mut b = o.bytes.to_vec();
        let at = b.len() / 2;
        b[at] ^= 1;
        overwrite(&remote, &seg(11), Bytes::from(b), &o.meta).await;
        let f = findings(&remote, &opts).await;
        assert!(
            f.iter().any(|f| f.contains(&seg(11)) && f.contains("seq")),
            "{name}: {f:?}"
        );
    }
}

#[tokio::test]
async fn a_deleted_segment_is_a_gap() {
    let d = tempfile::tempdir().unwrap();
    for (name, remote) in backends("del", d.path()).await {
        let (_, opts) = shipped(&remote, d.path(), name).await;
        remote.store().delete(&remote.path(&seg(11))).await.unwrap();
        let f = findings(&remote, &opts).await;
        assert!(
            f.iter().any(|f| f.contains("seq 11..=20 are in no object")),
            "{name}: {f:?}"
        );
        if name == "s3" {
            assert!(f.iter().any(|f| f.contains("delete marker")), "{f:?}");
        }
    }
}

#[tokio::test]
async fn metadata_head_not_computed_is_named() {
    let d = tempfile::tempdir().unwrap();
    for (name, remote) in stores("head", d.path()).await {
        let (_, opts) = shipped(&remote, d.path(), name).await;
        let o = remote.get(&seg(11)).await.unwrap().unwrap();
        let mut meta = o.meta.clone();
        meta.insert("sj-head".into(), "ab".repeat(32));
        // Delete first so the copy has one version (on S3 the version history would name it
        // anyway); the point here is the head check itself.
        remote.store().delete(&remote.path(&seg(11))).await.unwrap();
        overwrite(&remote, &seg(11), o.bytes.clone(), &meta).await;
        let f = findings(&remote, &opts).await;
        assert!(
            f.iter()
                .any(|f| f.contains(&seg(11)) && f.contains("is not the computed head")),
            "{name}: {f:?}"
        );
    }
}

#[tokio::test]
async fn a_bad_signature_is_named() {
    let d = tempfile::tempdir().unwrap();
    for (name, remote) in stores("sig", d.path()).await {
        let (_, opts) = shipped(&remote, d.path(), name).await;
        let o = remote.get(&seg(21)).await.unwrap().unwrap();
        let m = SegmentMeta::from_meta(&o.meta).unwrap();
        // Signed by another key of the same name: no signature by the auditor's key.
        let (other, _) = sjournal::audit::checkpoint::generate_keys("sjournal-testhost").unwrap();
        let parsed = sjournal::audit::checkpoint::parse(&m.checkpoint).unwrap();
        let forged = parsed.checkpoint.signed(&other).unwrap();
        let mut m2 = m.clone();
        m2.checkpoint = forged;
        overwrite(&remote, &seg(21), o.bytes.clone(), &m2.to_meta()).await;
        let f = findings(&remote, &opts).await;
        assert!(
            f.iter()
                .any(|f| f.contains(&seg(21)) && f.contains("no signature by the given key")),
            "{name}: {f:?}"
        );
        // The real signature over an edited note: the signature does not verify.
        let mut m3 = m.clone();
        m3.checkpoint = m.checkpoint.replacen("\n30\n", "\n31\n", 1);
        overwrite(&remote, &seg(21), o.bytes.clone(), &m3.to_meta()).await;
        let f = findings(&remote, &opts).await;
        assert!(
            f.iter().any(|f| f.contains(&seg(21))
                && (f.contains("BAD SIGNATURE") || f.contains("no signature"))),
            "{name}: {f:?}"
        );
        assert!(
            f.iter().any(|f| f.contains("the checkpoint pins")),
            "{name}: {f:?}"
        );
        // Without --pubkey, a wrong signature is not checked, but the pinned values still are.
        let f = findings(&remote, &Options::default()).await;
        assert!(
            f.iter().any(|f| f.contains("the checkpoint pins")),
            "{name}: {f:?}"
        );
    }
}

#[tokio::test]
async fn a_flipped_byte_and_a_replaced_header_are_named() {
    let d = tempfile::tempdir().unwrap();
    for (name, remote) in stores("flip", d.path()).await {
        let (_, opts) = shipped(&remote, d.path(), name).await;
        let o = remote.get(&seg(1)).await.unwrap().unwrap();
        let mut b = o.bytes.to_vec();
        b[100] ^= 4;
        overwrite(&remote, &seg(1), Bytes::from(b), &o.meta).await;
        let f = findings(&remote, &opts).await;
        assert!(
            f.iter().any(|f| f.contains(&seg(1)) && f.contains("CRC")),
            "{name}: {f:?}"
        );
        let h = main_loc("s").header_key();
        let other = sjournal::format::Header::new("another-session", 1).encode();
        overwrite(&remote, &h, Bytes::from(other), &Meta::new()).await;
        let f = findings(&remote, &opts).await;
        assert!(
            f.iter().any(|f| f.contains("the header names session")),
            "{name}: {f:?}"
        );
    }
}

/// The local journal loses shipped records (cut at a record boundary, as a rollback leaves
/// it; or deleted): the remote extends it, which is a finding naming the session, the seqs the
/// local journal lacks, and the `fetch` that rebuilds them. A journal that only lags behind
/// the remote's copy cannot happen otherwise: only synced records are shipped.
#[tokio::test]
async fn records_the_local_journal_lost_are_a_finding_with_the_seqs_and_the_fetch() {
    let d = tempfile::tempdir().unwrap();
    for (name, remote) in backends("lost", d.path()).await {
        let (root, mut opts) = shipped(&remote, d.path(), name).await;
        opts.local = Some((root.clone(), HOST.into()));
        let j = root.session("s").unwrap().journal;
        let whole = std::fs::read(&j).unwrap();
        let p = support::parse(&whole);
        assert_eq!(p.records.len(), 30);
        std::fs::write(&j, &whole[..p.records[19].end as usize]).unwrap();

        let v = verify::verify(&remote, &opts).await.unwrap();
        assert_eq!(v.len(), 1, "{name}");
        let v = &v[0];
        assert!(!v.ok, "{name}: {}", v.summary());
        let lacks = v.local_lacks.expect("the seqs the local journal lacks");
        assert_eq!((lacks.first, lacks.last), (21, 30), "{name}");
        let f = v.findings.join("; ");
        assert!(
            f.contains("session \"s\"") && f.contains("lacks seq 21..=30"),
            "{name}: {f}"
        );
        let fetch = v.fetch.as_deref().unwrap();
        assert!(
            fetch.starts_with("sjournal fetch ")
                && fetch.ends_with(&format!("{} --into DIR", main_loc("s").base())),
            "{name}: {fetch}"
        );
        assert!(f.contains(fetch), "{name}: {f}");
        let json = serde_json::to_value(v).unwrap();
        assert_eq!(json["local_lacks"]["first"], 21, "{json}");

        // The journal deleted: every shipped seq is lacking.
        std::fs::remove_file(&j).unwrap();
        let v = verify::verify(&remote, &opts).await.unwrap();
        let lacks = v[0].local_lacks.expect("a deleted journal lacks them all");
        assert_eq!((lacks.first, lacks.last), (1, 30), "{name}");
        assert!(!v[0].ok);
    }
}

/// Through the binary: `verify --remote` exits 1 when the local journal lost shipped records,
/// and the fetch it names works.
#[test]
fn verify_remote_exits_1_when_the_local_journal_lost_shipped_records() {
    let d = tempfile::tempdir().unwrap();
    let root = d.path().join("root");
    let url = format!("file://{}", d.path().join("bucket").display());
    append(&Root::new(&root), "s", 0, 12, 300);
    let ship = support::run(&root, &["ship", "--all", "--to", &url], b"");
    assert!(ship.status.success(), "{ship:?}");
    let ok = support::run(&root, &["verify", "--remote", &url], b"");
    assert_eq!(ok.status.code(), Some(0), "{ok:?}");

    let j = root.join("sessions/s.sjl");
    let whole = std::fs::read(&j).unwrap();
    let p = support::parse(&whole);
    std::fs::write(&j, &whole[..p.records[7].end as usize]).unwrap();
    let out = support::run(&root, &["verify", "--remote", &url], b"");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(text.contains("lacks seq 9..=12"), "{text}");
    let host = std::fs::read_to_string(root.join("remote/host-id")).unwrap();
    let cmd = format!(
        "sjournal fetch {url}/v1/hosts/{}/sessions/s --into DIR",
        host.trim()
    );
    assert!(text.contains(&cmd), "{text}");

    // The named fetch rebuilds the lost records.
    let into = d.path().join("restored");
    let args: Vec<String> = cmd
        .split(' ')
        .skip(1)
        .map(|a| {
            if a == "DIR" {
                into.display().to_string()
            } else {
                a.to_owned()
            }
        })
        .collect();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let f = support::run(&root, &args, b"");
    assert!(f.status.success(), "{f:?}");
    assert_eq!(std::fs::read(into.join("sessions/s.sjl")).unwrap(), whole);
}

/// A record blanked in a shipped segment as an erasure would leave it (flag ERASED, salt zeroed,
/// payload empty, its digest and so its record hash kept; the CRC and the metadata's blake3
/// recomputed), with no erasure object and no `sjournal.erased` record binding it: the chain
/// still holds, and `verify --remote` names the record all the same, as local verify does.
#[tokio::test]
async fn a_record_blanked_in_a_segment_without_its_erasure_is_named() {
    use sjournal::format::record;
    let d = tempfile::tempdir().unwrap();
    for (name, remote) in stores("blank", d.path()).await {
        let (_, opts) = shipped(&remote, d.path(), name).await;
        let o = remote.get(&seg(11)).await.unwrap().unwrap();
        let f = record::parse(&o.bytes).unwrap();
        assert!(f.digested() && f.seq == 11);
        let mut b = Vec::new();
        let h = record::encode_digested(
            &mut b,
            f.version(),
            f.seq,
            f.ts_unix_ns,
            f.kind,
            &f.prev_hash,
            b"",
            &[0; record::SALT_LEN],
            Some(&f.payload_digest),
        );
        assert_eq!(h, f.hash(), "the chain is unchanged");
        b.extend_from_slice(&o.bytes[f.len()..]);
        let mut meta = o.meta.clone();
        meta.insert(
            "sj-blake3".into(),
            sjournal::format::hash::content_hash(&b).to_hex(),
        );
        overwrite(&remote, &seg(11), Bytes::from(b), &meta).await;
        let f = findings(&remote, &opts).await;
        assert!(
            f.iter().any(|f| f
                .contains("record seq 11 is marked erased but no sjournal.erased record names it")),
            "{name}: {f:?}"
        );
    }
}
