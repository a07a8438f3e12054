//! Unit tests of the redactor: markers, JSON shapes, allowlists. The recall corpus of every
//! rule, through the hook binary and the CLI, is in tests/redaction.rs.

use super::*;

fn red() -> Redactor {
    Redactor::with_key(&RedactSection::default(), [7; 32])
}

/// A GitHub token made at run time (never a literal a scanner would flag in the repo).
fn ghp() -> String {
    format!("ghp_{}", "aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5")
}

#[test]
fn a_secret_in_a_json_string_becomes_a_marker_and_the_json_stays_valid() {
    let t = ghp();
    let doc = format!(r#"{{"a": 1.50, "b":"token is {t} ok", "c": "\u00e9"}}"#);
    let (out, r) = red().json(&doc);
    let out = out.unwrap();
    assert!(!out.contains(&t), "{out}");
    let tag = red().key().tag(t.as_bytes());
    assert!(
        out.contains(&format!("[REDACTED:github-token:{tag}]")),
        "{out}"
    );
    // Bytes outside the changed string are as they came.
    assert!(out.starts_with(r#"{"a": 1.50, "b":""#) && out.ends_with(r#", "c": "\u00e9"}"#));
    serde_json::from_str::<serde_json::Value>(&out).unwrap();
    assert_eq!(r.found.len(), 1);
    assert_eq!(r.found[0].path, "/b");
    assert_eq!(r.found[0].rule, "github-token");
}

#[test]
fn escaped_json_inside_a_string_is_walked_and_reescaped() {
    let t = ghp();
    let inner = serde_json::json!({"auth": {"token": t}, "n": 1}).to_string();
    let mid = serde_json::json!({"stdout": inner}).to_string();
    let outer = serde_json::json!({"tool_response": mid}).to_string();
    let (out, r) = red().json(&outer);
    let out = out.unwrap();
    assert!(!out.contains(&t));
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let mid: serde_json::Value =
        serde_json::from_str(v["tool_response"].as_str().unwrap()).unwrap();
    let inner: serde_json::Value = serde_json::from_str(mid["stdout"].as_str().unwrap()).unwrap();
    assert!(inner["auth"]["token"]
        .as_str()
        .unwrap()
        .starts_with("[REDACTED:github-token:"));
    assert_eq!(r.found[0].path, "/tool_response#/stdout#/auth/token");
}

#[test]
fn the_same_secret_gets_the_same_tag_and_another_key_another() {
    let t = ghp();
    let doc = format!(r#"{{"x":"{t}","y":["{t}"]}}"#);
    let (_, r) = red().json(&doc);
    assert_eq!(r.found.len(), 2);
    assert_eq!(r.found[0].tag, r.found[1].tag);
    let other = Redactor::with_key(&RedactSection::default(), [8; 32]);
    assert_ne!(other.json(&doc).1.found[0].tag, r.found[0].tag);
    assert_eq!(r.found[1].path, "/y/0");
}

#[test]
fn a_member_named_like_a_password_is_an_assignment() {
    let doc = r#"{"env":{"DB_PASSWORD":"Tr0ub4dor&3x","HOME":"/home/u","user":"alice"}}"#;
    let (out, r) = red().json(doc);
    let out = out.unwrap();
    assert!(!out.contains("Tr0ub4dor"), "{out}");
    assert!(out.contains("/home/u") && out.contains("alice"));
    assert_eq!(r.found[0].path, "/env/DB_PASSWORD");
}

#[test]
fn text_that_is_not_json_and_bytes_that_are_not_utf8_are_scanned() {
    let t = ghp();
    let (out, r) = red().bytes(format!("{{broken {t}").as_bytes());
    assert!(!String::from_utf8(out.unwrap()).unwrap().contains(&t));
    assert_eq!(r.found[0].path, "");
    let mut raw = b"\xff\xfe ".to_vec();
    raw.extend_from_slice(t.as_bytes());
    let (out, _) = red().bytes(&raw);
    let out = out.unwrap();
    assert!(!out.windows(t.len()).any(|w| w == t.as_bytes()));
    assert!(out.starts_with(b"\xff\xfe [REDACTED:github-token:"));
}

#[test]
fn allowlists_and_the_switch_keep_what_they_name() {
    let t = ghp();
    let doc = format!(r#"{{"x":"{t}"}}"#);
    let tag = red().key().tag(t.as_bytes());
    for section in [
        RedactSection {
            enabled: false,
            ..Default::default()
        },
        RedactSection {
            allowlist: config::Allowlist {
                values: vec![t.clone()],
                ..Default::default()
            },
            ..Default::default()
        },
        RedactSection {
            allowlist: config::Allowlist {
                patterns: vec!["^ghp_aB3".into()],
                ..Default::default()
            },
            ..Default::default()
        },
        RedactSection {
            allowlist: config::Allowlist {
                tags: vec![tag.clone()],
                ..Default::default()
            },
            ..Default::default()
        },
    ] {
        let r = Redactor::with_key(&section, [7; 32]);
        let (out, report) = r.json(&doc);
        assert!(out.is_none() && report.found.is_empty(), "{section:?}");
    }
}

#[test]
fn a_user_rule_redacts_with_its_id() {
    let section = RedactSection {
        rules: vec![config::UserRule {
            id: "acme".into(),
            regex: r"acme_([0-9a-f]{16})".into(),
            keywords: vec!["ACME_".into()],
            entropy: 0.0,
            secret_group: 1,
        }],
        ..Default::default()
    };
    let r = Redactor::with_key(&section, [7; 32]);
    let (out, rep) = r.json(r#"{"x":"id acme_0123456789abcdef end"}"#);
    let out = out.unwrap();
    assert!(out.contains("id acme_[REDACTED:acme:"), "{out}");
    assert_eq!(rep.found[0].rule, "acme");
}

#[test]
fn markers_are_not_redacted_again() {
    let t = ghp();
    let doc = format!(r#"{{"x":"token={t}","p":"password: Xk9#mQ2$vL7p"}}"#);
    let (once, _) = red().json(&doc);
    let once = once.unwrap();
    let (twice, r) = red().json(&once);
    assert!(twice.is_none(), "{twice:?}");
    assert!(r.found.is_empty());
}

#[test]
fn a_multibyte_neighbour_is_never_split() {
    let doc = "{\"p\":\"password=é9Xk#mQ2$vL7pé\"}";
    let (out, _) = red().json(doc);
    serde_json::from_str::<serde_json::Value>(&out.unwrap()).unwrap();
}

#[test]
fn the_record_names_rule_path_and_tag_never_the_secret() {
    let t = ghp();
    let doc = format!(r#"{{"x":"{t}"}}"#);
    let (out, r) = red().json(&doc);
    let out = out.unwrap();
    let rec = r.record("PostToolUse", out.as_bytes()).unwrap();
    assert!(!rec.windows(t.len()).any(|w| w == t.as_bytes()));
    let back: RedactedRecord = crate::format::payload::decode_system(1, &rec).unwrap();
    assert_eq!(back.found, r.found);
    // The event's hash is keyed (from the tag key): once the event is erased, nobody without
    // the root's key can test a guess of it; the unkeyed hash is no longer written.
    assert!(back.event_blake3.is_empty());
    assert_eq!(
        back.event_hash,
        blake3::keyed_hash(
            &blake3::derive_key("sjournal redaction event hash v1", &[7; 32]),
            out.as_bytes()
        )
        .to_hex()
        .to_string()
    );
    assert_ne!(
        back.event_hash,
        blake3::hash(out.as_bytes()).to_hex().to_string()
    );
    assert_eq!(back.ruleset, rules::RULESET_VERSION);
    assert_eq!(back.key_id.as_deref().map(str::len), Some(16));
}

#[test]
fn text_without_keywords_is_not_walked() {
    let doc = r#"{"session_id":"0b5e2f6c-1d2e-4f3a-9b8c-7d6e5f4a3b2c","sha":"3f9a1c07d2e4b6a8c0e2f4a6b8d0c2e4f6a8b0c2"}"#;
    assert!(!red().may_match(doc.as_bytes()));
    assert!(red().json(doc).0.is_none());
}
