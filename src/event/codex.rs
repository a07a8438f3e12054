//! Codex CLI: the Claude Code protocol's subset (hook-protocols §3.1), plus `turn_id` and
//! `model` on every event and a `transcript_path` that may be null. Same names, same fields.

use super::wire::Wire;
use super::{claude, Event, Host};

pub(super) fn normalize<'a>(w: &mut Wire<'a>, record_kind: &'a str) -> Event<'a> {
    claude::normalize(Host::Codex, w, record_kind)
}
