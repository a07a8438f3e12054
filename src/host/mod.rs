//! The agent hosts: one module per host, each declaring what is particular to it — the clues
//! that tell its payloads apart, where its payload keeps the session id and the event name,
//! which events take injected context and the exact stdout it expects back: as each host's
//! hook documentation describes it, corrected by what the real hosts send and accept when
//! `tests/real_hosts/` runs them (their payloads are in `tests/fixtures/`).
//!
//! There is **one** detector, `Clues::host`, used both by the hook (which answers in the
//! host's protocol and files the event under its session) and by the fold (which normalizes
//! the event with the host's adapter in `crate::event`), so the two always agree. The hook
//! reads the clues from a parsed `serde_json::Value` (`Clues::from_value`); the fold from
//! its borrowed wire view. Replies are built with serde_json, so the context text is always
//! escaped correctly, and are one line with no trailing text.
//!
//! Each host is one folder, `host/<name>/`: `mod.rs` (its clues for the detector, the events
//! that take context, its reply and notice, who wrote a prompt), `normalize.rs` (its adapter
//! from the wire view to the canonical [`Event`]; [`Event::parse`] is implemented here, above
//! `event/`, which imports nothing of this module) and `install.rs` (what `sjournal install`
//! writes for it, as data: the settings file and hooks of a host with exec hooks
//! (`install::HooksInstall`), the files of a bridge (`install::BridgeInstall`), where it
//! loads MCP servers (`install::McpInstall`); `crate::install` locates the files and edits
//! them). OpenCode and Pi speak Claude Code's protocol, so their folders hold only
//! `install.rs`. The host's id, [`Host`], is defined one floor down in `event/host_id.rs`.
//! Adding a host touches:
//! - its folder `host/<name>/` (new);
//! - one line in `event/host_id.rs` (the `Host` variant, with its name in `as_str` and `ALL`);
//! - the dispatch arms here (`mod <name>;`, the `match self` arms of [`Host`]'s methods, the
//!   detector `Clues::host` and `Event::parse_as`), which the compiler lists for you;
//! - its digest code (`fold/digest/encode.rs`, `HOSTS`);
//! - for `sjournal install`, the name lists that map the command line onto the specs: a
//!   variant of `install::InstallTarget` or `install::bridge::Bridge`, of
//!   `install::mcp::McpHost`, of the command line's `HostArg`, and its row in `doctor`'s
//!   host list (each with its one arm naming the [`Host`]).

mod claude;
mod cline;
mod codex;
mod cursor;
mod gemini;
pub(crate) mod install;
mod openclaw;
mod opencode;
mod pi;

use std::borrow::Cow;

use serde_json::Value;

use crate::event::wire::Wire;
use crate::event::{is_object, Event, EventKind};
use crate::format::payload::is_system_kind;
use crate::format::record::valid_kind;

pub(crate) use codex::is_rollout;

pub use crate::event::Host;

impl Host {
    /// Which host sent this payload (see `Clues::host`).
    pub fn detect(value: &Value) -> Host {
        Clues::from_value(value).host()
    }

    /// The session the event belongs to.
    pub fn session_id(self, v: &Value) -> Option<&str> {
        let s = |k: &str| v.get(k).and_then(Value::as_str).filter(|s| !s.is_empty());
        match self {
            Host::Cursor => s("conversation_id").or_else(|| s("session_id")),
            Host::Cline => cline::session_id(v),
            Host::OpenClaw => openclaw::session_id(v),
            _ => s("session_id"),
        }
    }

    /// The host's name for the event.
    pub fn event_name(self, v: &Value) -> Option<&str> {
        let s = |k: &str| v.get(k).and_then(Value::as_str);
        match self {
            Host::Cline => s("hookName"),
            Host::OpenClaw => s("hook_event_name").or_else(|| s("event")),
            _ => s("hook_event_name"),
        }
    }

