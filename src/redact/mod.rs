//! Redaction at ingest: secrets in an event are replaced by a marker before the event's first
//! byte is written anywhere (journal, rescue journal, spool, fallback spool, and so every
//! webhook body, export and shipped segment made from them).
//!
//! - **What is a secret**: what a rule finds ([`rules`]: gitleaks-family token formats, private
//!   key blocks, JWTs, URLs and connection strings with a password, `Authorization` headers,
//!   and `password|secret|token|api_key = …` assignments gated by entropy), plus the user's
//!   own rules, less the allowlists ([`config`]). A keyword prefilter decides which rules run
//!   at all ([`scan`]).
//! - **Where**: inside every JSON string value, after its escapes are undone, and inside
//!   strings that hold JSON themselves, to any depth (`json`); input that is not JSON is
//!   scanned as text. The JSON stays valid, and every byte outside a changed string stays as
//!   it came.
//! - **The marker**: `[REDACTED:<rule>:<tag>]`, where the tag is the first 8 hex digits of
//!   blake3 in keyed mode of the secret's bytes, under a key derived from the root's
//!   `spool.key` (`derive_key("sjournal redaction tag v1", key)`): the same secret gives the
//!   same tag in every session of the root, so an auditor can correlate without seeing it,
//!   and nobody without the key can test a guess against a tag. The key never leaves the
//!   machine; where the root's key cannot be had (a root that cannot be written), tags are
//!   made under a one-off key and the record says so (`key_id` absent).
//! - **The record**: an `sjournal.redacted` record follows the event in its batch (after its
//!   `sjournal.host` record, if any), naming for each secret its rule, its place (a JSON
//!   Pointer) and its tag, never the secret ([`RedactedRecord`]).
//!
//! The raw secret is never stored: it exists only in the hook's memory between reading stdin
//! and this step (and in what the hook passes on to nothing: exec handlers get the redacted
//! event too).

pub mod config;
pub mod ingest;
mod json;
pub mod rules;
pub mod scan;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};

use serde::{Deserialize, Serialize};

use crate::journal::Root;
use crate::storage::Fs;

pub use config::RedactSection;
use scan::{RuleSet, UserAllow, BUILTIN};

/// The record that follows a redacted event.
pub use crate::format::payload::KIND_REDACTED;
/// Hex digits of a marker's tag.
pub const TAG_HEX_LEN: usize = 8;
/// At most this many findings are listed in one record; the rest are counted.
pub(crate) const FOUND_MAX: usize = 1000;

const TAG_CONTEXT: &str = "sjournal redaction tag v1";
const TAG_ID_CONTEXT: &str = "sjournal redaction tag v1 key id";

/// One secret that was replaced: its rule, where it was, and its tag. Never the secret.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Finding {
    pub rule: String,
    /// JSON Pointer (RFC 6901) of the string that held it; `#` continues into a string
    /// holding JSON (`/tool_response/stdout#/token`); empty for input that is not JSON.
    pub path: String,
    pub tag: String,
}

/// The payload of `sjournal.redacted` (MessagePack map, named fields): what was redacted
/// from the event record before it (the nearest one: only its `sjournal.host` record may
/// stand between them).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RedactedRecord {
    /// The event's record kind.
    pub event_kind: String,
    /// Records written before 2026-12-04: blake3 (unkeyed, hex) of the event as stored. It
    /// outlived an erasure of the event, and with the rest of the event known let a guess of
    /// an erased value be checked; no longer written ([`RedactedRecord::event_hash`]).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub event_blake3: String,
    /// keyed blake3 (hex) of the event as stored (its JSON text, or for input that is not JSON,
    /// `sjournal.unparsed`, the raw bytes kept), under a key derived from the tag key
    /// ("sjournal redaction event hash v1"): it names the event for whoever holds the root's
    /// key, and lets nobody else test a guess of it once the event is erased.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub event_hash: String,
    /// The id of the key the tags were made with (16 hex digits of
    /// `derive_key("sjournal redaction tag v1 key id", spool.key)`); absent: a one-off key
    /// (tags correlate only within this record).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key_id: Option<String>,
    /// The version of the built-in rules (`rules::RULESET_VERSION`).
    pub ruleset: u32,
    /// What was found, in the order of the event's bytes (at most `FOUND_MAX`).
    pub found: Vec<Finding>,
    /// Findings left out of `found`.
    #[serde(default)]
    pub more: u64,
}

