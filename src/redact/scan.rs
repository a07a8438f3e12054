//! The scanner: where in a text the secrets are. One pass over the text finds the rules'
//! keywords (ASCII case ignored); only the rules whose keyword occurs run their regex, each
//! compiled the first time a text needs it. Text without any keyword costs that one pass and
//! nothing else, which is the common case. The keywords are searched by a packed (SIMD,
//! Teddy) searcher over the text in lower case where the CPU has one: building it costs a
//! small fraction of building an Aho-Corasick automaton of the same keywords, which was most
//! of a hook's instructions (BENCHMARKS.md, "Redaction"); elsewhere, by that automaton.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{LazyLock, OnceLock};

use aho_corasick::packed;
use aho_corasick::{AhoCorasick, AhoCorasickKind, MatchKind};
use regex::bytes::{Regex, RegexBuilder};

use super::config::{Allowlist, UserRule};
use super::rules::{RuleDef, RULES};

/// Compiles a rule's or an allowlist's regex: bytes, ASCII classes and case (so a secret's
/// bytes match whatever the text around them holds).
pub fn compile(pattern: &str) -> Result<Regex, regex::Error> {
    RegexBuilder::new(pattern)
        .unicode(false)
        .size_limit(4 << 20)
        .build()
}

/// A rule, compiled on first use.
#[derive(Debug)]
struct Rule {
    id: String,
    pattern: String,
    keywords: Vec<String>,
    group: usize,
    entropy: f32,
    allow: Option<String>,
    generic: bool,
    window: Option<(usize, usize)>,
    re: OnceLock<Option<Regex>>,
    allow_re: OnceLock<Option<Regex>>,
}

impl Rule {
    fn from_def(d: &RuleDef) -> Rule {
        Rule {
            id: d.id.to_owned(),
            pattern: d.regex.to_owned(),
            keywords: d.keywords.iter().map(|k| k.to_string()).collect(),
            group: d.group,
            entropy: d.entropy,
            allow: d.allow.map(str::to_owned),
            generic: d.generic,
            window: d.window,
            re: OnceLock::new(),
            allow_re: OnceLock::new(),
        }
    }

    fn from_user(u: &UserRule) -> Rule {
        Rule {
            id: u.id.clone(),
            pattern: u.regex.clone(),
            keywords: u.keywords.iter().map(|k| k.to_ascii_lowercase()).collect(),
            group: u.secret_group,
            entropy: u.entropy,
            allow: None,
            generic: false,
            window: None,
            re: OnceLock::new(),
            allow_re: OnceLock::new(),
        }
    }

    /// The compiled regex (None: it does not compile; `RedactSection::validate` refuses such
    /// a configuration, and the built-in rules are compiled by a test).
    fn regex(&self) -> Option<&Regex> {
        self.re.get_or_init(|| compile(&self.pattern).ok()).as_ref()
    }

    fn allowed(&self, secret: &[u8]) -> bool {
        let Some(a) = &self.allow else { return false };
        self.allow_re
            .get_or_init(|| compile(a).ok())
            .as_ref()
            .is_some_and(|r| r.is_match(secret))
    }
}

/// Where one secret is: `text[start..end]`, found by rule `rule` of its set.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Hit {
    pub start: usize,
    pub end: usize,
    pub rule: usize,
}

/// The keyword searcher: packed where the CPU has one, else an Aho-Corasick automaton; for a
/// large text, a DFA (built on the first such text: its build costs more than scanning an
/// ordinary event, but scans a text full of keyword candidates several times faster than the
/// packed searcher restarted at each match; BENCHMARKS.md, "Redaction").
#[derive(Debug)]
struct Keywords {
    small: Small,
    patterns: Vec<String>,
    large: OnceLock<AhoCorasick>,
}

/// Texts this long or longer are scanned by the DFA.
const LARGE_TEXT: usize = 64 << 10;

/// The most keyword bytes a DFA is built for.
const DFA_KEYWORDS_MAX: usize = 16 << 10;

#[derive(Debug)]
enum Small {
    /// Over the text in ASCII lower case (the keywords are lower case). Leftmost-longest,
    /// searched again from each match's start + 1: every start where a keyword begins, with
    /// the longest one there; the others there are its prefixes (`prefixes[p]`).
    Packed {
        searcher: packed::Searcher,
        prefixes: Vec<Vec<usize>>,
    },
    Automaton(AhoCorasick),
}

