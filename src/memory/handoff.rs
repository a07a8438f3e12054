//! The handoff: at `startup`, what one of the project's last
//! sessions (the newest unfinished one, `memory::hook`) left unfinished — open todos, the turn it was in when it stopped answering, unresolved
//! failures, running background work — in at most `limits::HANDOFF_CHARS`. A fact about the
//! last session, so it is not reviewed; the user's standing instructions are not in it (they
//! reach the model only through reviewed memory).

use crate::context::text::{code, cut, one_line};
use crate::context::ExtraSection;
use crate::fold::State;
use crate::limits::HANDOFF_CHARS;

/// What the session left unfinished, if anything.
pub fn unfinished(prev: &State) -> bool {
    open_todos(prev) > 0
        || prev.failures.items.iter().any(|f| f.resolved.is_none())
        || prev.left_off.running.is_some()
        || !prev.background.is_empty()
}

fn open_todos(s: &State) -> usize {
    s.todos
        .items
        .iter()
        .filter(|t| !matches!(t.status.as_str(), "completed" | "cancelled"))
        .count()
}

/// True if the session was ended by `/clear` (what it held was cleared away).
pub fn cleared(prev: &State) -> bool {
    prev.ended
        .as_ref()
        .is_some_and(|e| e.reason.as_deref() == Some("clear"))
}

/// The handoff section from `prev` (None if it left nothing unfinished).
pub fn section(prev: &State) -> Option<ExtraSection> {
    if !unfinished(prev) {
        return None;
    }
    let id = prev.identity.session_id.as_deref().unwrap_or("?");
    let short: String = id.chars().take(8).collect();
    let mut lines = Vec::new();
    if open_todos(prev) > 0 {
        lines.push("Open todos:".to_owned());
        for t in &prev.todos.items {
            let mark = match t.status.as_str() {
                "completed" => continue,
                "cancelled" => continue,
                "in_progress" => "[>]",
                _ => "[ ]",
            };
            let tail = if mark == "[>]" { " (in progress)" } else { "" };
            lines.push(format!("- {mark} {}{tail}", cut(&one_line(&t.text), 160)));
        }
    }
    if let Some(run) = &prev.left_off.running {
        let last = run
            .actions
            .back()
            .map(|a| {
                let d = a
                    .detail
                    .as_deref()
                    .map(|d| code(d, 120))
                    .unwrap_or_default();
                format!(", last: {} {d}", a.tool)
            })
            .unwrap_or_default();
        lines.push(format!(
            "Left off: turn {} got no answer (interrupted){last}",
            run.turn
        ));
    }
    for f in prev
        .failures
        .items
        .iter()
        .rev()
        .filter(|f| f.resolved.is_none())
        .take(3)
    {
        let status = f
            .exit_code
            .map_or("failed".to_owned(), |n| format!("exit {n}"));
        let err = f.error_tail.last().map(|e| cut(e, 120)).unwrap_or_default();
        lines.push(format!(
            "Unresolved: {} → {status}: {err}",
            code(&f.detail, 120)
        ));
    }
    for b in prev.background.iter().take(3) {
        lines.push(format!(
            "Still running: {} {}",
            b.kind,
            cut(&one_line(&b.description), 120)
        ));
    }
    let title = format!("## Unfinished in a recent session ({short})");
    let mut total = title.chars().count() + 1;
    let mut kept = Vec::new();
    for l in lines {
        let n = l.chars().count() + 1;
        if total + n > HANDOFF_CHARS {
            break;
        }
        total += n;
        kept.push(l);
    }
    Some(ExtraSection {
        key: format!("handoff:{id}"),
        title,
        lines: kept,
    })
}