    /// The record kind of an event from this host: its event name ([`Host::event_name`]) when
    /// that is a valid kind and not a system kind, else `event`. The one rule for the hook and
    /// for `append` / `import`.
    pub fn event_kind(self, v: &Value) -> &str {
        self.event_name(v)
            .filter(|e| valid_kind(e) && !is_system_kind(e))
            .unwrap_or("event")
    }

    /// What `sjournal install` writes for this host's exec hooks (`install::HooksInstall`,
    /// declared in the host's folder); None for a host reached through a bridge or hook files.
    /// Cursor runs Claude Code's hooks, so it has Claude Code's.
    pub(crate) fn hooks_install(self) -> Option<&'static install::HooksInstall> {
        match self {
            Host::Claude | Host::Cursor => Some(&claude::install::INSTALL),
            Host::Codex => Some(&codex::install::INSTALL),
            Host::Gemini => Some(&gemini::install::INSTALL),
            Host::OpenCode | Host::Pi | Host::OpenClaw | Host::Cline | Host::Unknown => None,
        }
    }

    /// What `sjournal install` writes for a host that runs one hook file per event
    /// ([`install::HookFilesInstall`], declared in the host's folder); None for the others.
    pub(crate) const fn hook_files_install(self) -> Option<&'static install::HookFilesInstall> {
        match self {
            Host::Cline => Some(&cline::install::INSTALL),
            _ => None,
        }
    }

    /// Where `sjournal install` registers `sjournal mcp` for this host
    /// (`install::McpInstall`, declared in the host's folder); None for a host it does not
    /// register with (Cursor, an unknown host).
    // Read by `install::mcp`, which the `search` feature builds (the MCP server is part of it).
    #[cfg_attr(not(feature = "search"), allow(dead_code))]
    pub(crate) fn mcp_install(self) -> Option<&'static install::McpInstall> {
        match self {
            Host::Claude => Some(&claude::install::MCP),
            Host::Codex => Some(&codex::install::MCP),
            Host::Gemini => Some(&gemini::install::MCP),
            Host::OpenCode => Some(&opencode::install::MCP),
            Host::Pi => Some(&pi::install::MCP),
            Host::OpenClaw => Some(&openclaw::install::MCP),
            Host::Cline => Some(&cline::install::MCP),
            Host::Cursor | Host::Unknown => None,
        }
    }

    /// The bridge `sjournal install` writes for a host without exec hooks
    /// (`install::BridgeInstall`, declared in the host's folder); None for the others.
    pub(crate) fn bridge_install(self) -> Option<&'static install::BridgeInstall> {
        match self {
            Host::OpenCode => Some(&opencode::install::BRIDGE),
            Host::Pi => Some(&pi::install::BRIDGE),
            Host::OpenClaw => Some(&openclaw::install::BRIDGE),
            Host::Cline => Some(&cline::install::BRIDGE),
            _ => None,
        }
    }

    /// Events that get the session's context by default.
    pub fn default_context_event(self, event: &str) -> bool {
        match self {
            Host::Claude | Host::Codex | Host::OpenCode | Host::Pi | Host::Unknown => {
                claude::default_context_event(event)
            }
            Host::Gemini => gemini::default_context_event(event),
            Host::Cursor => cursor::default_context_event(event),
            Host::Cline => cline::default_context_event(event),
            Host::OpenClaw => openclaw::default_context_event(event),
        }
    }

    /// Events whose reply can carry context at all (configuration may add these).
    pub fn accepts_context(self, event: &str) -> bool {
        match self {
            Host::Claude | Host::OpenCode | Host::Pi | Host::Unknown => {
                claude::accepts_context(event)
            }
            Host::Codex => codex::accepts_context(event),
            Host::Gemini => gemini::accepts_context(event),
            Host::Cursor => cursor::accepts_context(event),
            Host::Cline => cline::accepts_context(event),
            Host::OpenClaw => openclaw::accepts_context(event),
        }
    }

    /// The stdout for an event: `Some(json)` to print, `None` to print nothing.
    pub fn reply(self, event: &str, context: Option<&str>) -> Option<String> {
        let context = context.filter(|c| !c.is_empty() && self.accepts_context(event));
        match self {
            Host::Cline => Some(cline::reply(context)),
            Host::Cursor => context.map(cursor::reply),
            _ => context.map(|c| claude::reply(event, c)),
        }
    }

    /// The stdout for an event (None: the hook failed before it knew one, or the reply is no
    /// longer timely) carrying `notice` for the **user**, through the host's visible channel:
    /// `systemMessage` (Claude Code, Codex and Gemini CLI show it as a warning; the OpenCode,
    /// Pi and OpenClaw bridges read it too), `user_message` (Cursor), `errorMessage` (Cline,
    /// with `cancel: false`). Used when an event could not be stored durably in the journal's
    /// root. Without a notice this is [`Host::reply`] (or [`Host::fail_open_reply`] without
    /// an event).
    pub fn reply_with_notice(
        self,
        event: Option<&str>,
        context: Option<&str>,
        notice: Option<&str>,
    ) -> Option<String> {
        let base = match event {
            Some(ev) => self.reply(ev, context),
            None => self.fail_open_reply(),
        };
        let Some(notice) = notice else {
            return base;
        };
        let mut v: Value = base
            .and_then(|b| serde_json::from_str(&b).ok())
            .unwrap_or_else(|| Value::Object(Default::default()));
        match self {
            Host::Cursor => cursor::notice(&mut v, notice),
            Host::Cline => cline::notice(&mut v, notice),
            Host::Claude
            | Host::Codex
            | Host::Gemini
            | Host::OpenClaw
            | Host::OpenCode
            | Host::Pi
            | Host::Unknown => claude::notice(&mut v, notice),
        }
        Some(v.to_string())
    }

    /// What to print when the hook has nothing to say or failed: nothing, except for Cline,
    /// whose hooks answer every event with a JSON object (`cancel: false` lets it proceed).
    pub fn fail_open_reply(self) -> Option<String> {
        match self {
            Host::Cline => Some(cline::reply(None)),
            _ => None,
        }
    }
}

