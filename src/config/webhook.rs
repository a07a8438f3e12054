//! `[[webhook]]` handlers in `<root>/config.toml`, beside the exec handlers:
//!
//! ```toml
//! [[webhook]]
//! name = "ci"                          # unique; keys the delivery state and the journal records
//! events = ["PostToolUseFailure", "Stop"]   # host event names; "*" = every event
//! url = "https://ci.example.com/hooks/sjournal"
//! timeout_ms = 5000                    # one attempt, connect to last byte (default 5000)
//! headers = { Authorization = "Bearer ${SJOURNAL_WEBHOOK_TOKEN}" }
//! ca_file = "/etc/ssl/corp-ca.pem"     # optional: trust these roots instead of the bundled ones
//!
//! [webhook.retry]
//! attempts = 6                         # tries of one event per deliverer run (default 6)
//! backoff_ms = 1000                    # wait after the first failure, doubled after each
//! max_backoff_ms = 60000               # longest wait
//! ```
//!
//! `${NAME}` in `url` and in header values is read from the deliverer's environment when it
//! sends (`$$` is a literal `$`). Expanded values are never journaled or printed: records and
//! status name the URL as configured, header names only, and any expanded value that shows up
//! in an error or a response, as it is or encoded (see `webhook::redact`), is replaced by
//! `[redacted]`.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::Deserialize;

use crate::limits::{
    WEBHOOK_ATTEMPTS_DEFAULT, WEBHOOK_BACKOFF_MS_DEFAULT, WEBHOOK_MAX_BACKOFF_MS_DEFAULT,
    WEBHOOK_NAME_MAX_BYTES, WEBHOOK_TIMEOUT_MS_DEFAULT, WEBHOOK_TIMEOUT_MS_MAX,
};

#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WebhookHandler {
    pub name: String,
    pub events: Vec<String>,
    pub url: String,
    #[serde(default = "default_timeout")]
    pub timeout_ms: u64,
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    #[serde(default)]
    pub retry: RetryPolicy,
    /// PEM file of root certificates to trust instead of the bundled Mozilla roots.
    #[serde(default)]
    pub ca_file: Option<PathBuf>,
}

/// How one deliverer run retries an event that failed. An event is never dropped: when the
/// run's attempts are spent it stays pending for the next run (the next matching event, or
/// `sjournal webhook deliver`).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RetryPolicy {
    pub attempts: u32,
    pub backoff_ms: u64,
    pub max_backoff_ms: u64,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            attempts: WEBHOOK_ATTEMPTS_DEFAULT,
            backoff_ms: WEBHOOK_BACKOFF_MS_DEFAULT,
            max_backoff_ms: WEBHOOK_MAX_BACKOFF_MS_DEFAULT,
        }
    }
}

impl RetryPolicy {
    /// The wait after the `failures`-th failed attempt (1-based): `backoff_ms`, doubled after
    /// each further failure, at most `max_backoff_ms`.
    pub fn backoff_ms(&self, failures: u32) -> u64 {
        let doublings = failures.saturating_sub(1).min(32);
        self.backoff_ms
            .saturating_mul(1u64 << doublings)
            .min(self.max_backoff_ms)
    }
}

fn default_timeout() -> u64 {
    WEBHOOK_TIMEOUT_MS_DEFAULT
}

impl WebhookHandler {
    pub fn matches(&self, kind: &str) -> bool {
        self.events.iter().any(|e| e == "*" || e == kind)
    }
}

/// Headers sjournal sets itself; the configuration may not set them.
pub(crate) const RESERVED_HEADERS: &[&str] = &[
    "content-type",
    "content-length",
    "transfer-encoding",
    "host",
    "connection",
    "idempotency-key",
];