/// The key tags are made with.
#[derive(Clone)]
struct TagKey {
    key: [u8; 32],
    /// None: a one-off key (see [`RedactedRecord::key_id`]).
    id: Option<String>,
    /// The key of [`RedactedRecord::event_hash`], derived from `key` once.
    event_key: EventKey,
}

impl TagKey {
    fn from_key(key: [u8; 32], persistent: bool) -> TagKey {
        let id = persistent.then(|| {
            blake3::Hash::from(blake3::derive_key(TAG_ID_CONTEXT, &key)).to_hex()[..16].to_owned()
        });
        let event_key = EventKey(blake3::derive_key(EVENT_HASH_CONTEXT, &key));
        TagKey { key, id, event_key }
    }

    fn one_off() -> TagKey {
        use rand_core::RngCore;
        let mut key = [0u8; 32];
        rand_core::OsRng.fill_bytes(&mut key);
        TagKey::from_key(key, false)
    }

    fn tag(&self, secret: &[u8]) -> String {
        blake3::keyed_hash(&self.key, secret).to_hex()[..TAG_HEX_LEN].to_owned()
    }
}

/// Where the tag key comes from.
enum KeySource {
    /// The root's spool key (created if the root has none yet), read on the first secret.
    Root {
        root: Root,
        fs: Arc<dyn Fs>,
    },
    Fixed(TagKey),
}

/// One secret found in a text: `text[start..end]`, by `rule`.
struct Span<'a> {
    start: usize,
    end: usize,
    rule: &'a str,
    /// The secret's bytes, its escape sequences undone.
    secret: Vec<u8>,
}

/// What redacts an event: the rules, the allowlists and the tag key. Cheap to make: the
/// built-in rules are compiled once per process, each regex on its first use, and the key is
/// read only when a secret is found.
pub struct Redactor {
    enabled: bool,
    user: Option<RuleSet>,
    allow: UserAllow,
    allow_tags: Vec<String>,
    source: KeySource,
    key: OnceLock<TagKey>,
}

impl std::fmt::Debug for Redactor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Redactor")
            .field("enabled", &self.enabled)
            .finish_non_exhaustive()
    }
}

/// What redaction did to one input.
#[derive(Debug, Clone, Default)]
pub struct Report {
    pub found: Vec<Finding>,
    /// The tag key's id (None: a one-off key).
    pub key_id: Option<String>,
    /// The key of [`RedactedRecord::event_hash`] (the tag key's).
    event_key: EventKey,
}

/// [`RedactedRecord::event_hash`]'s key; not shown by `Debug`.
#[derive(Clone, Default, PartialEq, Eq)]
struct EventKey([u8; 32]);

impl std::fmt::Debug for EventKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("EventKey(..)")
    }
}

const EVENT_HASH_CONTEXT: &str = "sjournal redaction event hash v1";

impl Redactor {
    /// The redactor of `root` as `section` configures it.
    pub fn new(section: &RedactSection, root: &Root, fs: Arc<dyn Fs>) -> Redactor {
        Redactor::with_source(
            section,
            KeySource::Root {
                root: root.clone(),
                fs,
            },
        )
    }

    /// A redactor whose tags are made under `key` (tests, benchmarks, `redact --check`
    /// without a root key).
    pub fn with_key(section: &RedactSection, key: [u8; 32]) -> Redactor {
        Redactor::with_source(section, KeySource::Fixed(TagKey::from_key(key, true)))
    }