/// The elements hosts wrap around what they put into a model's context themselves, found in
/// the hosts' own code (the versions the project tests): what a hook injects, a notification,
/// a summary. Text sjournal injects never carries one as a tag (`context::text::neutralise`):
/// a `</hook_context>` written by a model or a tool would otherwise close the host's wrapper
/// early, and what follows would read as the host's (or the user's) own words.
///
/// - every host that wraps hook output: `hook_context` (Gemini CLI, Cline), `system-reminder`
///   (Claude Code, OpenCode);
/// - Claude Code: its own prompts and tool framing (`task-notification`, `channel`,
///   `webhook-payload`, `local-command-stdout`, `command-name`, `bash-input`, ...), and the
///   compactor's `summary` / `analysis`;
/// - Gemini CLI: `session_context`, `state_snapshot` (the compressed history's summary),
///   `untrusted_context` and `output` (its framing of MCP and shell tool results);
/// - Codex: `environment_context`, `user_instructions`, `subagent_notification`,
///   `turn_aborted`, `user_shell_command`, ...;
/// - Cline: `environment_details`, `task`, `feedback`, `user_message`;
/// - Pi: `summary`, `previous-summary`, `conversation`;
/// - OpenClaw: its `<<<BEGIN_…>>>` / `<<<END_…>>>` markers (`OPENCLAW_INTERNAL_CONTEXT`,
///   `EXTERNAL_UNTRUSTED_CONTENT`, ...), matched by their `<<<` opening.
pub const WRAPPER_TAGS: &[&str] = &[
    "hook_context",
    "system-reminder",
    "task-notification",
    "channel",
    "webhook-payload",
    "skill-watcher-idle-wake",
    "artifact-room-event",
    "local-command-stdout",
    "local-command-stderr",
    "local-command-caveat",
    "command-name",
    "command-message",
    "command-args",
    "user-prompt-submit-hook",
    "bash-input",
    "bash-stdout",
    "bash-stderr",
    "persisted-output",
    "summary",
    "analysis",
    "session_context",
    "state_snapshot",
    "untrusted_context",
    "output",
    "environment_context",
    "user_instructions",
    "subagent_notification",
    "turn_aborted",
    "user_shell_command",
    "agent_message_board_notification",
    "context_window_reminder",
    "environment_details",
    "task",
    "feedback",
    "user_message",
    "previous-summary",
    "conversation",
];

