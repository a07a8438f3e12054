//! The built-in rules, as data: one row per kind of secret.
//!
//! The token formats (prefixes, alphabets, lengths, keywords and entropy thresholds) follow
//! the default rule set of gitleaks (`config/gitleaks.toml`, github.com/gitleaks/gitleaks,
//! MIT License, Copyright (c) 2019 Zachary Rice), rewritten for this scanner: every pattern is
//! compiled by the `regex` crate in ASCII mode (`\w`, `\s`, `\b` and `(?i)` are ASCII), and
//! the few rules gitleaks lacks (URLs and connection strings with a password, the
//! `Authorization` header, the generic password assignment, Google's OAuth secrets) are this
//! project's own. Changing what a row matches changes what new events keep: bump
//! [`RULESET_VERSION`] (recorded in each `sjournal.redacted` record).
//!
//! A row's fields:
//!
//! - `id`: the rule's name in the marker (`[REDACTED:<id>:<tag>]`) and in the record;
//! - `keywords`: lower-case literals, matched without regard to ASCII case by the
//!   Aho-Corasick prefilter; the regex runs only on text holding one of them (none: always);
//! - `regex`: where the secret is;
//! - `group`: the capture group holding the secret; 0: the first group that took part in the
//!   match, else the whole match;
//! - `entropy`: the least Shannon entropy (bits per byte) the secret must have (0: any);
//! - `allow`: a regex; a secret it matches is not one (the rule's own examples, placeholders).
//! - `window`: `(before, after)`: every match lies within `before` bytes before and `after`
//!   bytes after the start of a keyword it holds, so the regex runs only on those windows of
//!   the text (with the text around them as context for `\b` and `^`), not on all of it. Set
//!   only for rules whose matches are bounded by their regex and whose keywords are common in
//!   clean output (`token`, `://`): a 1 MiB tool output full of them then costs the windows.
//!
//! Every rule also passes the global allowlist (`scan::placeholder`): environment references
//! (`$TOKEN`, `${TOKEN}`, `${{ secrets.X }}`), templates (`{{ x }}`, `<password>`), a run of one
//! character (`********`), our own markers, and for the generic rules words and paths.

/// The version of what the built-in rules match (recorded in `sjournal.redacted`).
pub const RULESET_VERSION: u32 = 1;

/// One built-in rule (see the module docs for the fields).
#[derive(Debug, Clone, Copy)]
pub struct RuleDef {
    pub id: &'static str,
    pub keywords: &'static [&'static str],
    pub regex: &'static str,
    pub group: usize,
    pub entropy: f32,
    pub allow: Option<&'static str>,
    /// Words and paths are not secrets (the generic rules: their value is anything assigned).
    pub generic: bool,
    pub window: Option<(usize, usize)>,
}

const fn rule(
    id: &'static str,
    keywords: &'static [&'static str],
    regex: &'static str,
    entropy: f32,
) -> RuleDef {
    RuleDef {
        id,
        keywords,
        regex,
        group: 0,
        entropy,
        allow: None,
        generic: false,
        window: None,
    }
}

/// The end of a token: a character that cannot continue it, or the end of the text.
macro_rules! end {
    ($class:literal) => {
        concat!("(?:[^", $class, "]|$)")
    };
}