    /// A redactor that writes nothing: the root's tag key when it has one (so tags match
    /// what the journal holds), else a one-off key. The bool says which.
    pub fn for_check(section: &RedactSection, root: &Root) -> (Redactor, bool) {
        let key = crate::journal::spool::key::derived(root, TAG_CONTEXT).ok();
        let keyed = key.is_some();
        let key = key.map_or_else(TagKey::one_off, |k| TagKey::from_key(k, true));
        let section = RedactSection {
            enabled: true,
            ..section.clone()
        };
        (
            Redactor::with_source(&section, KeySource::Fixed(key)),
            keyed,
        )
    }

    /// A redactor whose tags are made under a one-off key: for input that has no root to
    /// keep it (the event is lost anyway, and its notice must not carry a secret).
    pub fn one_off(section: &RedactSection) -> Redactor {
        Redactor::with_source(section, KeySource::Fixed(TagKey::one_off()))
    }

    fn with_source(section: &RedactSection, source: KeySource) -> Redactor {
        Redactor {
            enabled: section.enabled,
            user: RuleSet::user(&section.rules),
            allow: UserAllow::new(&section.allowlist),
            allow_tags: section
                .allowlist
                .tags
                .iter()
                .map(|t| t.to_ascii_lowercase())
                .collect(),
            source,
            key: OnceLock::new(),
        }
    }

    pub fn enabled(&self) -> bool {
        self.enabled
    }

    fn key(&self) -> &TagKey {
        self.key.get_or_init(|| match &self.source {
            KeySource::Fixed(k) => k.clone(),
            KeySource::Root { root, fs } => {
                let derived =
                    crate::journal::spool::key::derived(root, TAG_CONTEXT).or_else(|_| {
                        // The first secret of a new root: make its key the way a writer would.
                        let _ = root.ensure_with(&**fs);
                        crate::journal::spool::key::derived(root, TAG_CONTEXT)
                    });
                match derived {
                    Ok(k) => TagKey::from_key(k, true),
                    Err(_) => TagKey::one_off(),
                }
            }
        })
    }

    /// Where any rule's keyword starts in `text`.
    fn keyword_positions(&self, text: &[u8], out: &mut Vec<usize>) {
        BUILTIN.keyword_positions(text, out);
        if let Some(u) = &self.user {
            u.keyword_positions(text, out);
        }
    }

    fn may_match(&self, text: &[u8]) -> bool {
        BUILTIN.may_match(text) || self.user.as_ref().is_some_and(|u| u.may_match(text))
    }