/// Who wrote a prompt, as the host that sent it tells it ([`Host::prompt_author`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Author {
    /// The human user of a main session, typing: the only author whose "remember: …" is
    /// accepted as said.
    User,
    /// A task another agent's model wrote (a subagent's prompt, a message between sessions).
    Agent,
    /// A run the user did not start now: a scheduled job, a heartbeat.
    Schedule,
    /// Someone other than the owner (a channel message the host does not vouch for).
    Other,
    /// The host or an extension of it (a background task's notification, an expanded
    /// prompt template).
    Host,
    /// The payload does not tell (a bridge too old to say): not taken as the user's.
    Unknown,
}

impl Author {
    pub const fn as_str(self) -> &'static str {
        match self {
            Author::User => "user",
            Author::Agent => "agent",
            Author::Schedule => "schedule",
            Author::Other => "other-sender",
            Author::Host => "host",
            Author::Unknown => "unknown",
        }
    }

    /// Whether a prompt of this author opens a turn of the session whose journal holds it.
    /// A prompt the host generated does not; nor does a subagent's task that arrives in its
    /// parent's session (it carries the subagent's `agent_id` or `parent_agent_id`). A
    /// subagent or a scheduled job with a session of its own has its prompts as that
    /// session's turns.
    pub(crate) fn is_turn(self, e: &crate::event::Event<'_>) -> bool {
        match self {
            Author::Host => false,
            Author::Agent => !in_parent(e),
            _ => true,
        }
    }
}

/// The event comes from a subagent running inside its parent's session (same session id).
fn in_parent(e: &crate::event::Event<'_>) -> bool {
    e.agent_id.as_deref().is_some_and(|a| !a.is_empty()) || e.origin.parent_agent
}

/// Whether `prompt` opens (after whitespace) with an element named one of `tags`
/// (`<tag>`, `<tag attr…>`, `<tag/>`).
fn opens_with_element<'t>(prompt: &str, tags: impl IntoIterator<Item = &'t str>) -> bool {
    let Some(p) = prompt.trim_start().strip_prefix('<') else {
        return false;
    };
    tags.into_iter().any(|tag| {
        p.strip_prefix(tag)
            .is_some_and(|rest| rest.starts_with(['>', ' ', '\n', '\t', '/']))
    })
}

/// The prompt submissions of each host, by the host's own event name.
fn prompt_event(host: Host, name: &str) -> bool {
    match host {
        Host::Gemini => name == "BeforeAgent",
        Host::Cursor => name == "beforeSubmitPrompt",
        Host::Cline => matches!(name, "UserPromptSubmit" | "prompt_submit"),
        Host::OpenClaw => name == "before_prompt_build",
        Host::Claude | Host::Codex | Host::OpenCode | Host::Pi | Host::Unknown => {
            name == "UserPromptSubmit"
        }
    }
}