/// An Aho-Corasick automaton of the keywords, every occurrence reported.
fn automaton(kind: AhoCorasickKind, patterns: &[String]) -> AhoCorasick {
    AhoCorasick::builder()
        .kind(Some(kind))
        .ascii_case_insensitive(true)
        .match_kind(MatchKind::Standard)
        .build(patterns)
        .expect("keywords are plain literals")
}

impl Keywords {
    fn new(patterns: &[String]) -> Keywords {
        let lower: Vec<String> = patterns.iter().map(|p| p.to_ascii_lowercase()).collect();
        let searcher = packed::Config::new()
            .match_kind(packed::MatchKind::LeftmostLongest)
            .heuristic_pattern_limits(false)
            .builder()
            .extend(&lower)
            .build();
        let small = match searcher {
            Some(searcher) => {
                // Compared only where the first bytes agree (most keywords share none).
                let prefixes = lower
                    .iter()
                    .map(|p| {
                        (0..lower.len())
                            .filter(|&q| {
                                let k = &lower[q];
                                k.len() < p.len()
                                    && k.as_bytes()[0] == p.as_bytes()[0]
                                    && p.starts_with(k.as_str())
                            })
                            .collect()
                    })
                    .collect();
                Small::Packed { searcher, prefixes }
            }
            // A contiguous NFA, not the DFA the builder would pick for this many keywords: it
            // is built in the process that scans, where the DFA's build cost more than
            // scanning a typical event with the NFA.
            None => Small::Automaton(automaton(AhoCorasickKind::ContiguousNFA, patterns)),
        };
        Keywords {
            small,
            patterns: patterns.to_vec(),
            large: OnceLock::new(),
        }
    }

    /// The DFA, for a text of [`LARGE_TEXT`] bytes or more, and keywords of at most
    /// [`DFA_KEYWORDS_MAX`] bytes in all (a user's thousands of keywords would make a DFA of
    /// hundreds of megabytes: the small texts' searcher scans those).
    fn large(&self, text: &[u8]) -> Option<&AhoCorasick> {
        if self.patterns.iter().map(String::len).sum::<usize>() > DFA_KEYWORDS_MAX {
            return None;
        }
        (text.len() >= LARGE_TEXT).then(|| {
            self.large
                .get_or_init(|| automaton(AhoCorasickKind::DFA, &self.patterns))
        })
    }

    fn is_match(&self, text: &[u8]) -> bool {
        if let Some(dfa) = self.large(text) {
            return dfa.is_match(text);
        }
        match &self.small {
            Small::Packed { searcher, .. } => searcher.find(text.to_ascii_lowercase()).is_some(),
            Small::Automaton(ac) => ac.is_match(text),
        }
    }

    /// Every occurrence of every keyword, overlapping ones included: (pattern, start).
    fn each(&self, text: &[u8], f: impl FnMut(usize, usize)) {
        self.each_by(text, self.large(text), f)
    }

    /// [`Keywords::each`] by the DFA `large` if given, else by the searcher for small texts.
    fn each_by(&self, text: &[u8], large: Option<&AhoCorasick>, mut f: impl FnMut(usize, usize)) {
        if let Some(dfa) = large {
            for m in dfa.find_overlapping_iter(text) {
                f(m.pattern().as_usize(), m.start());
            }
            return;
        }
        match &self.small {
            Small::Packed { searcher, prefixes } => {
                let lower = text.to_ascii_lowercase();
                let mut at = 0;
                while at < lower.len() {
                    let Some(m) =
                        searcher.find_in(&lower, aho_corasick::Span::from(at..lower.len()))
                    else {
                        break;
                    };
                    let p = m.pattern().as_usize();
                    f(p, m.start());
                    for &q in &prefixes[p] {
                        f(q, m.start());
                    }
                    at = m.start() + 1;
                }
            }
            Small::Automaton(ac) => {
                for m in ac.find_overlapping_iter(text) {
                    f(m.pattern().as_usize(), m.start());
                }
            }
        }
    }
}

/// A set of rules with their keyword automaton.
#[derive(Debug)]
pub struct RuleSet {
    rules: Vec<Rule>,
    ac: Option<Keywords>,
    /// For each keyword pattern of `ac`, the rules it starts.
    by_keyword: Vec<Vec<usize>>,
    /// Rules without keywords: they run on every text.
    always: Vec<usize>,
}