    /// The secrets in `text`, merged into spans of `text`, with their rule ids and the
    /// secret's bytes (what the span's escape sequences mean, where it holds any: the tag is
    /// of the secret, however it was escaped).
    fn spans<'a>(&'a self, text: &[u8]) -> Vec<Span<'a>> {
        let view = scan::Unescaped::of(text);
        let hay = view.as_ref().map_or(text, |v| &v.text[..]);
        let mut hits = Vec::new();
        BUILTIN.scan(hay, &self.allow, &mut hits);
        let builtin = hits.len();
        if let Some(u) = &self.user {
            u.scan(hay, &self.allow, &mut hits);
        }
        // Rules are told apart by set: the user's are numbered after the built-in ones.
        for h in &mut hits[builtin..] {
            h.rule += 1 << 16;
        }
        // What is already a marker stays one: no rule reads into it.
        let markers = scan::markers(hay);
        if !markers.is_empty() {
            hits.retain(|h| !markers.iter().any(|&(s, e)| h.start < e && s < h.end));
        }
        scan::merge(hits)
            .into_iter()
            .map(|(h, _)| {
                let rule = match (h.rule >> 16, &self.user) {
                    (0, _) => BUILTIN.id(h.rule),
                    (_, Some(u)) => u.id(h.rule & 0xffff),
                    (_, None) => unreachable!("user hits come from user rules"),
                };
                let secret = hay[h.start..h.end].to_vec();
                let (start, end) = view
                    .as_ref()
                    .map_or((h.start, h.end), |v| v.source(h.start, h.end));
                Span {
                    start,
                    end,
                    rule,
                    secret,
                }
            })
            .collect()
    }

    /// `text` (a JSON string's value, or text that is not JSON) with its secrets replaced by
    /// markers (None: none found); each is added to `found` at `path`. `key`: the member
    /// name the text is the value of, read as `key=text` (a `"password": "…"` member is an
    /// assignment).
    fn text(
        &self,
        text: &str,
        key: Option<&str>,
        path: &str,
        found: &mut Vec<Finding>,
    ) -> Option<String> {
        let keyed = key.filter(|k| self.may_match(k.as_bytes()));
        let (scanned, shift) = match keyed {
            Some(k) => (format!("{k}={text}"), k.len() + 1),
            None => (String::new(), 0),
        };
        let hay = if keyed.is_some() { &scanned } else { text };
        let spans = self.spans(hay.as_bytes());
        let b = text.as_bytes();
        let mut out = String::new();
        let mut at = 0;
        for sp in spans {
            if sp.end <= shift {
                continue;
            }
            let (start, end) = (sp.start.max(shift) - shift, sp.end - shift);
            // Rules match bytes: a span is widened to whole characters.
            let start = (0..=start)
                .rev()
                .find(|&i| text.is_char_boundary(i))
                .unwrap_or(0);
            let end = (end..=b.len())
                .find(|&i| text.is_char_boundary(i))
                .unwrap_or(b.len());
            if start < at {
                continue;
            }
            // The secret as the rule saw it; a span widened past the key it was read with, or
            // to whole characters, is tagged by its bytes in the text.
            let secret = if sp.start >= shift && (start, end) == (sp.start - shift, sp.end - shift)
            {
                &sp.secret[..]
            } else {
                &b[start..end]
            };
            let tag = self.key().tag(secret);
            if self.allow_tags.contains(&tag) {
                continue;
            }
            out.push_str(&text[at..start]);
            out.push_str(&marker(sp.rule, &tag));
            at = end;
            found.push(Finding {
                rule: sp.rule.to_owned(),
                path: path.to_owned(),
                tag,
            });
        }
        if at == 0 {
            return None;
        }
        out.push_str(&text[at..]);
        Some(out)
    }

    /// Redacts one JSON document (an event's text). `out` is None when nothing was found.
    pub fn json(&self, text: &str) -> (Option<String>, Report) {
        if !self.enabled || !self.may_match(text.as_bytes()) {
            return (None, Report::default());
        }
        let mut w = json::Walk::new(self);
        let out = w.document(text);
        self.report(out, w.found)
    }

    /// Redacts input as it came: a JSON document when it is one, else text (bytes that are
    /// not UTF-8 are scanned as they are).
    pub fn bytes(&self, raw: &[u8]) -> (Option<Vec<u8>>, Report) {
        if !self.enabled || !self.may_match(raw) {
            return (None, Report::default());
        }
        if let Ok(text) = std::str::from_utf8(raw) {
            if serde_json::from_str::<serde::de::IgnoredAny>(text).is_ok() {
                let (out, r) = self.json(text);
                return (out.map(String::into_bytes), r);
            }
            let mut found = Vec::new();
            let out = self.text(text, None, "", &mut found);
            let (out, r) = self.report(out, found);
            return (out.map(String::into_bytes), r);
        }
        let mut found = Vec::new();
        let mut out = Vec::new();
        let mut at = 0;
        for sp in self.spans(raw) {
            if sp.start < at {
                continue;
            }
            let tag = self.key().tag(&sp.secret);
            if self.allow_tags.contains(&tag) {
                continue;
            }
            out.extend_from_slice(&raw[at..sp.start]);
            out.extend_from_slice(marker(sp.rule, &tag).as_bytes());
            at = sp.end;
            found.push(Finding {
                rule: sp.rule.to_owned(),
                path: String::new(),
                tag,
            });
        }
        if found.is_empty() {
            return (None, Report::default());
        }
        out.extend_from_slice(&raw[at..]);
        (Some(out), self.report(None::<()>, found).1)
    }

    fn report<T>(&self, out: Option<T>, found: Vec<Finding>) -> (Option<T>, Report) {
        let (key_id, event_key) = if found.is_empty() {
            (None, EventKey::default())
        } else {
            let k = self.key();
            (k.id.clone(), k.event_key.clone())
        };
        (
            out,
            Report {
                found,
                key_id,
                event_key,
            },
        )
    }
}

