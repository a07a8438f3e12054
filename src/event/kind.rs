//! The canonical event kinds: Claude Code's hook events (the documented 31 and the newer ones
//! seen in real payloads), and `Other` for everything else.

macro_rules! kinds {
    ($($v:ident),+ $(,)?) => {
        /// A canonical event kind. Names are Claude Code's `hook_event_name`s.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum EventKind {
            $($v,)+
            /// Any event this build does not know; the event's own name is kept beside it.
            Other,
        }

        impl EventKind {
            /// Every known kind (not `Other`).
            pub const KNOWN: &'static [EventKind] = &[$(EventKind::$v),+];

            pub const fn as_str(self) -> &'static str {
                match self {
                    $(EventKind::$v => stringify!($v),)+
                    EventKind::Other => "other",
                }
            }

            /// The name of the known kind spelled `name`, as a `&'static str`, found by
            /// comparing the bytes (no UTF-8 check): how the journal's reader takes the kind of
            /// nearly every record it reads (`format::record::parse_known`). Every name here is
            /// a well-formed record kind (a unit test checks).
            #[inline]
            pub fn known_name(name: &[u8]) -> Option<&'static str> {
                $(if name == stringify!($v).as_bytes() {
                    return Some(stringify!($v));
                })+
                None
            }

            /// The kind Claude Code calls `name`; `Other` for names it does not use.
            pub fn from_claude(name: &str) -> EventKind {
                match name {
                    $(stringify!($v) => EventKind::$v,)+
                    _ => EventKind::Other,
                }
            }
        }
    };
}

kinds!(
    SessionStart,
    Setup,
    InstructionsLoaded,
    UserPromptSubmit,
    UserPromptExpansion,
    MessageDisplay,
    PreToolUse,
    PermissionRequest,
    PermissionDenied,
    PostToolUse,
    PostToolUseFailure,
    PostToolBatch,
    Notification,
    SubagentStart,
    SubagentStop,
    TaskCreated,
    TaskCompleted,
    Stop,
    StopFailure,
    TeammateIdle,
    ConfigChange,
    CwdChanged,
    DirectoryAdded,
    FileChanged,
    WorktreeCreate,
    WorktreeRemove,
    PreCompact,
    PostCompact,
    SessionEnd,
    Elicitation,
    ElicitationResult,
    PreSkillShellCommand,
    PreModelSwitch,
    PostModelSwitch,
);

impl std::fmt::Display for EventKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        assert_eq!(EventKind::KNOWN.len(), 34);
        for k in EventKind::KNOWN {
            assert_eq!(EventKind::from_claude(k.as_str()), *k);
        }
        assert_eq!(EventKind::from_claude("BeforeTool"), EventKind::Other);
        assert_eq!(EventKind::from_claude("other"), EventKind::Other);
    }

    /// The reader takes a known name without checking its bytes: each must be a well-formed
    /// record kind, found as itself; nothing else is found.
    #[test]
    fn known_names_are_record_kinds_and_found_as_themselves() {
        for k in EventKind::KNOWN {
            let name = k.as_str();
            assert!(crate::format::record::valid_kind(name), "{name}");
            assert_eq!(EventKind::known_name(name.as_bytes()), Some(name));
            let mut longer = name.as_bytes().to_vec();
            longer.push(b'x');
            assert_eq!(EventKind::known_name(&longer), None);
            assert_eq!(EventKind::known_name(&longer[..name.len() - 1]), None);
        }
        for other in ["other", "BeforeTool", "sjournal.injected", "", "stop"] {
            assert_eq!(EventKind::known_name(other.as_bytes()), None, "{other}");
        }
    }
}