/// Checks every webhook; the message says which one, what is wrong and what to write instead.
pub fn validate(hooks: &[WebhookHandler]) -> Result<(), String> {
    let mut names = std::collections::BTreeSet::new();
    for (i, h) in hooks.iter().enumerate() {
        let at = format!("[[webhook]] #{} ({:?})", i + 1, h.name);
        let fail = |what: String| Err(format!("{at}: {what}"));
        if h.name.is_empty()
            || h.name.len() > WEBHOOK_NAME_MAX_BYTES
            || !h
                .name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        {
            return fail(format!(
                "name must be 1 to {WEBHOOK_NAME_MAX_BYTES} characters of A-Z a-z 0-9 - _ \
                 (it names the delivery state files)"
            ));
        }
        if !names.insert(h.name.as_str()) {
            return fail("another [[webhook]] has the same name; names must be unique".into());
        }
        if h.events.is_empty() || h.events.iter().any(String::is_empty) {
            return fail(
                "events must list host event names (e.g. [\"Stop\"]), or [\"*\"] for every event"
                    .into(),
            );
        }
        if let Some(e) = h.events.iter().find(|e| e.starts_with("sjournal.")) {
            return fail(format!(
                "events: {e:?} is a record sjournal writes itself, not a host event; webhooks \
                 deliver host events only"
            ));
        }
        check_url(&h.url).or_else(|e| fail(format!("url {:?}: {e}", h.url)))?;
        if h.timeout_ms == 0 || h.timeout_ms > WEBHOOK_TIMEOUT_MS_MAX {
            return fail(format!(
                "timeout_ms = {} is out of range; use 1 to {WEBHOOK_TIMEOUT_MS_MAX} (default \
                 {WEBHOOK_TIMEOUT_MS_DEFAULT})",
                h.timeout_ms
            ));
        }
        for (name, value) in &h.headers {
            check_header(name, value).or_else(|e| fail(format!("headers.{name}: {e}")))?;
        }
        let r = &h.retry;
        if r.attempts == 0 {
            return fail("retry.attempts must be at least 1".into());
        }
        if r.backoff_ms < 10 || r.max_backoff_ms < r.backoff_ms {
            return fail(format!(
                "retry.backoff_ms = {} and retry.max_backoff_ms = {}: backoff_ms must be at \
                 least 10 and max_backoff_ms at least backoff_ms",
                r.backoff_ms, r.max_backoff_ms
            ));
        }
        if h.ca_file.as_ref().is_some_and(|p| !p.is_absolute()) {
            return fail("ca_file must be an absolute path to a PEM file".into());
        }
    }
    Ok(())
}

fn check_url(url: &str) -> Result<(), String> {
    let t = Template::parse(url)?;
    let lit = t.literal_prefix();
    if !(lit.starts_with("https://") || lit.starts_with("http://")) {
        return Err(
            "must start with http:// or https:// (written out, not from a variable), \
                    e.g. \"https://example.com/hooks/sjournal\""
                .into(),
        );
    }
    // Placeholders stand for any value; check the shape with a stand-in.
    let sample = t.expand(&|_| Some("x".into()), &mut Vec::new())?;
    let uri: ureq::http::Uri = sample
        .parse()
        .map_err(|e| format!("is not a valid URL ({e})"))?;
    if uri.host().is_none_or(str::is_empty) {
        return Err("names no host".into());
    }
    Ok(())
}

fn check_header(name: &str, value: &str) -> Result<(), String> {
    if ureq::http::HeaderName::from_bytes(name.as_bytes()).is_err() {
        return Err("is not a valid header name (letters, digits and -)".into());
    }
    let lower = name.to_ascii_lowercase();
    if RESERVED_HEADERS.contains(&lower.as_str()) || lower.starts_with("x-sjournal-") {
        return Err(format!(
            "sjournal sets this header itself; remove it (reserved: {}, X-Sjournal-*)",
            RESERVED_HEADERS.join(", ")
        ));
    }
    let t = Template::parse(value)?;
    let sample = t.expand(&|_| Some("x".into()), &mut Vec::new())?;
    if ureq::http::HeaderValue::from_str(&sample).is_err() {
        return Err("the value holds characters a header cannot carry (a line break?)".into());
    }
    Ok(())
}

/// A string with `${NAME}` placeholders filled from the environment when a request is sent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Template {
    parts: Vec<Part>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Part {
    Lit(String),
    Var(String),
}

impl Template {
    pub fn parse(s: &str) -> Result<Template, String> {
        let mut parts = Vec::new();
        let mut lit = String::new();
        let mut rest = s;
        while let Some(i) = rest.find('$') {
            lit.push_str(&rest[..i]);
            rest = &rest[i + 1..];
            if let Some(r) = rest.strip_prefix('$') {
                lit.push('$');
                rest = r;
                continue;
            }
            let Some(r) = rest.strip_prefix('{') else {
                return Err(
                    "a '$' must start ${NAME} (a variable) or be doubled ($$ for a literal $)"
                        .into(),
                );
            };
            let Some(end) = r.find('}') else {
                return Err("\"${\" without its closing \"}\"".into());
            };
            let name = &r[..end];
            let valid = name
                .bytes()
                .next()
                .is_some_and(|b| b.is_ascii_alphabetic() || b == b'_')
                && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
            if !valid {
                return Err(format!(
                    "${{{name}}} is not a variable name (letters, digits and _, not starting \
                     with a digit)"
                ));
            }
            if !lit.is_empty() {
                parts.push(Part::Lit(std::mem::take(&mut lit)));
            }
            parts.push(Part::Var(name.to_owned()));
            rest = &r[end + 1..];
        }
        lit.push_str(rest);
        if !lit.is_empty() {
            parts.push(Part::Lit(lit));
        }
        Ok(Template { parts })
    }

    /// The text before the first placeholder.
    fn literal_prefix(&self) -> &str {
        match self.parts.first() {
            Some(Part::Lit(s)) => s,
            _ => "",
        }
    }

