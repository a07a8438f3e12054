//! Cline's hooks as files: one executable shell script per hook, named after it, in the hooks
//! directory the host's spec names (`host/cline/install.rs`), each running
//! `sjournal hook --host cline` with the payload on its stdin and printing sjournal's reply.
//! The files carry the bridge marker, so `uninstall` removes exactly them.

use std::path::Path;

use super::bridge::BridgeFile;
use super::shell_quote;
use crate::host::install::HookFilesInstall;
use crate::host::Host;

const SPEC: &HookFilesInstall = match Host::Cline.hook_files_install() {
    Some(s) => s,
    None => panic!("Cline runs hook files"),
};

/// The hook files Cline runs.
pub const HOOKS: &[&str] = SPEC.hooks;

/// The files, for the hooks directory `dir`; `marker` is the bridge marker line (a `//`
/// comment, written here after `#`), `command` the sjournal binary.
pub fn files(dir: &Path, marker: &str, command: &str) -> Vec<BridgeFile> {
    let text = format!(
        "#!/bin/sh\n# {}\nexec {} hook --host {}\n",
        marker.trim_end().trim_start_matches("// "),
        shell_quote(command),
        SPEC.hook_flag
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
