//! The id of the agent host that sent an event: the one enum line a new host adds here. What
//! is particular to each host (detection, normalization, replies, prompt authors) lives in
//! `crate::host::<name>/`, which builds on this floor; nothing in `event/` imports it.

/// The agent host that sent an event.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Host {
    Claude,
    Codex,
    Gemini,
    Cursor,
    Cline,
    OpenClaw,
    /// OpenCode and Pi, through their bridges (`tools/opencode-plugin`, `tools/pi-extension`),
    /// which send Claude Code's payload shapes marked `"sjournal_bridge": "opencode"` / `"pi"`.
    OpenCode,
    Pi,
    Unknown,
}

impl Host {
    pub const ALL: [Host; 9] = [
        Host::Claude,
        Host::Codex,
        Host::Gemini,
        Host::Cursor,
        Host::Cline,
        Host::OpenClaw,
        Host::OpenCode,
        Host::Pi,
        Host::Unknown,
    ];

    pub const fn as_str(self) -> &'static str {
        match self {
            Host::Claude => "claude",
            Host::Codex => "codex",
            Host::Gemini => "gemini",
            Host::Cursor => "cursor",
            Host::Cline => "cline",
            Host::OpenClaw => "openclaw",
            Host::OpenCode => "opencode",
            Host::Pi => "pi",
            Host::Unknown => "unknown",
        }
    }

    /// The host named `s` (`claude`, `codex`, ...), as given to `--host`.
    pub fn from_name(s: &str) -> Option<Host> {
        Host::ALL.into_iter().find(|h| h.as_str() == s)
    }
}
