//! `[redact]` in `<root>/config.toml`: whether redaction at ingest runs (it does unless
//! `enabled = false`), rules of the user's own beside the built-in ones, and what is never a
//! secret.
//!
//! ```toml
//! [redact]
//! enabled = true                     # false: events are kept exactly as the host sent them
//!
//! [[redact.rules]]                   # as many as needed; same fields as the built-in rules
//! id = "acme-token"                  # lower-case letters, digits and '-' (it goes in the marker)
//! regex = 'acme_[0-9a-f]{32}'        # ASCII regex (the `regex` crate's syntax)
//! keywords = ["acme_"]               # the regex runs only on text holding one (none: always)
//! entropy = 3.0                      # least Shannon entropy of the secret (default 0)
//! secret_group = 0                   # 0: first group that matched, else the whole match
//!
//! [redact.allowlist]
//! patterns = ['^sk_test_4eC39HqLyjWDarjtT1zdp7dc$']  # a secret one of these matches is kept
//! values = ["not-a-secret-value"]    # exact secrets that are kept
//! tags = ["3f9a1c07"]                # the tag of a marker: that value is kept from now on
//! ```

use serde::Deserialize;

/// `[redact]`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RedactSection {
    pub enabled: bool,
    pub rules: Vec<UserRule>,
    pub allowlist: Allowlist,
}

impl Default for RedactSection {
    fn default() -> Self {
        RedactSection {
            enabled: true,
            rules: Vec::new(),
            allowlist: Allowlist::default(),
        }
    }
}

// The entropies are finite numbers checked by `validate`; the configuration compares whole.
impl Eq for RedactSection {}

/// `[[redact.rules]]`: a rule of the user's, in the built-in rules' shape.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UserRule {
    pub id: String,
    pub regex: String,
    #[serde(default)]
    pub keywords: Vec<String>,
    #[serde(default)]
    pub entropy: f32,
    #[serde(default)]
    pub secret_group: usize,
}

/// `[redact.allowlist]`: what is never redacted.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Allowlist {
    /// Regexes: a secret any of them matches (anywhere in it) is kept.
    pub patterns: Vec<String>,
    /// Exact secrets that are kept.
    pub values: Vec<String>,
    /// Tags (the last part of a marker): the secret with that tag under this root's key is
    /// kept, without writing the value itself into the configuration.
    pub tags: Vec<String>,
}

/// A rule id is what a marker and the record can carry unambiguously.
pub fn valid_rule_id(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= 64
        && id
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
}

impl RedactSection {
    /// Why the section cannot be used, if it cannot (every regex is compiled once here).
    pub fn validate(&self) -> Result<(), String> {
        let builtin: std::collections::BTreeSet<&str> =
            super::rules::RULES.iter().map(|r| r.id).collect();
        let mut ids = std::collections::BTreeSet::new();
        for r in &self.rules {
            if !valid_rule_id(&r.id) {
                return Err(format!(
                    "redact.rules id {:?} must be 1 to 64 lower-case letters, digits or '-'",
                    r.id
                ));
            }
            if builtin.contains(r.id.as_str()) || !ids.insert(r.id.as_str()) {
                return Err(format!(
                    "redact.rules id {:?} is used twice (or is a built-in rule's)",
                    r.id
                ));
            }
            let re = super::scan::compile(&r.regex)
                .map_err(|e| format!("redact.rules {:?}: bad regex: {e}", r.id))?;
            if r.secret_group > re.captures_len() - 1 {
                return Err(format!(
                    "redact.rules {:?}: secret_group {} but the regex has {} group(s)",
                    r.id,
                    r.secret_group,
                    re.captures_len() - 1
                ));
            }
            if !r.entropy.is_finite() || r.entropy < 0.0 {
                return Err(format!(
                    "redact.rules {:?}: entropy must be a number of 0 or more",
                    r.id
                ));
            }
            if r.keywords.iter().any(|k| k.is_empty()) {
                return Err(format!("redact.rules {:?}: an empty keyword", r.id));
            }
        }
        for p in &self.allowlist.patterns {
            super::scan::compile(p)
                .map_err(|e| format!("redact.allowlist pattern {p:?}: bad regex: {e}"))?;
        }
        for t in &self.allowlist.tags {
            if t.len() != super::TAG_HEX_LEN || !t.bytes().all(|b| b.is_ascii_hexdigit()) {
                return Err(format!(
                    "redact.allowlist tag {t:?} is not a marker's tag ({} hex digits)",
                    super::TAG_HEX_LEN
                ));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<RedactSection, String> {
        #[derive(Deserialize)]
        struct C {
            redact: RedactSection,
        }
        let c: C = toml::from_str(text).map_err(|e| e.to_string())?;
        c.redact.validate()?;
        Ok(c.redact)
    }

    #[test]
    fn the_documented_example_parses() {
        let doc = include_str!("config.rs")
            .lines()
            .filter_map(|l| l.strip_prefix("//! "))
            .skip_while(|l| !l.starts_with("[redact]"))
            .take_while(|l| !l.starts_with("```"))
            .collect::<Vec<_>>()
            .join("\n");
        let r = parse(&doc).unwrap();
        assert!(r.enabled);
        assert_eq!(r.rules[0].id, "acme-token");
        assert_eq!(r.allowlist.tags, ["3f9a1c07"]);
    }

    #[test]
    fn mistakes_are_named() {
        for (bad, says) in [
            ("[redact]\nenable = false\n", "unknown field"),
            (
                "[redact]\n[[redact.rules]]\nid = \"A b\"\nregex = \"x\"\n",
                "lower-case",
            ),
            (
                "[redact]\n[[redact.rules]]\nid = \"jwt\"\nregex = \"x\"\n",
                "used twice",
            ),
            (
                "[redact]\n[[redact.rules]]\nid = \"x\"\nregex = \"(\"\n",
                "bad regex",
            ),
            (
                "[redact]\n[[redact.rules]]\nid = \"x\"\nregex = \"a\"\nsecret_group = 1\n",
                "secret_group",
            ),
            ("[redact.allowlist]\ntags = [\"xyz\"]\n", "hex digits"),
        ] {
            let e = parse(bad).unwrap_err();
            assert!(e.contains(says), "{bad}: {e}");
        }
        assert!(!parse("[redact]\nenabled = false\n").unwrap().enabled);
    }
}
