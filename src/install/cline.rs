//! Cline's hooks: one executable file per hook, named after it, in a hooks directory — the
//! user's `~/Documents/Cline/Hooks/` (read by the VS Code extension and by the `cline` CLI,
//! which also reads `~/.cline/hooks/`) or the project's `.clinerules/hooks/`. Each file is a
//! shell script that runs `sjournal hook --host cline` with the payload
//! on its stdin and prints sjournal's reply (`{"cancel": false, ...}`, which Cline reads).
//! The files carry the bridge marker, so `uninstall` removes exactly them.

use std::path::Path;

use super::bridge::BridgeFile;
use super::shell_quote;

/// Under `$HOME`.
pub const USER_DIR: &str = "Documents/Cline/Hooks";
/// Under the project's root.
pub const PROJECT_DIR: &str = ".clinerules/hooks";

/// The hook files Cline runs: the extension's eight and the SDK's `TaskError` and
/// `SessionShutdown` (the CLI maps each file to its own event: `TaskStart` to `agent_start`,
/// `PreToolUse` to `tool_call`, ...; it has no event for `PreCompact`).
pub const HOOKS: &[&str] = &[
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
];

/// The files, for the hooks directory `dir`; `marker` is the bridge marker line (a `//`
/// comment, written here after `#`), `command` the sjournal binary.
pub fn files(dir: &Path, marker: &str, command: &str) -> Vec<BridgeFile> {
    let text = format!(
        "#!/bin/sh\n# {}\nexec {} hook --host cline\n",
        marker.trim_end().trim_start_matches("// "),
        shell_quote(command)
    );
    HOOKS
        .iter()
        .map(|h| BridgeFile {
            path: dir.join(h),
            text: text.clone(),
            executable: true,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_hook_is_a_script_running_the_hook_with_the_quoted_binary() {
        let files = files(
            Path::new("/h"),
            "// sjournal bridge: x\n",
            "/opt/my tools/sjournal",
        );
        assert_eq!(files.len(), HOOKS.len());
        let f = &files[0];
        assert_eq!(f.path, Path::new("/h/TaskStart"));
        assert!(f.executable);
        assert_eq!(
            f.text,
            "#!/bin/sh\n# sjournal bridge: x\nexec '/opt/my tools/sjournal' hook --host cline\n"
        );
    }
}