/// The built-in rules, most specific first (where two rules cover the same bytes, the
/// redaction is one span named after the longest match).
pub const RULES: &[RuleDef] = &[
    RuleDef {
        allow: Some(r"EXAMPLE$"),
        ..rule(
            "aws-access-key",
            &["akia", "asia", "abia", "acca", "a3t"],
            r"\b((?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z2-7]{16})\b",
            3.0,
        )
    },
    rule(
        "aws-secret-key",
        &[
            "aws_secret",
            "aws-secret",
            "awssecret",
            "secret_access_key",
            "secretaccesskey",
            "secret-access-key",
        ],
        concat!(
            r#"(?i)(?:aws[_.-]?secret[_.-]?(?:access[_.-]?)?key|secret[_.-]?access[_.-]?key)["']?\s{0,3}(?:=|:=|:|=>)\s{0,3}["']?([A-Za-z0-9/+]{40})"#,
            end!("A-Za-z0-9/+")
        ),
        3.5,
    ),
    RuleDef {
        // Firebase's published sample keys.
        allow: Some(r"^AIzaSy(?:abcdefghijklmnopqrstuvwxyz1234567)$"),
        ..rule(
            "google-api-key",
            &["aiza"],
            concat!(r"\b(AIza[0-9A-Za-z_-]{35})", end!("0-9A-Za-z_-")),
            3.5,
        )
    },
    rule(
        "gcp-oauth-client-secret",
        &["gocspx-"],
        concat!(r"\b(GOCSPX-[0-9A-Za-z_-]{28})", end!("0-9A-Za-z_-")),
        3.0,
    ),
    rule(
        "gcp-access-token",
        &["ya29."],
        concat!(r"\b(ya29\.[0-9A-Za-z_-]{30,})", end!("0-9A-Za-z_-")),
        3.0,
    ),
    rule(
        "azure-ad-client-secret",
        &["q~"],
        r#"(?:^|[\\'"`\s>=:(,)])([a-zA-Z0-9_~.]{3}\dQ~[a-zA-Z0-9_~.-]{31,34})(?:$|[\\'"`\s<),;])"#,
        3.0,
    ),
    rule(
        "azure-storage-key",
        &["accountkey"],
        r"(?i)\bAccountKey\s*=\s*([A-Za-z0-9+/]{86}==)",
        3.0,
    ),
    rule(
        "azure-shared-access-key",
        &["sharedaccesskey"],
        r"(?i)\bSharedAccessKey\s*=\s*([A-Za-z0-9+/]{42,44}={0,2})",
        3.0,
    ),
    rule(
        "github-token",
        &["ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"],
        r"\b(gh[pousr]_[0-9A-Za-z]{36}|github_pat_[0-9A-Za-z_]{82})\b",
        3.0,
    ),
    rule(
        "gitlab-token",
        &[
            "glpat-",
            "gldt-",
            "glptt-",
            "glrt-",
            "glcbt-",
            "glimt-",
            "glft-",
            "glsoat-",
            "gloas-",
            "glagent-",
            "gr1348941",
        ],
        concat!(
            r"\b((?:glpat|gldt|glrt|glcbt|glimt|glft|glsoat|gloas|glagent)-[0-9A-Za-z_-]{20,300}(?:\.[0-9a-z]{9})?|glptt-[0-9a-f]{40}|GR1348941[0-9A-Za-z_-]{20})",
            end!("0-9A-Za-z_-")
        ),
        3.0,
    ),
    rule(
        "slack-token",
        &[
            "xoxb-", "xoxp-", "xoxa-", "xoxr-", "xoxs-", "xoxo-", "xoxe-", "xoxe.", "xapp-",
        ],
        r"\b(xox[abposre]-[0-9A-Za-z-]{10,250}|xoxe\.xox[bp]-\d-[A-Za-z0-9]{160,170}|xapp-\d-[A-Z0-9]+-\d+-[a-z0-9]+)",
        2.0,
    ),
    rule(
        "slack-webhook-url",
        &["hooks.slack.com"],
        r"(?:https?://)?hooks\.slack\.com/(?:services|workflows|triggers)/([A-Za-z0-9+/]{43,56})",
        0.0,
    ),
    rule(
        "stripe-key",
        &[
            "sk_live_", "sk_test_", "sk_prod_", "rk_live_", "rk_test_", "rk_prod_", "whsec_",
        ],
        concat!(
            r"\b((?:sk|rk)_(?:test|live|prod)_[0-9A-Za-z]{10,99}|whsec_[0-9A-Za-z+/]{32,})",
            end!("0-9A-Za-z")
        ),
        2.0,
    ),
    rule(
        "openai-api-key",
        &["t3blbkfj", "sk-proj-", "sk-svcacct-", "sk-admin-"],
        concat!(
            r"\b(sk-(?:proj|svcacct|admin)-[A-Za-z0-9_-]{20,}|sk-[A-Za-z0-9]{20}T3BlbkFJ[A-Za-z0-9]{20})",
            end!("A-Za-z0-9_-")
        ),
        3.0,
    ),
    rule(
        "anthropic-api-key",
        &["sk-ant-"],
        concat!(
            r"\b(sk-ant-[a-z]{2,8}\d{2}-[A-Za-z0-9_-]{32,})",
            end!("A-Za-z0-9_-")
        ),
        3.0,
    ),
    rule(
        "npm-token",
        &["npm_"],
        concat!(r"(?i)\b(npm_[a-z0-9]{36})", end!("a-z0-9")),
        2.0,
    ),
    rule(
        "pypi-token",
        &["pypi-ageichlwas5vcmc", "pypi-agendgvzdc5wexbplm9yzw"],
        r"(pypi-AgE(?:IcHlwaS5vcmc|NdGVzdC5weXBpLm9yZw)[A-Za-z0-9_-]{50,})",
        3.0,
    ),
    rule(
        "private-key",
        &["-----begin"],
        // The whole block; without its END line (output cut short), the key's body up to the
        // first character that cannot be in it.
        r"(?is)-----BEGIN[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----(?:.{16,}?-----END[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----|[A-Za-z0-9+/=\s\\:,-]{16,})",
        0.0,
    ),
    rule(
        "jwt",
        &["eyj"],
        concat!(
            r"\b(eyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.(?:[A-Za-z0-9_-]{10,})?)",
            end!("A-Za-z0-9_.-")
        ),
        3.0,
    ),
    RuleDef {
        allow: Some(r"^(?:pass|pwd|secret)$"),
        // Scheme (at most 31 bytes) before "://"; user, ':', password (256 each), '@', one.
        window: Some((64, 1024)),
        ..rule(
            "url-password",
            &["://"],
            r#"(?i)\b[a-z][a-z0-9+.-]{1,30}://[^\s:/?#@'"\[\]<>{}]{1,256}:([^\s:/?#@'"\[\]<>]{1,256})@[^\s/?#@'"<>]"#,
            0.0,
        )
    },
    RuleDef {
        allow: Some(r"^(?:pass|pwd|secret)$"),
        ..rule(
            "connection-string-password",
            &["password", "pwd"],
            r#"(?i)(?:^|;)\s*(?:password|pwd)\s*=\s*([^;'"\r\n]{1,128})"#,
            0.0,
        )
    },
    RuleDef {
        generic: true,
        ..rule(
            "authorization",
            &["bearer", "authorization", "x-api-key"],
            r#"(?i)(?:\bbearer\s+|\b(?:proxy-)?authorization\s*["']?\s*[:=]\s*["']?(?:(?:bearer|basic|token|bot|digest)\s+)?|\bx-api-key\s*["']?\s*[:=]\s*["']?)([A-Za-z0-9._~+/-]{12,}=*)"#,
            3.0,
        )
    },
    RuleDef {
        generic: true,
        // At most 30 bytes of name before the keyword; after it, at most 20 more of name,
        // a quote, 3 + 2 + 3 of operator and spaces, and a quoted value of 200.
        window: Some((64, 512)),
        ..rule(
            "generic-password",
            &["password", "passwd", "pwd"],
            r#"(?i)\b[a-z0-9_.-]{0,30}(?:password|passwd|pwd)[a-z0-9_.-]{0,20}["']?\s{0,3}(?:=|:=|:|=>)\s{0,3}(?:"([^"\r\n]{6,200})"|'([^'\r\n]{6,200})'|([^\s"'`;,<>(){}\[\]]{6,200}))"#,
            2.5,
        )
    },
    RuleDef {
        generic: true,
        window: Some((64, 512)),
        ..rule(
            "generic-secret",
            &[
                "secret",
                "token",
                "api_key",
                "apikey",
                "api-key",
                "access_key",
                "accesskey",
                "access-key",
                "private_key",
                "privatekey",
                "auth_key",
                "credential",
            ],
            r#"(?i)\b[a-z0-9_.-]{0,30}(?:secret|token|api[_.-]?key|access[_.-]?key|private[_.-]?key|auth[_.-]?key|credentials?)[a-z0-9_.-]{0,20}["']?\s{0,3}(?:=|:=|:|=>)\s{0,3}(?:"([^"\r\n]{10,200})"|'([^'\r\n]{10,200})'|([^\s"'`;,<>(){}\[\]]{10,200}))"#,
            3.5,
        )
    },
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_unique_marker_safe_and_keywords_lower_case() {
        let mut ids = std::collections::BTreeSet::new();
        for r in RULES {
            assert!(ids.insert(r.id), "{} twice", r.id);
            assert!(crate::redact::config::valid_rule_id(r.id), "{}", r.id);
            for k in r.keywords {
                assert_eq!(*k, k.to_ascii_lowercase(), "{}", r.id);
            }
        }
    }
}