impl Host {
    /// Who wrote the prompt of `e`, as this host identifies it; None when `e` is not a prompt
    /// submission. The one place the rule is written (SECURITY.md has it as a table):
    ///
    /// - every host: a prompt carried by a subagent (`agent_id`; Cline's `parent_agent_id`)
    ///   is an agent's;
    /// - Claude Code: a prompt that is one of the host's own elements (`<task-notification>`,
    ///   `<channel>`, `<webhook-payload>`, ...) is the host's (a channel's, another sender's);
    ///   Codex: likewise its own (`<subagent_notification>`, `<turn_aborted>`, ...);
    /// - Codex, Gemini CLI, Cursor, Cline: otherwise the user's;
    /// - OpenCode and Pi: what the bridge says (`prompt_source`): OpenCode `user`; Pi
    ///   `interactive` (typed; `rpc` is a program's, `extension` and `template` the host's);
    ///   nothing said: unknown;
    /// - OpenClaw: the user's only from a main session (its key names no subagent, spawn or
    ///   cron), started by the user (`ctx.trigger` "user"), from an external user
    ///   (`inputProvenance`), and from the owner when a channel names its sender
    ///   (`senderIsOwner` true).
    pub fn prompt_author(self, e: &crate::event::Event<'_>) -> Option<Author> {
        if !prompt_event(self, &e.name) {
            return None;
        }
        if in_parent(e) {
            return Some(Author::Agent);
        }
        let o = &e.origin;
        if o.sender_is_owner == Some(false) {
            return Some(Author::Other);
        }
        Some(match self {
            Host::Claude => claude::prompt_author(e.prompt.as_deref().unwrap_or("")),
            Host::Codex => codex::prompt_author(e.prompt.as_deref().unwrap_or("")),
            Host::Gemini | Host::Cursor | Host::Cline => Author::User,
            Host::OpenCode => match o.prompt_source.as_deref() {
                Some("user") if e.parent_session.is_none() => Author::User,
                Some("user" | "subagent") => Author::Agent,
                _ => Author::Unknown,
            },
            Host::Pi => match o.prompt_source.as_deref() {
                Some("interactive") => Author::User,
                Some("extension" | "template") => Author::Host,
                Some("rpc") => Author::Other,
                _ => Author::Unknown,
            },
            Host::OpenClaw => openclaw::prompt_author(e),
            Host::Unknown => Author::Unknown,
        })
    }
}

impl std::fmt::Display for Host {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// `--host`: a host, or `auto` (detect from the payload).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HostFlag {
    Auto,
    Fixed(Host),
}

impl std::str::FromStr for HostFlag {
    type Err = String;
    fn from_str(s: &str) -> Result<HostFlag, String> {
        let s = s.to_ascii_lowercase();
        match s.as_str() {
            "auto" => Ok(HostFlag::Auto),
            "claude-code" => Ok(HostFlag::Fixed(Host::Claude)),
            _ => match Host::from_name(&s).filter(|h| *h != Host::Unknown) {
                Some(h) => Ok(HostFlag::Fixed(h)),
                None => Err(format!(
                    "unknown host {s:?} (expected auto, claude, codex, gemini, cursor, cline, \
                     openclaw, opencode or pi)"
                )),
            },
        }
    }
}

/// The keys that tell hosts apart.
#[derive(Debug, Default, Clone)]
pub(crate) struct Clues<'a> {
    pub hook_event_name: Option<&'a str>,
    pub event: Option<&'a str>,
    pub hook_name: bool,
    pub cline_version: bool,
    pub task_id: bool,
    pub session_key: bool,
    /// `sjournal_bridge`: the bridge that made the payload (`openclaw`, `opencode`, `pi`).
    pub bridge: Option<&'a str>,
    pub conversation_id: bool,
    pub cursor_version: bool,
    pub generation_id: bool,
    pub workspace_roots: bool,
    pub timestamp: bool,
    pub turn_id: bool,
    /// The transcript's file name starts with `rollout-` (Codex's session files).
    pub rollout_transcript: bool,
}

