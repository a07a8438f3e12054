//! The session report: one self-contained HTML page (inline CSS and SVG; no script, no
//! external resource) with a session's timeline drawn in lanes (turns, tool calls,
//! compactions, injections, other marks) and the same facts in tables. Every text that came
//! from the journal is escaped. Native SVG `<title>`s give tooltips without script.

use std::fmt::Write;

use crate::audit::timeline::{Timeline, ToolCall};

/// Width of the drawing area of the timeline, in SVG units.
const PLOT_W: f64 = 1000.0;
const LABEL_W: f64 = 110.0;
const ROW_H: f64 = 14.0;
/// Tool calls that overlap are stacked in at most this many rows.
const TOOL_ROWS_MAX: usize = 8;
/// Rows per table at most; the rest is counted, not shown.
const TABLE_ROWS_MAX: usize = 2000;
/// Injected text longer than this, or of more than one line, is folded under its first line.
const INJECTED_INLINE_CHARS: usize = 400;
/// The characters of injected text a timeline tooltip shows.
const TOOLTIP_CHARS: usize = 400;

const CSS: &str = "
body{font:14px/1.4 system-ui,-apple-system,'Segoe UI',sans-serif;margin:24px;color:#1d2330;background:#fafbfc}
h1{font-size:20px;margin:0 0 4px} h2{font-size:16px;margin:28px 0 8px}
.meta{display:grid;grid-template-columns:repeat(4,minmax(150px,1fr));gap:6px 18px;margin:12px 0 18px}
.meta div{background:#fff;border:1px solid #e3e6ea;border-radius:6px;padding:6px 10px}
.meta b{display:block;font-size:11px;color:#6a7380;text-transform:uppercase;letter-spacing:.04em}
.problem{background:#fdecea;border:1px solid #e15759;padding:8px 12px;border-radius:6px}
svg{background:#fff;border:1px solid #e3e6ea;border-radius:6px}
svg text{font:11px system-ui,sans-serif;fill:#4a5360}
table{border-collapse:collapse;background:#fff;font-size:13px;width:100%}
th,td{border-bottom:1px solid #eceef1;padding:4px 8px;text-align:left;vertical-align:top}
th{background:#f1f3f5;font-weight:600} td.num{text-align:right;font-variant-numeric:tabular-nums}
.fail{color:#c0392b;font-weight:600} .ok{color:#2e7d32} .muted{color:#8a929c}
pre.inj{white-space:pre-wrap;overflow-wrap:anywhere;margin:6px 0 0;font:12px/1.4 ui-monospace,monospace}
summary{cursor:pointer}
.legend span{display:inline-block;margin-right:16px} .sw{display:inline-block;width:12px;height:12px;border-radius:2px;vertical-align:-2px;margin-right:4px}
";

fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

fn time(ns: i64) -> String {
    let t = std::time::UNIX_EPOCH + std::time::Duration::from_nanos(ns.max(0) as u64);
    humantime::format_rfc3339_millis(t).to_string()
}

fn clock(ns: i64) -> String {
    time(ns).get(11..23).unwrap_or("").to_owned()
}

fn dur(ms: Option<u64>) -> String {
    match ms {
        None => "open".into(),
        Some(ms) if ms < 1000 => format!("{ms} ms"),
        Some(ms) if ms < 60_000 => format!("{:.1} s", ms as f64 / 1000.0),
        Some(ms) => format!("{}m{:02}s", ms / 60_000, ms / 1000 % 60),
    }
}

/// Maps journal time to x.
struct Scale {
    t0: i64,
    span: f64,
}

impl Scale {
    fn x(&self, ns: i64) -> f64 {
        LABEL_W + ((ns - self.t0) as f64 / self.span).clamp(0.0, 1.0) * PLOT_W
    }
}

/// The whole page.
pub fn render(t: &Timeline) -> String {
    let mut h = String::with_capacity(64 * 1024);
    let title = format!("sjournal report: session {}", t.session_id);
    let failed = t.tools.iter().filter(|c| c.failed).count();
    let _ = write!(
        h,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width\">\
         <title>{}</title><style>{CSS}</style></head><body>\n<h1>Session {}</h1>",
        esc(&title),
        esc(&t.session_id)
    );
    if let Some(p) = &t.problem {
        let _ = write!(h, "<p class=\"problem\">{}</p>", esc(p));
    }
    let meta = [
        ("host", t.identity.host.clone().unwrap_or("-".into())),
        ("project", t.identity.project.clone().unwrap_or("-".into())),
        ("model", t.identity.model.clone().unwrap_or("-".into())),
        ("records", t.records.to_string()),
        ("start", time(t.start_ns)),
        ("end", time(t.end_ns)),
        (
            "duration",
            dur(u64::try_from((t.end_ns - t.start_ns) / 1_000_000).ok()),
        ),
        ("turns", t.turns.len().to_string()),
        (
            "tool calls",
            format!("{} ({} failed)", t.tools.len(), failed),
        ),
        ("compactions", t.compactions.len().to_string()),
        ("injections", t.injections.len().to_string()),
        ("event kinds", t.kinds.len().to_string()),
    ];
    h.push_str("<div class=\"meta\">");
    for (k, v) in meta {
        let _ = write!(h, "<div><b>{k}</b>{}</div>", esc(&v));
    }
    h.push_str("</div>\n<h2>Timeline</h2>\n");
    svg(&mut h, t);
    tables(&mut h, t);
    h.push_str("</body></html>\n");
    h
}

/// Greedy interval packing: the row of each tool call, so overlapping calls do not overlap
/// on screen.
fn tool_rows(calls: &[ToolCall], end: i64) -> Vec<usize> {
    let mut row_end: Vec<i64> = Vec::new();
    calls
        .iter()
        .map(|c| {
            let e = c.end_ns.unwrap_or(end);
            let row = match row_end.iter().position(|&r| r <= c.start_ns) {
                Some(r) => r,
                None if row_end.len() < TOOL_ROWS_MAX => {
                    row_end.push(i64::MIN);
                    row_end.len() - 1
                }
                None => TOOL_ROWS_MAX - 1,
            };
            row_end[row] = row_end[row].max(e);
            row
        })
        .collect()
}

fn svg(h: &mut String, t: &Timeline) {
    let span = ((t.end_ns - t.start_ns) as f64).max(1e9);
    let sc = Scale {
        t0: t.start_ns,
        span,
    };
    let rows = tool_rows(&t.tools, t.end_ns);
    let tool_rows_used = rows.iter().max().map_or(1, |m| m + 1);
    // Lanes: (label, height in rows).
    let lanes = [
        ("turns", 1),
        ("tool calls", tool_rows_used),
        ("compactions", 1),
        ("injections", 1),
        ("events", 1),
    ];
    let mut y = 30.0;
    let mut lane_y = Vec::new();
    for (_, n) in lanes {
        lane_y.push(y);
        y += n as f64 * ROW_H + 14.0;
    }
    let height = y + 10.0;
    let width = LABEL_W + PLOT_W + 20.0;
    let _ = write!(
        h,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width}\" height=\"{height}\" \
         viewBox=\"0 0 {width} {height}\" role=\"img\" aria-label=\"session timeline\">"
    );
    // Time axis with six ticks.
    for i in 0..=5 {
        let ns = t.start_ns + (span * i as f64 / 5.0) as i64;
        let x = sc.x(ns);
        let anchor = match i {
            0 => "start",
            5 => "end",
            _ => "middle",
        };
        let _ = write!(
            h,
            "<line x1=\"{x:.1}\" y1=\"22\" x2=\"{x:.1}\" y2=\"{:.1}\" stroke=\"#eceef1\"/>\
             <text x=\"{x:.1}\" y=\"14\" text-anchor=\"{anchor}\">{}</text>",
            height - 6.0,
            clock(ns)
        );
    }
    for ((label, n), ly) in lanes.iter().zip(&lane_y) {
        let _ = write!(
            h,
            "<text x=\"8\" y=\"{:.1}\">{label}</text><rect x=\"{LABEL_W}\" y=\"{ly:.1}\" \
             width=\"{PLOT_W}\" height=\"{:.1}\" fill=\"#f6f7f9\"/>",
            ly + 11.0,
            *n as f64 * ROW_H
        );
    }
    let bar = |h: &mut String, x0: f64, x1: f64, y: f64, color: &str, tip: &str| {
        let w = (x1 - x0).max(3.0);
        let _ = write!(
            h,
            "<rect x=\"{x0:.1}\" y=\"{:.1}\" width=\"{w:.1}\" height=\"{:.1}\" rx=\"2\" \
             fill=\"{color}\"><title>{}</title></rect>",
            y + 1.0,
            ROW_H - 2.0,
            esc(tip)
        );
    };
    for turn in &t.turns {
        let end = turn.end_ns.unwrap_or(t.end_ns);
        let color = if turn.error.is_some() {
            "#e15759"
        } else {
            "#4c78a8"
        };
        let tip = format!("turn at seq {}: {}", turn.seq, turn.prompt);
        bar(h, sc.x(turn.start_ns), sc.x(end), lane_y[0], color, &tip);
    }
    for (call, row) in t.tools.iter().zip(&rows) {
        let end = call.end_ns.unwrap_or(t.end_ns);
        let color = match (call.failed, call.end_ns) {
            (true, _) => "#e15759",
            (false, None) => "#bab0ac",
            (false, Some(_)) => "#59a14f",
        };
        let tip = format!(
            "{} (seq {}): {}{}",
            call.name,
            call.seq,
            dur(call.duration_ms),
            call.error
                .as_deref()
                .map(|e| format!(" FAILED: {e}"))
                .unwrap_or_default()
        );
        let y = lane_y[1] + *row as f64 * ROW_H;
        bar(h, sc.x(call.start_ns), sc.x(end), y, color, &tip);
    }
    for c in &t.compactions {
        let end = c.end_ns.unwrap_or(c.start_ns);
        let tip = format!("compaction ({}) at seq {}", c.trigger, c.seq);
        bar(h, sc.x(c.start_ns), sc.x(end), lane_y[2], "#f28e2b", &tip);
    }
    for i in &t.injections {
        let x = sc.x(i.ts_ns);
        let y = lane_y[3] + ROW_H / 2.0;
        let _ = write!(
            h,
            "<path d=\"M{x:.1} {:.1} l6 6 l-6 6 l-6 -6 z\" fill=\"#b07aa1\"><title>{}</title></path>",
            y - 6.0,
            esc(&format!(
                "injected at seq {} for {} ({} bytes{}): {}",
                i.seq,
                i.event.as_deref().unwrap_or("?"),
                i.bytes.unwrap_or(0),
                if i.truncated { ", truncated" } else { "" },
                crate::audit::one_line(&i.text, TOOLTIP_CHARS)
            ))
        );
    }
    for m in &t.marks {
        let x = sc.x(m.ts_ns);
        let color = if m.bad { "#e15759" } else { "#6a7380" };
        let _ = write!(
            h,
            "<rect x=\"{:.1}\" y=\"{:.1}\" width=\"3\" height=\"{:.1}\" fill=\"{color}\">\
             <title>{}</title></rect>",
            x - 1.5,
            lane_y[4],
            ROW_H,
            esc(&format!("seq {}: {}", m.seq, m.label))
        );
    }
    h.push_str("</svg>\n<p class=\"legend\">");
    for (color, label) in [
        ("#4c78a8", "turn"),
        ("#59a14f", "tool call"),
        ("#e15759", "failure"),
        ("#bab0ac", "still open"),
        ("#f28e2b", "compaction"),
        ("#b07aa1", "injection"),
        ("#6a7380", "session event"),
    ] {
        let _ = write!(
            h,
            "<span><i class=\"sw\" style=\"background:{color}\"></i>{label}</span>"
        );
    }
    h.push_str("</p>\n");
}

/// Writes a table; rows past the limit are counted, not shown.
fn table(h: &mut String, title: &str, head: &[&str], rows: impl Iterator<Item = Vec<String>>) {
    let _ = write!(h, "<h2>{}</h2><table><tr>", esc(title));
    for c in head {
        let _ = write!(h, "<th>{c}</th>");
    }
    h.push_str("</tr>");
    let mut n = 0;
    for row in rows {
        n += 1;
        if n > TABLE_ROWS_MAX {
            continue;
        }
        h.push_str("<tr>");
        for cell in row {
            h.push_str(&cell);
        }
        h.push_str("</tr>");
    }
    if n == 0 {
        let _ = write!(
            h,
            "<tr><td colspan=\"{}\" class=\"muted\">none</td></tr>",
            head.len()
        );
    }
    if n > TABLE_ROWS_MAX {
        let _ = write!(
            h,
            "<tr><td colspan=\"{}\" class=\"muted\">… {} more not shown</td></tr>",
            head.len(),
            n - TABLE_ROWS_MAX
        );
    }
    h.push_str("</table>\n");
}

/// Injected text, all of it, escaped: as it is when short, else folded under its first line
/// (a `<details>`: no script) with its line breaks kept.
fn injected_cell(text: &str) -> String {
    let chars = text.chars().count();
    if chars <= INJECTED_INLINE_CHARS && !text.contains('\n') {
        return td(text);
    }
    let first = text.lines().next().unwrap_or("");
    let lines = text.lines().count();
    format!(
        "<td><details><summary>{} <span class=\"muted\">({chars} characters, {lines} lines)</span>\
         </summary><pre class=\"inj\">{}</pre></details></td>",
        esc(&crate::audit::one_line(first, 160)),
        esc(text)
    )
}

fn td(s: &str) -> String {
    format!("<td>{}</td>", esc(s))
}

fn num(n: impl std::fmt::Display) -> String {
    format!("<td class=\"num\">{n}</td>")
}

fn tables(h: &mut String, t: &Timeline) {
    let ms = |a: i64, b: Option<i64>| b.and_then(|b| u64::try_from((b - a) / 1_000_000).ok());
    table(
        h,
        "Turns",
        &["seq", "start", "duration", "prompt", "outcome"],
        t.turns.iter().map(|u| {
            let outcome = match (&u.error, u.end_ns) {
                (Some(e), _) => format!("<td class=\"fail\">{}</td>", esc(e)),
                (None, Some(_)) => "<td class=\"ok\">done</td>".into(),
                (None, None) => "<td class=\"muted\">open</td>".into(),
            };
            vec![
                num(u.seq),
                td(&clock(u.start_ns)),
                num(dur(ms(u.start_ns, u.end_ns))),
                td(&u.prompt),
                outcome,
            ]
        }),
    );
    table(
        h,
        "Tool calls",
        &["seq", "start", "tool", "agent", "duration", "result"],
        t.tools.iter().map(|c| {
            let result = match (c.failed, c.end_ns) {
                (true, _) => format!(
                    "<td class=\"fail\">failed: {}</td>",
                    esc(c.error.as_deref().unwrap_or(""))
                ),
                (false, Some(_)) => "<td class=\"ok\">ok</td>".into(),
                (false, None) => "<td class=\"muted\">no result recorded</td>".into(),
            };
            vec![
                num(c.seq),
                td(&clock(c.start_ns)),
                td(&c.name),
                td(c.agent.as_deref().unwrap_or("")),
                num(dur(c.duration_ms)),
                result,
            ]
        }),
    );
    table(
        h,
        "Compactions",
        &["seq", "start", "trigger", "duration"],
        t.compactions.iter().map(|c| {
            vec![
                num(c.seq),
                td(&clock(c.start_ns)),
                td(&c.trigger),
                num(dur(ms(c.start_ns, c.end_ns))),
            ]
        }),
    );
    table(
        h,
        "Injected context",
        &["seq", "time", "for event", "bytes", "text"],
        t.injections.iter().map(|i| {
            let event = match (&i.event, i.event_seq) {
                (Some(e), Some(s)) => format!("{e} (seq {s})"),
                (None, Some(s)) => format!("seq {s}"),
                _ => "?".into(),
            };
            let bytes = format!(
                "{}{}",
                i.bytes.unwrap_or(0),
                if i.truncated { " (truncated)" } else { "" }
            );
            vec![
                num(i.seq),
                td(&clock(i.ts_ns)),
                td(&event),
                num(esc(&bytes)),
                injected_cell(&i.text),
            ]
        }),
    );
    table(
        h,
        "Session events",
        &["seq", "time", "kind", "what"],
        t.marks.iter().map(|m| {
            let what = if m.bad {
                format!("<td class=\"fail\">{}</td>", esc(&m.label))
            } else {
                td(&m.label)
            };
            vec![num(m.seq), td(&clock(m.ts_ns)), td(&m.kind), what]
        }),
    );
    table(
        h,
        "Records per kind",
        &["kind", "records"],
        t.kinds.iter().map(|(k, n)| vec![td(k), num(n)]),
    );
}
