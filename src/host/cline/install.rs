//! What `sjournal install cline` writes: one executable file per hook, named after it, in a
//! hooks directory — the user's `~/Documents/Cline/Hooks/` (read by the VS Code extension and
//! by the `cline` CLI, which also reads `~/.cline/hooks/`) or the project's
//! `.clinerules/hooks/`. Cline reads the reply (`{"cancel": false, ...}`) from the script's
//! stdout.

use crate::host::install::HookFilesInstall;

pub(crate) const INSTALL: HookFilesInstall = HookFilesInstall {
    display_name: "Cline",
    hook_flag: "cline",
    user_dir: "Documents/Cline/Hooks",
    project_dir: ".clinerules/hooks",
    // The extension's eight and the SDK's `TaskError` and `SessionShutdown` (the CLI maps
    // each file to its own event: `TaskStart` to `agent_start`, `PreToolUse` to `tool_call`,
    // ...; it has no event for `PreCompact`).
    hooks: &[
        "TaskStart",
        "TaskResume",
        "TaskCancel",
        "TaskComplete",
        "TaskError",
        "UserPromptSubmit",
        "PreToolUse",
        "PostToolUse",
        "PreCompact",
        "SessionShutdown",
    ],
};