/// The built-in rules, built once per process.
pub static BUILTIN: LazyLock<RuleSet> =
    LazyLock::new(|| RuleSet::new(RULES.iter().map(Rule::from_def).collect()));

impl RuleSet {
    fn new(rules: Vec<Rule>) -> RuleSet {
        let mut patterns: Vec<String> = Vec::new();
        let mut by_keyword: Vec<Vec<usize>> = Vec::new();
        let mut always = Vec::new();
        let mut seen: std::collections::HashMap<String, usize> = Default::default();
        for (i, r) in rules.iter().enumerate() {
            if r.keywords.is_empty() {
                always.push(i);
            }
            for k in &r.keywords {
                // A JSON writer may escape '/' as "\/": the keyword is looked for that way too.
                let mut forms = vec![k.clone()];
                if k.contains('/') {
                    forms.push(k.replace('/', "\\/"));
                }
                for f in forms {
                    match seen.get(&f) {
                        Some(&at) => by_keyword[at].push(i),
                        None => {
                            seen.insert(f.clone(), patterns.len());
                            patterns.push(f);
                            by_keyword.push(vec![i]);
                        }
                    }
                }
            }
        }
        let ac = (!patterns.is_empty()).then(|| Keywords::new(&patterns));
        RuleSet {
            rules,
            ac,
            by_keyword,
            always,
        }
    }

    /// The user's rules (None when there are none).
    pub fn user(rules: &[UserRule]) -> Option<RuleSet> {
        (!rules.is_empty()).then(|| RuleSet::new(rules.iter().map(Rule::from_user).collect()))
    }

    pub fn id(&self, rule: usize) -> &str {
        &self.rules[rule].id
    }

    /// True if any rule of the set may match somewhere in `text` (a keyword occurs, or a rule
    /// has none).
    pub fn may_match(&self, text: &[u8]) -> bool {
        !self.always.is_empty() || self.ac.as_ref().is_some_and(|ac| ac.is_match(text))
    }

    /// Where keywords start in `text`, sorted (every rule without keywords makes the whole
    /// text a candidate: position 0 and the end stand for it).
    pub fn keyword_positions(&self, text: &[u8], out: &mut Vec<usize>) {
        if !self.always.is_empty() {
            out.push(0);
            out.push(text.len().saturating_sub(1));
        }
        if let Some(ac) = &self.ac {
            ac.each(text, |_, start| out.push(start));
        }
    }

    /// The rules whose keyword occurs in `text` (or that have none), in order, each with
    /// where its keywords start.
    fn candidates(&self, text: &[u8]) -> BTreeMap<usize, Vec<usize>> {
        let mut set: BTreeMap<usize, Vec<usize>> =
            self.always.iter().map(|&i| (i, Vec::new())).collect();
        if let Some(ac) = &self.ac {
            ac.each(text, |p, start| {
                for &i in &self.by_keyword[p] {
                    set.entry(i).or_default().push(start);
                }
            });
        }
        set
    }

    /// Every secret the set's rules find in `text` (not merged; see [`merge`]), less what
    /// `allow` keeps.
    pub fn scan(&self, text: &[u8], allow: &UserAllow, out: &mut Vec<Hit>) {
        for (i, at) in self.candidates(text) {
            let rule = &self.rules[i];
            let Some(re) = rule.regex() else { continue };
            match rule.window {
                Some((before, after)) if !at.is_empty() => {
                    for (start, end) in windows(&at, before, after, text.len()) {
                        // The whole text before the window is context (`\b`, `^`); the
                        // window's end is a bound no match reaches.
                        let hay = &text[..end];
                        let mut from = start;
                        while let Some(caps) = re.captures_at(hay, from) {
                            let whole = caps.get(0).expect("group 0 takes part");
                            rule.hit(&caps, i, allow, out);
                            from = if whole.end() > whole.start() {
                                whole.end()
                            } else {
                                whole.end() + 1
                            };
                            if from > end {
                                break;
                            }
                        }
                    }
                }
                _ => {
                    for caps in re.captures_iter(text) {
                        rule.hit(&caps, i, allow, out);
                    }
                }
            }
        }
    }
}

