//! The snippet of a hit: the stretch of its text with the most query words, on one line, with
//! where each word is (for highlighting on a terminal; `--json` carries the ranges).

use crate::context::text::one_line;

/// A snippet and the byte ranges of the query words in it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Snippet {
    pub text: String,
    pub highlights: Vec<(usize, usize)>,
}

/// Words of `s` as (byte start, byte end, lowercased), split as the index splits text.
fn tokens(s: &str) -> Vec<(usize, usize, String)> {
    let mut out = Vec::new();
    let mut start = None;
    for (i, c) in s.char_indices() {
        if c.is_alphanumeric() {
            if start.is_none() {
                start = Some(i);
            }
        } else if let Some(st) = start.take() {
            out.push((st, i, s[st..i].to_lowercase()));
        }
    }
    if let Some(st) = start {
        out.push((st, s.len(), s[st..].to_lowercase()));
    }
    out
}

/// The snippet of `text` around the query `words`, at most about `width` characters.
pub fn make(text: &str, words: &[String], width: usize) -> Snippet {
    let flat = one_line(text);
    let toks = tokens(&flat);
    let hits: Vec<usize> = toks
        .iter()
        .enumerate()
        .filter(|(_, t)| words.contains(&t.2))
        .map(|(i, _)| i)
        .collect();
    // The window (in bytes) starting a little before the match that has the most matches
    // within `width` after it.
    let mut best: Option<(usize, usize)> = None; // (count, start byte)
    for &h in &hits {
        let from = toks[h].0;
        let n = hits
            .iter()
            .filter(|&&j| toks[j].0 >= from && toks[j].1 <= from + width)
            .count();
        if best.is_none_or(|(c, _)| n > c) {
            best = Some((n, from));
        }
    }
    let lead = width / 5;
    let start = match best {
        Some((_, from)) => {
            let mut s = from.saturating_sub(lead);
            while !flat.is_char_boundary(s) {
                s -= 1;
            }
            // Start at a word boundary.
            if s > 0 {
                if let Some(sp) = flat[s..from].find(' ') {
                    s += sp + 1;
                }
            }
            s
        }
        None => 0,
    };
    let mut end = (start + width).min(flat.len());
    while !flat.is_char_boundary(end) {
        end -= 1;
    }
    if end < flat.len() {
        if let Some(sp) = flat[start..end].rfind(' ').filter(|&sp| sp > width / 2) {
            end = start + sp;
        }
    }
    let mut text = String::new();
    let shift = if start > 0 {
        text.push('…');
        '…'.len_utf8() as isize - start as isize
    } else {
        0
    };
    text.push_str(&flat[start..end]);
    if end < flat.len() {
        text.push('…');
    }
    let highlights = hits
        .iter()
        .map(|&h| (toks[h].0, toks[h].1))
        .filter(|&(a, b)| a >= start && b <= end)
        .map(|(a, b)| ((a as isize + shift) as usize, (b as isize + shift) as usize))
        .collect();
    Snippet { text, highlights }
}

/// The snippet with its words between `open` and `close` (a terminal's bold, say).
pub fn marked(s: &Snippet, open: &str, close: &str) -> String {
    let mut out = String::with_capacity(s.text.len() + 8 * s.highlights.len());
    let mut at = 0;
    for &(a, b) in &s.highlights {
        out.push_str(&s.text[at..a]);
        out.push_str(open);
        out.push_str(&s.text[a..b]);
        out.push_str(close);
        at = b;
    }
    out.push_str(&s.text[at..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_window_with_the_most_words() {
        let text = format!(
            "{} the migration failed at step 3 of the migration {}",
            "x ".repeat(200),
            "y ".repeat(200)
        );
        let s = make(&text, &["migration".into()], 80);
        assert!(
            s.text.starts_with('…') && s.text.ends_with('…'),
            "{}",
            s.text
        );
        assert_eq!(s.highlights.len(), 2, "{s:?}");
        for (a, b) in &s.highlights {
            assert_eq!(&s.text[*a..*b], "migration");
        }
        assert_eq!(marked(&s, "[", "]").matches("[migration]").count(), 2);
    }

    #[test]
    fn no_word_found_gives_the_head() {
        let s = make("line one\nline two", &["zzz".into()], 80);
        assert_eq!(s.text, "line one line two");
        assert!(s.highlights.is_empty());
    }

    #[test]
    fn case_and_multibyte() {
        let s = make(
            "Ünïcode MIGRATION über",
            &["migration".into(), "über".into()],
            80,
        );
        assert_eq!(marked(&s, "<", ">"), "Ünïcode <MIGRATION> <über>");
    }
}