/// The marker that replaces a secret.
pub fn marker(rule: &str, tag: &str) -> String {
    format!("[REDACTED:{rule}:{tag}]")
}

impl Report {
    /// The `sjournal.redacted` payload for the event stored as `stored` (its JSON text, or the
    /// raw input of an unparsed record) under `kind`; None when nothing was redacted.
    pub fn record(&self, kind: &str, stored: &[u8]) -> Option<Vec<u8>> {
        if self.found.is_empty() {
            return None;
        }
        let keep = self.found.len().min(FOUND_MAX);
        Some(crate::format::payload::encode_system(&RedactedRecord {
            event_kind: kind.to_owned(),
            event_blake3: String::new(),
            event_hash: blake3::keyed_hash(&self.event_key.0, stored)
                .to_hex()
                .to_string(),
            key_id: self.key_id.clone(),
            ruleset: rules::RULESET_VERSION,
            found: self.found[..keep].to_vec(),
            more: (self.found.len() - keep) as u64,
        }))
    }
}

/// What an event carries of its redaction through the hook: the record for its batch, and
/// whether the session's user has been told already (set under the session's lock).
#[derive(Debug, Default)]
pub struct Redaction {
    /// The `sjournal.redacted` payload.
    pub record: Vec<u8>,
    /// Secrets redacted from the event.
    pub count: usize,
    /// The rules that found them, each once, in order of first finding.
    pub rules: Vec<String>,
    told_before: AtomicBool,
}

impl Clone for Redaction {
    fn clone(&self) -> Redaction {
        Redaction {
            record: self.record.clone(),
            count: self.count,
            rules: self.rules.clone(),
            told_before: AtomicBool::new(self.told_before.load(Ordering::Relaxed)),
        }
    }
}

impl Redaction {
    /// The redaction of the event stored as `stored` under `kind` (None: nothing redacted).
    pub fn of(report: &Report, kind: &str, stored: &[u8]) -> Option<Redaction> {
        let record = report.record(kind, stored)?;
        let mut rules: Vec<String> = Vec::new();
        for f in &report.found {
            if !rules.contains(&f.rule) {
                rules.push(f.rule.clone());
            }
        }
        Some(Redaction {
            record,
            count: report.found.len(),
            rules,
            told_before: AtomicBool::new(false),
        })
    }

    /// The session's journal already holds a redaction: its user was told then.
    pub fn set_told_before(&self) {
        self.told_before.store(true, Ordering::Relaxed);
    }

    /// What the user is told through the host's visible channel: once per session, with the
    /// session's first redacted event.
    pub fn notice(&self, session_id: &str) -> Option<String> {
        if self.told_before.load(Ordering::Relaxed) {
            return None;
        }
        Some(format!(
            "sjournal redacted {} secret{} ({}) from this event before storing it; the journal \
             keeps [REDACTED:rule:tag] markers instead, never the values. Later redactions in \
             this session are recorded without telling you again (`{}` lists them; \
             `[redact]` in config.toml configures it).",
            self.count,
            if self.count == 1 { "" } else { "s" },
            self.rules.join(", "),
            redact_command(session_id)
        ))
    }
}

/// The command that lists what was redacted from a session's events.
pub fn redact_command(session_id: &str) -> String {
    crate::escape::text(&format!(
        "sjournal redact --session {}",
        crate::escape::shell_quote(session_id)
    ))
    .into_owned()
}

/// What was redacted from a session's events, counted from its `sjournal.redacted` records:
/// `show` (from the folded state) and `verify` (from the verified records) list it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Summary {
    /// Events something was redacted from (one `sjournal.redacted` record each).
    pub events: u64,
    /// Secrets redacted.
    pub secrets: u64,
    /// Secrets by rule (findings a record counts without listing them: under
    /// [`crate::fold::REDACTED_OTHER`]).
    pub by_rule: std::collections::BTreeMap<String, u64>,
    /// The seqs of the first redacted events' records, for `sjournal show --seq` (at most
    /// `SUMMARY_SEQS_MAX`; `verify` only).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub seqs: Vec<u64>,
    /// Records of the kind whose payload does not decode (seqs, at most
    /// `SUMMARY_SEQS_MAX`; `verify` only).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub undecodable: Vec<u64>,
}