/// The windows of a text of `len` bytes where a windowed rule runs: `before` bytes before
/// and `after` bytes after each keyword start in `at` (sorted or not), merged where they
/// overlap.
fn windows(at: &[usize], before: usize, after: usize, len: usize) -> Vec<(usize, usize)> {
    let mut at = at.to_vec();
    at.sort_unstable();
    let mut out: Vec<(usize, usize)> = Vec::new();
    for p in at {
        let (s, e) = (p.saturating_sub(before), p.saturating_add(after).min(len));
        match out.last_mut() {
            Some(last) if s <= last.1 => last.1 = last.1.max(e),
            _ => out.push((s, e)),
        }
    }
    out
}

impl Rule {
    /// Adds the secret of one match of rule `i`, unless a filter keeps it.
    fn hit(
        &self,
        caps: &regex::bytes::Captures<'_>,
        i: usize,
        allow: &UserAllow,
        out: &mut Vec<Hit>,
    ) {
        let m = if self.group > 0 {
            caps.get(self.group)
        } else {
            (1..caps.len())
                .find_map(|g| caps.get(g))
                .or_else(|| caps.get(0))
        };
        let Some(m) = m else { return };
        let secret = m.as_bytes();
        if secret.is_empty()
            || entropy(secret) < self.entropy
            || self.allowed(secret)
            || placeholder(secret, self.generic)
            || allow.keeps(secret)
        {
            return;
        }
        out.push(Hit {
            start: m.start(),
            end: m.end(),
            rule: i,
        });
    }
}

/// The user's allowlist, compiled (tags are checked by the redactor, which has the key).
#[derive(Debug, Default)]
pub struct UserAllow {
    patterns: Vec<Regex>,
    values: BTreeSet<Vec<u8>>,
}

impl UserAllow {
    pub fn new(a: &Allowlist) -> UserAllow {
        UserAllow {
            // Invalid patterns were refused with the configuration.
            patterns: a.patterns.iter().filter_map(|p| compile(p).ok()).collect(),
            values: a.values.iter().map(|v| v.as_bytes().to_vec()).collect(),
        }
    }

    fn keeps(&self, secret: &[u8]) -> bool {
        self.values.contains(secret) || self.patterns.iter().any(|p| p.is_match(secret))
    }
}

/// Merges overlapping hits into one span each, named after the longest hit in it (the
/// first, of equal lengths): a span is never left half redacted because two rules disagree
/// on where a secret starts or ends.
pub fn merge(mut hits: Vec<Hit>) -> Vec<(Hit, usize)> {
    hits.sort_by_key(|h| (h.start, std::cmp::Reverse(h.end)));
    let mut out: Vec<(Hit, usize)> = Vec::new();
    for h in hits {
        match out.last_mut() {
            Some((span, longest)) if h.start < span.end => {
                if h.end - h.start > *longest {
                    *longest = h.end - h.start;
                    span.rule = h.rule;
                }
                span.end = span.end.max(h.end);
            }
            _ => out.push((h, h.end - h.start)),
        }
    }
    out
}

/// Text as its JSON escapes mean it, with where each byte came from: input that is not JSON
/// (an event cut off by the input time limit, a string holding JSON that does not parse)
/// is often JSON text, where `\n`, `\"` and `\\` would glue an escape's letter onto a
/// token (`\nAKIA…`) or hide an assignment's quotes. Rules run on the view; what they find
/// is mapped back to whole escape sequences of the text.
#[derive(Debug)]
pub struct Unescaped {
    pub text: Vec<u8>,
    /// For each level of escapes undone, outermost first: where in that level's output each
    /// escape sequence's character is (sorted). Each stands for two bytes of its input.
    levels: Vec<Vec<usize>>,
}

/// Escapes undone at most this many times over (JSON text inside a JSON string inside …).
const UNESCAPE_LEVELS: usize = 3;

impl Unescaped {
    /// The view of `text`; None if it holds no escape sequence (`\"`, `\\`, `\/`, `\b`, `\f`,
    /// `\n`, `\r`, `\t`; `\uXXXX` is left as it is).
    pub fn of(text: &[u8]) -> Option<Unescaped> {
        let mut view: Option<Unescaped> = None;
        for _ in 0..UNESCAPE_LEVELS {
            let cur = view.as_ref().map_or(text, |v| &v.text[..]);
            let Some((t, escapes)) = unescape_once(cur) else {
                break;
            };
            match &mut view {
                Some(v) => {
                    v.text = t;
                    v.levels.push(escapes);
                }
                None => {
                    view = Some(Unescaped {
                        text: t,
                        levels: vec![escapes],
                    })
                }
            }
        }
        view
    }

