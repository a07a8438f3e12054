//! The auditor's and the debugger's tools over finished (or damaged) journals. Everything
//! here reads; only `import` writes, and it goes through the ordinary writer.
//!
//! - [`inspect`]: decode a damaged file record by record, resynchronizing after damage;
//! - [`jsonl`]: export records as JSON Lines and parse JSONL for import;
//! - [`checkpoint`]: signed statements pinning a journal's head, and the check against them;
//! - [`follow`]: read what is appended to a journal while it grows (`tail --follow`);
//! - [`sessions`]: one summary per session under a root;
//! - [`timeline`] and [`html`]: a session's timeline from its raw events, as a self-contained page.

pub mod checkpoint;
pub mod digests;
pub mod follow;
pub mod html;
pub mod inspect;
pub mod jsonl;
pub mod migrate;
pub mod sessions;
pub mod timeline;

/// Shortens `s` to at most `max` characters, marking the cut with an ellipsis, with
/// newlines and tabs shown as spaces (for one-line summaries).
pub fn one_line(s: &str, max: usize) -> String {
    let mut out = String::with_capacity(s.len().min(max + 3));
    for (n, c) in s.chars().enumerate() {
        if n == max {
            out.push('…');
            break;
        }
        out.push(if c.is_control() { ' ' } else { c });
    }
    out
}
