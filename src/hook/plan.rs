//! What the hook will do with an event, decided once it is routed: when its work must be done
//! ([`Timing`]), which exec handlers run, whether context is rendered and where it is
//! injected, and memory's part ([`Plan`]). From the configuration and the one parsed event;
//! memory's plan reads the scope journals at SessionStart, under the deadline.
//!
//! **The timing rule.** The deadline (`--deadline-ms`, `[hook] deadline_ms`, 250 ms) is the
//! hook's budget for its own work, counted from when its input was complete: a payload that
//! arrives late gets the same budget as one that was waiting, and the same reply. The host is
//! still waiting then: it waits for the hook as long as its own timeout for that event
//! ([`host_timeout`]), counted from when it started the hook. Only input that completes so
//! close to that timeout that the work could not end before it (less than the deadline
//! before it, or half the timeout when the deadline is longer than that) is *late*: it is
//! journaled at once, without exec handlers, context or any wait for the session's lock, and
//! the reply carries only a notice the user must see. A reply whose work ran past the
//! deadline (the event's write was under way) still carries its context while the host waits.

use std::time::{Duration, Instant};

use crate::config::ExecHandler;
use crate::context::{InjectionPoint, Policy};
use crate::event::Event;
use crate::hook::route::Captured;
use crate::hook::HookOptions;
use crate::host::Host;

/// How long the OpenCode, Pi and OpenClaw bridges wait for one `sjournal hook` call before
/// they kill it (`CALL_TIMEOUT_MS` in `tools/bridge-common/sjournal-hook.ts`). OpenCode and
/// Pi themselves wait for a plugin without limit; OpenClaw gives its prompt hooks 15 s.
const BRIDGE_CALL_TIMEOUT: Duration = Duration::from_secs(10);

/// For a host that documents no hook timeout (Cline), or one that is not known: the
/// shortest timeout any host gives a hook sjournal installs (Codex's SessionEnd, 3 s).
const SHORTEST_HOST_TIMEOUT: Duration = Duration::from_secs(3);

/// How long `host` waits for the hook's answer to `event`, from the moment it started the
/// hook. Claude Code, Codex and Gemini CLI: the timeout sjournal's installer writes for that
/// event (5 s, 10 s for SessionStart, the compaction events and Stop; Codex's SessionEnd 3 s),
/// which is below each host's documented default (Claude Code 600 s, 30 s for
/// UserPromptSubmit; Codex 600 s; Gemini CLI 60 s); an event the installer does not register,
/// the shortest it writes for that host. Cursor runs Claude Code's hooks: Claude Code's.
/// OpenCode, Pi and OpenClaw: their bridge's call timeout. Cline (no documented timeout) and
/// an unknown host: the shortest of all.
pub(crate) fn host_timeout(host: Option<Host>, event: Option<&str>) -> Duration {
    if let Some(spec) = host.and_then(Host::hooks_install) {
        let hooks = spec.hooks;
        return event
            .and_then(|e| hooks.iter().find(|s| s.event == e))
            .or_else(|| hooks.iter().min_by_key(|s| s.timeout))
            .map_or(SHORTEST_HOST_TIMEOUT, |s| {
                spec.timeout_unit.duration(s.timeout)
            });
    }
    match host {
        Some(Host::OpenCode | Host::Pi | Host::OpenClaw) => BRIDGE_CALL_TIMEOUT,
        _ => SHORTEST_HOST_TIMEOUT,
    }
}

/// When the hook's work must be done (see the module docs).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Timing {
    /// The hook started (the host started it, as near as the hook can tell).
    pub start: Instant,
    /// The input was complete.
    pub input_done: Instant,
    /// The work's deadline: `input_done` plus the hook's deadline.
    pub deadline: Instant,
    /// The host stops waiting for the reply (`start` plus [`host_timeout`]).
    pub host_gives_up: Instant,
    /// Too close to `host_gives_up` for the work: journal the event at once, no context.
    pub late: bool,
}