    /// Where `view[start..end]` is in the text: whole escape sequences.
    pub fn source(&self, start: usize, end: usize) -> (usize, usize) {
        let back = |mut i: usize| {
            for escapes in self.levels.iter().rev() {
                i += escapes.partition_point(|&j| j < i);
            }
            i
        };
        (back(start), back(end))
    }
}

/// `t` with one level of escapes undone, and where each escape's character is in it.
fn unescape_once(t: &[u8]) -> Option<(Vec<u8>, Vec<usize>)> {
    let first = memchr::memchr(b'\\', t)?;
    let mut out = Vec::with_capacity(t.len());
    out.extend_from_slice(&t[..first]);
    let mut escapes = Vec::new();
    let mut i = first;
    while i < t.len() {
        // Copy up to the next backslash at once.
        let Some(n) = memchr::memchr(b'\\', &t[i..]) else {
            out.extend_from_slice(&t[i..]);
            break;
        };
        out.extend_from_slice(&t[i..i + n]);
        i += n;
        let c = match t.get(i + 1) {
            Some(b'n') => b'\n',
            Some(b'r') => b'\r',
            Some(b't') => b'\t',
            Some(b'b') => 0x08,
            Some(b'f') => 0x0c,
            Some(&c @ (b'"' | b'\\' | b'/')) => c,
            _ => {
                out.push(b'\\');
                i += 1;
                continue;
            }
        };
        escapes.push(out.len());
        out.push(c);
        i += 2;
    }
    (!escapes.is_empty()).then_some((out, escapes))
}

/// Where the markers of an earlier redaction are in `text` (`[REDACTED:<rule>:<tag>]`).
pub fn markers(text: &[u8]) -> Vec<(usize, usize)> {
    static MARKER: LazyLock<Regex> = LazyLock::new(|| {
        compile(r"\[REDACTED:[a-z0-9-]{1,64}:[0-9a-f]{8}\]").expect("the marker's regex")
    });
    if memchr::memmem::find(text, b"[REDACTED:").is_none() {
        return Vec::new();
    }
    MARKER
        .find_iter(text)
        .map(|m| (m.start(), m.end()))
        .collect()
}

/// Shannon entropy of `b`, in bits per byte.
pub fn entropy(b: &[u8]) -> f32 {
    let mut counts = [0u32; 256];
    for &x in b {
        counts[x as usize] += 1;
    }
    let n = b.len() as f32;
    counts
        .iter()
        .filter(|&&c| c > 0)
        .map(|&c| {
            let p = c as f32 / n;
            -p * p.log2()
        })
        .sum()
}