impl<'a> Clues<'a> {
    pub(crate) fn from_value(v: &'a Value) -> Clues<'a> {
        let has = |k: &str| v.get(k).is_some();
        let str_of = |k: &str| v.get(k).and_then(Value::as_str);
        Clues {
            hook_event_name: str_of("hook_event_name"),
            event: str_of("event"),
            hook_name: has("hookName"),
            cline_version: has("clineVersion"),
            task_id: has("taskId"),
            session_key: has("sessionKey"),
            bridge: str_of("sjournal_bridge"),
            conversation_id: has("conversation_id"),
            cursor_version: has("cursor_version"),
            generation_id: has("generation_id"),
            workspace_roots: has("workspace_roots"),
            timestamp: has("timestamp"),
            turn_id: has("turn_id"),
            rollout_transcript: str_of("transcript_path").is_some_and(codex::is_rollout),
        }
    }

    /// Which host sent the payload, judged by the keys only that host sends (Cline's
    /// `hookName`, OpenClaw's `sessionKey` or bridge, Cursor's `conversation_id`, Gemini's
    /// event names and `timestamp`, Codex's `turn_id` or `rollout-` transcript). Claude Code
    /// is the default for any payload with a `hook_event_name`; `Unknown` when nothing matches.
    pub(crate) fn host(&self) -> Host {
        let name = self.hook_event_name;
        if cline::matches(self) {
            Host::Cline
        } else if openclaw::matches(self) {
            Host::OpenClaw
        } else if self.bridge == Some("opencode") {
            Host::OpenCode
        } else if self.bridge == Some("pi") {
            Host::Pi
        } else if cursor::matches(self) {
            Host::Cursor
        } else if gemini::matches(self) {
            Host::Gemini
        } else if codex::matches(self) {
            Host::Codex
        } else if name.is_some() {
            Host::Claude
        } else {
            Host::Unknown
        }
    }
}

#[cfg(test)]
mod tests;

impl<'a> Event<'a> {
    /// Parses a journaled event: `record_kind` is the record's kind, `raw` its JSON text.
    /// The host is detected from the payload.
    pub fn parse(record_kind: &'a str, raw: &'a str) -> Event<'a> {
        Self::parse_as(None, record_kind, raw)
    }

    /// Like [`Event::parse`], with the host given (`--host`) instead of detected.
    pub fn parse_as(host: Option<Host>, record_kind: &'a str, raw: &'a str) -> Event<'a> {
        // serde would also read a struct from an array, positionally: only objects count.
        let parsed = if is_object(raw) {
            serde_json::from_str(raw)
        } else {
            Err(serde::de::Error::custom("not an object"))
        };
        let mut wire: Wire<'a> = match parsed {
            Ok(w) => w,
            Err(_) => {
                let mut e = Event::bare(
                    host.unwrap_or(Host::Unknown),
                    EventKind::Other,
                    Cow::Borrowed(record_kind),
                );
                e.parsed = false;
                return e;
            }
        };
        let host = host.unwrap_or_else(|| wire.clues().host());
        let origin = wire.origin();
        let w = &mut wire;
        let mut e = match host {
            // The OpenCode and Pi bridges send Claude Code's shapes.
            Host::Claude | Host::OpenCode | Host::Pi | Host::Unknown => {
                claude::normalize::normalize(host, w, record_kind)
            }
            Host::Codex => codex::normalize::normalize(w, record_kind),
            Host::Gemini => gemini::normalize::normalize(w, record_kind),
            Host::Cursor => cursor::normalize::normalize(w, record_kind),
            Host::Cline => cline::normalize::normalize(w, record_kind),
            Host::OpenClaw => openclaw::normalize::normalize(w, record_kind),
        };
        e.origin = origin;
        // A prompt the host generated, or a subagent's task carried in its parent's session,
        // is no turn of this session: not the user's request, latest request or instruction.
        if e.kind == EventKind::UserPromptSubmit
            && e.host.prompt_author(&e).is_some_and(|a| !a.is_turn(&e))
        {
            e.kind = EventKind::Other;
        }
        e
    }
}

impl Wire<'_> {
    /// The clues the one detector (`Clues::host`) reads.
    pub(crate) fn clues(&self) -> Clues<'_> {
        Clues {
            hook_event_name: self.hook_event_name.as_deref(),
            event: self.event.as_deref(),
            hook_name: self.hook_name.0.is_some(),
            cline_version: self.cline_version.0,
            task_id: self.task_id.0.is_some(),
            session_key: self.session_key.0.is_some(),
            bridge: self.sjournal_bridge.as_deref(),
            conversation_id: self.conversation_id.0.is_some(),
            cursor_version: self.cursor_version.0,
            generation_id: self.generation_id.0,
            workspace_roots: self.workspace_roots.0.is_some(),
            timestamp: self.timestamp.0,
            turn_id: self.turn_id.0.is_some(),
            rollout_transcript: self.transcript_path.as_deref().is_some_and(is_rollout),
        }
    }
}