impl Timing {
    pub fn new(
        start: Instant,
        input_done: Instant,
        budget: Duration,
        host: Option<Host>,
        event: Option<&str>,
    ) -> Timing {
        let waits = host_timeout(host, event);
        let host_gives_up = start + waits;
        Timing {
            start,
            input_done,
            deadline: input_done + budget,
            host_gives_up,
            late: input_done + budget.min(waits / 2) > host_gives_up,
        }
    }
}

/// What the hook does with one event.
pub(crate) struct Plan<'c> {
    /// The exec handlers that run for it (none for late input).
    pub handlers: Vec<&'c ExecHandler>,
    /// Render context for it.
    pub want_context: bool,
    /// What the injection policy reads of the event (its `event_seq` is set when rendering);
    /// None for input that is not an event.
    pub point: Option<InjectionPoint>,
    pub policy: Policy,
    /// Memory's part: what it injects now, what it writes after the reply.
    pub memory: crate::memory::hook::Plan,
    /// Load the session's state even without context (memory's write after the reply reads
    /// it).
    pub want_state: bool,
}

/// Plans the work for the captured event `cap`, parsed as `event` (None: not an event).
pub(crate) fn plan<'c>(
    opts: &'c HookOptions,
    cap: &Captured,
    event: Option<&Event<'_>>,
    t: &Timing,
) -> Plan<'c> {
    let handlers = match (cap.event.as_deref(), t.late) {
        (Some(e), false) => opts.config.handlers_for(e),
        _ => Vec::new(),
    };
    let policy = Policy::from_config(&opts.config);
    let want_context = !t.late
        && match (cap.protocol, cap.event.as_deref()) {
            (Some(p), Some(ev)) => policy.wants(p, ev),
            _ => false,
        };
    // Memory reads and writes the root's scope journals: nothing without a root.
    let memory = match (event, &opts.root) {
        (Some(e), Ok(root)) => crate::memory::hook::plan(
            root,
            e,
            &cap.session_id,
            opts.env_project_dir.as_deref().map(std::path::Path::new),
            (!t.late)
                .then(|| crate::memory::hook::Settings {
                    deadline: Some(t.deadline),
                    ..crate::memory::hook::Settings::from(&opts.config.memory)
                })
                .as_ref(),
        ),
        _ => Default::default(),
    };
    Plan {
        handlers,
        want_context,
        point: event.map(|e| InjectionPoint::of_event(e, 0)),
        policy,
        want_state: !t.late && memory.needs_state(),
        memory,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_host_waits_as_long_as_its_installed_timeout() {
        let s = Duration::from_secs;
        let t = |h, e| host_timeout(Some(h), Some(e));
        assert_eq!(t(Host::Claude, "SessionStart"), s(10));
        assert_eq!(t(Host::Claude, "UserPromptSubmit"), s(5));
        assert_eq!(t(Host::Codex, "SessionEnd"), s(3));
        assert_eq!(t(Host::Gemini, "BeforeAgent"), s(5));
        assert_eq!(t(Host::Gemini, "SessionStart"), s(10));
        assert_eq!(t(Host::Pi, "SessionStart"), s(10));
        assert_eq!(t(Host::Cline, "TaskStart"), s(3));
        // Not installed by sjournal: the host's shortest.
        assert_eq!(t(Host::Claude, "Setup"), s(5));
        assert_eq!(host_timeout(None, None), s(3));
    }

    #[test]
    fn input_is_late_only_when_the_work_could_not_end_before_the_host_gives_up() {
        let start = Instant::now();
        let ms = Duration::from_millis;
        let at = |done: u64, budget: u64| {
            Timing::new(
                start,
                start + ms(done),
                ms(budget),
                Some(Host::Claude),
                Some("SessionStart"),
            )
            .late
        };
        // 10 s for SessionStart.
        assert!(!at(400, 250));
        assert!(!at(9_750, 250));
        assert!(at(9_751, 250));
        // A deadline longer than the host's timeout: half of it is kept for the work.
        assert!(!at(4_000, 60_000));
        assert!(at(5_001, 60_000));
    }
}