/// Seqs a [`Summary`] lists.
pub(crate) const SUMMARY_SEQS_MAX: usize = 20;

impl Summary {
    /// The summary the fold keeps (`JournalFacts::redactions`); None when nothing was
    /// redacted.
    pub fn of_state(state: &crate::fold::State) -> Option<Summary> {
        let j = &state.journal;
        (j.redacted > 0).then(|| Summary {
            events: j.redacted,
            secrets: j.redactions.values().fold(0, |a, n| a.saturating_add(*n)),
            by_rule: j.redactions.clone(),
            ..Summary::default()
        })
    }

    /// The summary of the records `verify` noted in `bytes` (a journal's bytes, verified by
    /// the caller, whose chain ends at `head`: the last verified record's hash, in hex):
    /// reads the `sjournal.redacted` records at the offsets `seen` holds, not the journal.
    /// None if the bytes are not those verified: the record at `seen`'s last offset is not
    /// there or has another hash (the journal was replaced since it was verified), or a noted
    /// record is not there.
    pub fn of_verified(
        bytes: &[u8],
        seen: &crate::journal::reader::Seen,
        head: &str,
    ) -> Option<Summary> {
        let mut out = Summary::default();
        let last = crate::journal::scan::frame(bytes.get(seen.last?..)?).ok()?;
        if last.hash().to_hex() != head {
            return None;
        }
        for &at in &seen.noted {
            let f = crate::journal::scan::frame(bytes.get(at..)?).ok()?;
            if f.kind != KIND_REDACTED {
                continue;
            }
            use crate::format::payload::{decode_system, RedactedRules};
            match decode_system::<RedactedRules>(f.seq, f.payload) {
                Ok(r) => {
                    out.events += 1;
                    if out.seqs.len() < SUMMARY_SEQS_MAX {
                        out.seqs.push(f.seq);
                    }
                    // Counted as the fold counts them (bounded, saturating): `show` and
                    // `verify` agree.
                    let mut facts = crate::fold::JournalFacts {
                        redactions: std::mem::take(&mut out.by_rule),
                        ..Default::default()
                    };
                    facts.count_redactions(&r);
                    out.by_rule = facts.redactions;
                    out.secrets = out.by_rule.values().fold(0, |a, n| a.saturating_add(*n));
                }
                Err(_) if out.undecodable.len() < SUMMARY_SEQS_MAX => out.undecodable.push(f.seq),
                Err(_) => {}
            }
        }
        Some(out)
    }

    /// True if there is anything to list.
    pub fn is_empty(&self) -> bool {
        self.events == 0 && self.undecodable.is_empty()
    }

    /// `secrets (events): rule count, ...`, escaped for a terminal.
    pub fn counts(&self) -> String {
        let rules: Vec<String> = self
            .by_rule
            .iter()
            .map(|(r, n)| format!("{r} {n}"))
            .collect();
        crate::escape::text(&format!(
            "{} secret(s) in {} event(s): {}",
            self.secrets,
            self.events,
            rules.join(", ")
        ))
        .into_owned()
    }

    /// `verify`'s line under a journal's.
    pub fn verify_line(&self) -> String {
        let seqs: Vec<String> = self.seqs.iter().map(u64::to_string).collect();
        let mut line = format!(
            "    redacted at ingest: {}; records at seq {}{}",
            self.counts(),
            seqs.join(", "),
            if self.events as usize > self.seqs.len() {
                ", ..."
            } else {
                ""
            },
        );
        if !self.undecodable.is_empty() {
            let bad: Vec<String> = self.undecodable.iter().map(u64::to_string).collect();
            line.push_str(&format!(
                "; {KIND_REDACTED} records that do not decode at seq {}",
                bad.join(", ")
            ));
        }
        line
    }
}

#[cfg(test)]
mod tests;