    /// The variables it reads, in order.
    pub fn vars(&self) -> impl Iterator<Item = &str> {
        self.parts.iter().filter_map(|p| match p {
            Part::Var(v) => Some(v.as_str()),
            Part::Lit(_) => None,
        })
    }

    /// Fills the placeholders from `env`; each value used is added to `secrets`. A variable
    /// that is unset or empty is an error naming it.
    pub fn expand(
        &self,
        env: &dyn Fn(&str) -> Option<String>,
        secrets: &mut Vec<String>,
    ) -> Result<String, String> {
        let mut out = String::new();
        for p in &self.parts {
            match p {
                Part::Lit(s) => out.push_str(s),
                Part::Var(v) => {
                    let value = env(v).filter(|x| !x.is_empty()).ok_or_else(|| {
                        format!(
                            "${{{v}}} is not set (or empty) in the deliverer's environment; set \
                             it where the hook runs (the deliverer inherits the hook's \
                             environment), or where `sjournal webhook deliver` runs"
                        )
                    })?;
                    out.push_str(&value);
                    secrets.push(value);
                }
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hook(extra: &str) -> Result<Vec<WebhookHandler>, String> {
        #[derive(Deserialize)]
        #[serde(deny_unknown_fields)]
        struct C {
            webhook: Vec<WebhookHandler>,
        }
        let text = format!("[[webhook]]\nname = \"a\"\nevents = [\"Stop\"]\n{extra}");
        let c: C = toml::from_str(&text).map_err(|e| e.to_string())?;
        validate(&c.webhook).map(|_| c.webhook)
    }

    #[test]
    fn a_plain_webhook_gets_the_defaults() {
        let h = hook("url = \"https://example.com/x\"\n").unwrap();
        assert_eq!(h[0].timeout_ms, 5000);
        assert_eq!(h[0].retry, RetryPolicy::default());
        assert!(h[0].matches("Stop") && !h[0].matches("PreToolUse"));
    }

    #[test]
    fn mistakes_name_the_webhook_and_the_field() {
        for (extra, says) in [
            (
                "url = \"ftp://x/y\"\n",
                "url \"ftp://x/y\": must start with http",
            ),
            ("url = \"${BASE}/y\"\n", "must start with http"),
            ("url = \"https://\"\n", "url"),
            ("url = \"https://h/${1X}\"\n", "not a variable name"),
            ("url = \"https://h/$X\"\n", "be doubled"),
            ("url = \"https://h/${X\"\n", "closing"),
            ("url = \"https://h/\"\ntimeout_ms = 0\n", "timeout_ms = 0"),
            (
                "url = \"https://h/\"\nheaders = { \"Idempotency-Key\" = \"x\" }\n",
                "headers.Idempotency-Key: sjournal sets",
            ),
            (
                "url = \"https://h/\"\nheaders = { \"Bad Name\" = \"x\" }\n",
                "not a valid header name",
            ),
            ("url = \"https://h/\"\n[retry]\n", "unknown field"),
            (
                "url = \"https://h/\"\nretry = { attempts = 0 }\n",
                "retry.attempts",
            ),
            (
                "url = \"https://h/\"\nretry = { backoff_ms = 100, max_backoff_ms = 50 }\n",
                "max_backoff_ms",
            ),
            ("url = \"https://h/\"\nca_file = \"ca.pem\"\n", "absolute"),
            (
                "url = \"https://h/\"\nsecret = \"x\"\n",
                "unknown field `secret`",
            ),
        ] {
            let e = hook(extra).unwrap_err();
            assert!(e.contains(says), "{extra:?}: {e}");
        }
        let e = hook("url = \"https://h/\"\n[[webhook]]\nname = \"a\"\nevents = [\"*\"]\nurl = \"https://h/\"\n").unwrap_err();
        assert!(e.contains("#2") && e.contains("same name"), "{e}");
    }

    #[test]
    fn templates_expand_from_the_environment_and_remember_what_they_used() {
        let t = Template::parse("Bearer ${TOKEN} $$5").unwrap();
        assert_eq!(t.vars().collect::<Vec<_>>(), ["TOKEN"]);
        let mut secrets = Vec::new();
        let env = |k: &str| (k == "TOKEN").then(|| "s3cret".to_owned());
        assert_eq!(t.expand(&env, &mut secrets).unwrap(), "Bearer s3cret $5");
        assert_eq!(secrets, ["s3cret"]);
        let e = t.expand(&|_| None, &mut Vec::new()).unwrap_err();
        assert!(e.contains("${TOKEN} is not set"), "{e}");
    }

    #[test]
    fn backoff_doubles_up_to_its_cap() {
        let r = RetryPolicy {
            attempts: 9,
            backoff_ms: 100,
            max_backoff_ms: 1000,
        };
        let waits: Vec<u64> = (1..=6).map(|f| r.backoff_ms(f)).collect();
        assert_eq!(waits, [100, 200, 400, 800, 1000, 1000]);
    }
}