/// What looks like a secret but is a stand-in for one: an environment or template reference,
/// a placeholder word, a run of one character, our own marker; for the generic rules (whose
/// value is anything assigned) also a word without digits and a path.
pub fn placeholder(secret: &[u8], generic: bool) -> bool {
    let s = secret;
    if s.windows(10).any(|w| w == b"[REDACTED:") || s.iter().all(|&b| b == s[0]) {
        return true;
    }
    let starts = |p: &[u8]| s.starts_with(p);
    let ends = |p: &[u8]| s.ends_with(p);
    if (starts(b"$") && s.len() > 1 && (s[1].is_ascii_alphabetic() || b"_{(".contains(&s[1])))
        || (starts(b"{") && ends(b"}"))
        || (starts(b"<") && ends(b">"))
        || (starts(b"%") && ends(b"%") && s.len() > 2)
        || (starts(b"[") && ends(b"]"))
    {
        return true;
    }
    let lower = s.to_ascii_lowercase();
    const WORDS: &[&[u8]] = &[
        b"password",
        b"passwd",
        b"secret",
        b"token",
        b"changeme",
        b"change-me",
        b"change_me",
        b"redacted",
        b"example",
        b"placeholder",
        b"undefined",
        b"null",
        b"none",
        b"true",
        b"false",
    ];
    if WORDS.contains(&lower.as_slice()) {
        return true;
    }
    if !generic {
        return false;
    }
    const STAND_INS: &[&[u8]] = &[
        b"example",
        b"placeholder",
        b"changeme",
        b"your_",
        b"your-",
        b"<your",
        b"dummy",
        b"xxxx",
        b"****",
        b"....",
    ];
    if STAND_INS
        .iter()
        .any(|w| lower.windows(w.len()).any(|x| x == *w))
    {
        return true;
    }
    let word = s
        .iter()
        .all(|b| b.is_ascii_alphabetic() || b"_.-".contains(b));
    let path = starts(b"/") || starts(b"./") || starts(b"../") || starts(b"~/");
    word || path
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_builtin_rule_compiles() {
        for r in RULES {
            compile(r.regex).unwrap_or_else(|e| panic!("{}: {e}", r.id));
            if let Some(a) = r.allow {
                compile(a).unwrap_or_else(|e| panic!("{} allow: {e}", r.id));
            }
        }
    }

    #[test]
    fn overlapping_hits_become_one_span_named_after_the_longest() {
        let h = |start, end, rule| Hit { start, end, rule };
        let merged = merge(vec![h(5, 9, 1), h(0, 6, 0), h(20, 30, 2), h(2, 12, 3)]);
        assert_eq!(merged.len(), 2);
        assert_eq!(
            (merged[0].0.start, merged[0].0.end, merged[0].0.rule),
            (0, 12, 3)
        );
        assert_eq!(merged[1].0, h(20, 30, 2));
    }

    #[test]
    fn stand_ins_are_not_secrets() {
        for s in [
            "$API_TOKEN",
            "${DB_PASSWORD}",
            "${{ secrets.NPM_TOKEN }}",
            "{{ .Values.password }}",
            "<your-token>",
            "********",
            "[REDACTED:jwt:0011aabb]",
            "changeme",
        ] {
            assert!(placeholder(s.as_bytes(), false), "{s}");
        }
        assert!(placeholder(b"getPassword", true));
        assert!(placeholder(b"/etc/passwd", true));
        assert!(!placeholder(b"getPassword", false));
        assert!(!placeholder(b"hunter2-x9", true));
    }

    #[test]
    fn the_unescaped_view_maps_back_to_whole_escape_sequences() {
        // Text: a\nAKIA\\x\"y\u00e9, and the same once more escaped.
        for t in [
            &b"a\\nAKIA\\\\x\\\"y\\u00e9"[..],
            &b"a\\\\nAKIA\\\\\\\\x\\\\\\\"y"[..],
        ] {
            let v = Unescaped::of(t).unwrap();
            assert!(v.text.starts_with(b"a\nAKIA\\x\"y"), "{:?}", v.text);
            let (s, e) = v.source(2, 6);
            assert_eq!(&t[s..e], b"AKIA");
            let q = memchr::memchr(b'"', &v.text).unwrap();
            let (s, e) = v.source(q, q + 1);
            assert!(t[s..e].starts_with(b"\\") && t[s..e].ends_with(b"\""));
            assert_eq!(v.source(0, v.text.len()), (0, t.len()));
        }
        assert!(Unescaped::of(b"plain \\u00e9 text").is_none());
    }

    /// The packed keyword search finds exactly what the Aho-Corasick automaton of the same
    /// keywords finds: every keyword at every start, overlapping ones, keywords that are
    /// prefixes of others, and any ASCII case.
    #[test]
    fn the_packed_keyword_search_finds_what_aho_corasick_finds() {
        let mut patterns: Vec<String> = Vec::new();
        for r in RULES {
            for k in r.keywords {
                for f in [k.to_string(), k.replace('/', "\\/")] {
                    if !patterns.contains(&f) {
                        patterns.push(f);
                    }
                }
            }
        }
        // Prefixes of one another, as user rules may have.
        patterns.extend(["sk".into(), "sk-a".into(), "k-an".into()]);
        let packed = Keywords::new(&patterns);
        // Where the packed searcher exists it must be the one taken (the hook's speed rests
        // on it); elsewhere the automaton is the only searcher and there is nothing to compare.
        if cfg!(any(target_arch = "x86_64", target_arch = "aarch64")) {
            assert!(matches!(packed.small, Small::Packed { .. }), "{packed:?}");
        } else if !matches!(packed.small, Small::Packed { .. }) {
            return;
        }
        let ac = Keywords {
            small: Small::Automaton(
                AhoCorasick::builder()
                    .ascii_case_insensitive(true)
                    .build(&patterns)
                    .unwrap(),
            ),
            patterns: patterns.clone(),
            large: OnceLock::new(),
        };
        let mut all = Vec::new();
        let mut r = fastrand::Rng::with_seed(7);
        for round in 0..600 {
            let mut text = Vec::new();
            for _ in 0..r.usize(1..60) {
                match r.u8(0..4) {
                    0 => {
                        let p = &patterns[r.usize(0..patterns.len())];
                        let cut = if round % 5 == 0 {
                            r.usize(0..=p.len())
                        } else {
                            p.len()
                        };
                        text.extend(p.bytes().take(cut).map(|b| match r.bool() {
                            true => b.to_ascii_uppercase(),
                            false => b,
                        }));
                    }
                    1 => text.extend(b"sk-sk-ant-akiaakia://:\\/password=pwd "),
                    2 => text.push(r.u8(..)),
                    _ => text.extend((0..r.usize(0..12)).map(|_| r.alphanumeric() as u8)),
                }
            }
            let found = |k: &Keywords| {
                let mut v = Vec::new();
                k.each(&text, |p, start| v.push((p, start)));
                v.sort_unstable();
                v
            };
            assert_eq!(
                found(&packed),
                found(&ac),
                "{:?}",
                String::from_utf8_lossy(&text)
            );
            assert_eq!(packed.is_match(&text), ac.is_match(&text));
            all.extend_from_slice(&text);
        }
        // A large text (every round's, joined, repeated past LARGE_TEXT) goes to the DFA,
        // which finds what the small texts' searchers find in it.
        while all.len() < LARGE_TEXT {
            all.extend_from_slice(&all.clone());
        }
        assert!(packed.large(&all).is_some());
        let by = |large: Option<&AhoCorasick>, k: &Keywords| {
            let mut v = Vec::new();
            k.each_by(&all, large, |p, start| v.push((p, start)));
            v.sort_unstable();
            v
        };
        let dfa = by(packed.large(&all), &packed);
        assert!(dfa.len() > 1000, "{}", dfa.len());
        assert_eq!(dfa, by(None, &packed));
        assert_eq!(dfa, by(None, &ac));
        assert!(packed.is_match(&all));
    }

    /// Windowed rules find what they find in the whole text: secrets at the start, the end,
    /// next to each other and far from any other keyword, among many keywords of clean text.
    #[test]
    fn windows_find_what_the_whole_text_finds() {
        let whole = RuleSet::new(
            RULES
                .iter()
                .map(|d| Rule {
                    window: None,
                    ..Rule::from_def(d)
                })
                .collect(),
        );
        let mut r = fastrand::Rng::with_seed(9);
        let mut val = |n: usize| -> String { (0..n).map(|_| r.alphanumeric()).collect() };
        let mut text = format!("api_key={}", val(32));
        for i in 0..300 {
            match i % 7 {
                0 => text.push_str(&format!(
                    " input_tokens: {i}, see https://example.com/{i}\n"
                )),
                1 => text.push_str(&format!(" DB_PASSWORD=\"{}7!\" ", val(12))),
                2 => text.push_str(&format!(" https://u{i}:{}@db.local:5432/x ", val(14))),
                3 => text.push_str(&" lorem ipsum".repeat(40)),
                4 => text.push_str(&format!("token={}secret={}", val(24), val(24))),
                _ => text.push_str(" the token was refreshed "),
            }
        }
        text.push_str(&format!(" client_secret: {}", val(40)));
        let (mut a, mut b) = (Vec::new(), Vec::new());
        BUILTIN.scan(text.as_bytes(), &UserAllow::default(), &mut a);
        whole.scan(text.as_bytes(), &UserAllow::default(), &mut b);
        let key = |h: &Hit| (h.start, h.end, h.rule);
        a.sort_by_key(key);
        b.sort_by_key(key);
        assert!(b.len() > 120, "{}", b.len());
        assert_eq!(a, b);
        assert_eq!(
            windows(&[500, 10, 40, 2000], 64, 512, 2100),
            vec![(0, 1012), (1936, 2100)]
        );
    }

    #[test]
    fn entropy_counts_bits_per_byte() {
        assert_eq!(entropy(b"aaaa"), 0.0);
        assert!((entropy(b"abcd") - 2.0).abs() < 1e-6);
    }
}
