//! Object keys. Under the destination's prefix:
//!
//! ```text
//! v1/hosts/<host>/sessions/<stem>/header                     the journal's header bytes
//! v1/hosts/<host>/sessions/<stem>/seg/<first seq, 20 digits> record frames first..=last
//! v1/hosts/<host>/sessions/<stem>/quarantine/<file name>     bytes recovery cut (evidence)
//! v1/hosts/<host>/sessions/<stem>/erasure/<seq, 20 digits>   record seq as `sjournal erase`
//!                                                            rewrote it after it was shipped
//! v1/hosts/<host>/sessions/<stem>/rescue/...                 the same for the rescue journal
//! ```
//!
//! `header` followed by every `seg/*` in key order (zero-padded, so lexicographic order is
//! numeric order) is byte for byte the local journal up to the last shipped record. Host ids
//! and stems are `[A-Za-z0-9_-]`, so no key needs escaping.

pub const LAYOUT_VERSION: &str = "v1";

/// Which journal of a session.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum StreamKind {
    Main,
    Rescue,
}

impl StreamKind {
    pub fn as_str(self) -> &'static str {
        match self {
            StreamKind::Main => "main",
            StreamKind::Rescue => "rescue",
        }
    }
}

/// One shipped journal: a host's session's main or rescue journal.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
pub struct Location {
    pub host: String,
    pub stem: String,
    pub kind: StreamKind,
}

/// What a key names within a stream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Part {
    Header,
    Segment(u64),
    Quarantine(String),
    /// The erased frame of record seq, replacing the one its segment holds.
    Erasure(u64),
    /// Anything else under the stream (reported by verify, ignored by fetch).
    Other(String),
}

impl Location {
    pub fn new(host: &str, stem: &str, kind: StreamKind) -> Location {
        Location {
            host: host.to_owned(),
            stem: stem.to_owned(),
            kind,
        }
    }

    /// The key prefix of the stream, without a trailing slash.
    pub fn base(&self) -> String {
        let s = format!(
            "{LAYOUT_VERSION}/hosts/{}/sessions/{}",
            self.host, self.stem
        );
        match self.kind {
            StreamKind::Main => s,
            StreamKind::Rescue => format!("{s}/rescue"),
        }
    }

    pub fn header_key(&self) -> String {
        format!("{}/header", self.base())
    }

    pub fn segment_key(&self, first: u64) -> String {
        format!("{}/seg/{first:020}", self.base())
    }

    pub fn segments_prefix(&self) -> String {
        format!("{}/seg/", self.base())
    }

    pub fn quarantine_key(&self, name: &str) -> String {
        format!("{}/quarantine/{name}", self.base())
    }

    pub fn erasure_key(&self, seq: u64) -> String {
        format!("{}/erasure/{seq:020}", self.base())
    }

    /// `host/stem` (`host/stem/rescue`), for messages.
    pub fn display(&self) -> String {
        match self.kind {
            StreamKind::Main => format!("{}/{}", self.host, self.stem),
            StreamKind::Rescue => format!("{}/{}/rescue", self.host, self.stem),
        }
    }
}

/// A valid host id or stem component: 1..=128 bytes of `[A-Za-z0-9_-]`, starting with a letter
/// or digit.
pub fn valid_component(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 128
        && s.bytes().next().is_some_and(|b| b.is_ascii_alphanumeric())
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

/// Splits a key (relative to the destination's prefix) into its stream and part; None for
/// keys outside the layout.
pub fn parse_key(key: &str) -> Option<(Location, Part)> {
    let rest = key.strip_prefix(&format!("{LAYOUT_VERSION}/hosts/"))?;
    let (host, rest) = rest.split_once('/')?;
    let rest = rest.strip_prefix("sessions/")?;
    let (stem, rest) = rest.split_once('/')?;
    if !valid_component(host) || !valid_component(stem) {
        return None;
    }
    let (kind, rest) = match rest.strip_prefix("rescue/") {
        Some(r) => (StreamKind::Rescue, r),
        None => (StreamKind::Main, rest),
    };
    let part = if rest == "header" {
        Part::Header
    } else if let Some(n) = rest.strip_prefix("seg/") {
        match (n.len() == 20, n.parse::<u64>()) {
            (true, Ok(first)) if first > 0 => Part::Segment(first),
            _ => Part::Other(rest.to_owned()),
        }
    } else if let Some(n) = rest.strip_prefix("erasure/") {
        match (n.len() == 20, n.parse::<u64>()) {
            (true, Ok(seq)) if seq > 0 => Part::Erasure(seq),
            _ => Part::Other(rest.to_owned()),
        }
    } else if let Some(q) = rest.strip_prefix("quarantine/") {
        Part::Quarantine(q.to_owned())
    } else {
        Part::Other(rest.to_owned())
    };
    Some((Location::new(host, stem, kind), part))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_round_trip_and_sort_numerically() {
        let l = Location::new("laptop-1", "abc", StreamKind::Main);
        assert_eq!(
            l.segment_key(42),
            "v1/hosts/laptop-1/sessions/abc/seg/00000000000000000042"
        );
        assert!(l.segment_key(9) < l.segment_key(10));
        assert_eq!(
            parse_key(&l.segment_key(42)),
            Some((l.clone(), Part::Segment(42)))
        );
        assert_eq!(parse_key(&l.header_key()), Some((l.clone(), Part::Header)));
        let r = Location::new("laptop-1", "abc", StreamKind::Rescue);
        assert_eq!(
            parse_key(&r.quarantine_key("x.bin")),
            Some((r, Part::Quarantine("x.bin".into())))
        );
        assert_eq!(parse_key("v1/hosts/../sessions/abc/header"), None);
        assert_eq!(
            parse_key(&l.erasure_key(7)),
            Some((l.clone(), Part::Erasure(7)))
        );
        assert!(matches!(
            parse_key("v1/hosts/h/sessions/s/seg/12"),
            Some((_, Part::Other(_)))
        ));
    }
}
