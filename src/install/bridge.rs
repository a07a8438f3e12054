//! Installing the bridges of the hosts that have no exec hooks — OpenCode and Pi (an in-process
//! TypeScript plugin or extension), OpenClaw (a native plugin) — where the host loads them,
//! and Cline's hook files (one executable per hook, named after it: `cline.rs`).
//!
//! Each bridge is written as the host loads it: OpenCode and Pi as one file (the bridge with
//! the shared `tools/bridge-common/sjournal-hook.ts` inlined in place of its import), OpenClaw
//! as a plugin directory. The installing binary's path becomes the bridge's default `sjournal`.
//! Every file starts with [`MARKER`]; `uninstall` removes exactly the files that carry it (and
//! the plugin directory once empty), never a file of the same name someone else wrote.
//! OpenClaw also needs its conversation hooks allowed for the plugin: when its configuration
//! is plain JSON, `plugins.entries.sjournal` is set there (and removed by `uninstall`).

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use super::{InstallError, Scope};

/// The first line of every file sjournal installs for a bridge.
pub const MARKER: &str = "// sjournal bridge: installed by `sjournal install";

const HOOK_TS: &str = include_str!("../../tools/bridge-common/sjournal-hook.ts");
const OPENCODE_TS: &str = include_str!("../../tools/opencode-plugin/sjournal.ts");
const PI_TS: &str = include_str!("../../tools/pi-extension/sjournal.ts");
const OPENCLAW_TS: &str = include_str!("../../tools/openclaw-plugin/index.ts");
const OPENCLAW_MANIFEST: &str = include_str!("../../tools/openclaw-plugin/openclaw.plugin.json");
const OPENCLAW_PACKAGE: &str = include_str!("../../tools/openclaw-plugin/package.json");

/// The plugin id OpenClaw knows sjournal's plugin by.
pub const OPENCLAW_PLUGIN_ID: &str = "sjournal";

/// A host reached through a bridge.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Bridge {
    OpenCode,
    Pi,
    OpenClaw,
    Cline,
}

/// Where the user's and the project's files are (a parameter, so tests need no environment).
#[derive(Debug, Clone, Default)]
pub struct Places {
    pub home: Option<PathBuf>,
    /// `$XDG_CONFIG_HOME` (OpenCode's configuration lives under it).
    pub xdg_config: Option<PathBuf>,
    /// `$PI_CODING_AGENT_DIR` (Pi's agent directory, default `~/.pi/agent`).
    pub pi_agent_dir: Option<PathBuf>,
    /// `$OPENCLAW_STATE_DIR` (default `~/.openclaw`).
    pub openclaw_state: Option<PathBuf>,
    /// `$OPENCLAW_CONFIG_PATH` (default `<state>/openclaw.json`).
    pub openclaw_config: Option<PathBuf>,
    pub project: PathBuf,
}

impl Places {
    /// From the process environment.
    pub fn from_env(project: PathBuf) -> Places {
        let var = |k: &str| {
            std::env::var_os(k)
                .filter(|v| !v.is_empty())
                .map(PathBuf::from)
        };
        Places {
            home: var("HOME"),
            xdg_config: var("XDG_CONFIG_HOME"),
            pi_agent_dir: var("PI_CODING_AGENT_DIR"),
            openclaw_state: var("OPENCLAW_STATE_DIR"),
            openclaw_config: var("OPENCLAW_CONFIG_PATH"),
            project,
        }
    }

    fn home(&self) -> Result<&Path, InstallError> {
        self.home.as_deref().ok_or_else(|| {
            InstallError::Usage("HOME is not set; cannot find the user's configuration".into())
        })
    }
}

/// One file of a bridge and its text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BridgeFile {
    pub path: PathBuf,
    pub text: String,
    /// Written with mode 0755 (a hook the host executes).
    pub executable: bool,
}

impl Bridge {
    pub fn display_name(self) -> &'static str {
        match self {
            Bridge::OpenCode => "OpenCode",
            Bridge::Pi => "Pi",
            Bridge::OpenClaw => "OpenClaw",
            Bridge::Cline => "Cline",
        }
    }

    fn word(self) -> &'static str {
        match self {
            Bridge::OpenCode => "opencode",
            Bridge::Pi => "pi",
            Bridge::OpenClaw => "openclaw",
            Bridge::Cline => "cline",
        }
    }

    /// The directory the bridge goes into.
    pub fn dir(self, scope: Scope, p: &Places) -> Result<PathBuf, InstallError> {
        Ok(match (self, scope) {
            (Bridge::OpenCode, Scope::User) => match &p.xdg_config {
                Some(x) => x.join("opencode/plugins"),
                None => p.home()?.join(".config/opencode/plugins"),
            },
            (Bridge::OpenCode, Scope::Project) => p.project.join(".opencode/plugins"),
            (Bridge::Pi, Scope::User) => match &p.pi_agent_dir {
                Some(d) => d.join("extensions"),
                None => p.home()?.join(".pi/agent/extensions"),
            },
            (Bridge::Pi, Scope::Project) => p.project.join(".pi/extensions"),
            (Bridge::OpenClaw, Scope::User) => match &p.openclaw_state {
                Some(d) => d.join("extensions/sjournal"),
                None => p.home()?.join(".openclaw/extensions/sjournal"),
            },
            (Bridge::OpenClaw, Scope::Project) => p.project.join(".openclaw/extensions/sjournal"),
            (Bridge::Cline, Scope::User) => p.home()?.join(super::cline::USER_DIR),
            (Bridge::Cline, Scope::Project) => p.project.join(super::cline::PROJECT_DIR),
            (b, Scope::Local) => {
                return Err(InstallError::Usage(format!(
                    "{} has no local (uncommitted) settings; use --scope user or project",
                    b.display_name()
                )))
            }
        })
    }

    /// The files the bridge consists of, as installed: `command` is the sjournal the bridge
    /// runs by default.
    pub fn files(
        self,
        scope: Scope,
        p: &Places,
        command: &str,
    ) -> Result<Vec<BridgeFile>, InstallError> {
        let dir = self.dir(scope, p)?;
        let marker = format!(
            "{MARKER} {w}`; `sjournal uninstall {w}` removes it.\n",
            w = self.word()
        );
        let ts = |src: &str| format!("{marker}{}", inline_hook(src, command));
        let file = |name: &str, text: String| BridgeFile {
            path: dir.join(name),
            text,
            executable: false,
        };
        Ok(match self {
            Bridge::OpenCode => vec![file("sjournal.ts", ts(OPENCODE_TS))],
            Bridge::Pi => vec![file("sjournal.ts", ts(PI_TS))],
            Bridge::OpenClaw => vec![
                file("index.ts", ts(OPENCLAW_TS)),
                // JSON has no comments: the marker is a field.
                file(
                    "openclaw.plugin.json",
                    json_with_marker(OPENCLAW_MANIFEST, &marker),
                ),
                file("package.json", json_with_marker(OPENCLAW_PACKAGE, &marker)),
            ],
            Bridge::Cline => super::cline::files(&dir, &marker, command),
        })
    }

    /// OpenClaw's configuration file (where the plugin's conversation hooks are allowed).
    pub fn openclaw_config(p: &Places) -> Result<PathBuf, InstallError> {
        Ok(match (&p.openclaw_config, &p.openclaw_state) {
            (Some(c), _) => c.clone(),
            (None, Some(s)) => s.join("openclaw.json"),
            (None, None) => p.home()?.join(".openclaw/openclaw.json"),
        })
    }
}

fn json_with_marker(json: &str, marker: &str) -> String {
    json.replacen(
        "{",
        &format!("{{\n  \"$comment\": {:?},", marker.trim_end()),
        1,
    )
}

/// The bridge source with the shared hook module inlined in place of its import, `export`s
/// dropped (OpenCode would call every exported function as a plugin), and `command` as the
/// default binary.
pub fn inline_hook(bridge_src: &str, command: &str) -> String {
    let shared: String = HOOK_TS
        .lines()
        .map(|l| {
            if l.starts_with("const SJOURNAL_DEFAULT = ") {
                format!("const SJOURNAL_DEFAULT = {command:?} // sjournal-install: binary")
            } else {
                l.strip_prefix("export ").unwrap_or(l).to_owned()
            }
        })
        .collect::<Vec<_>>()
        .join("\n");
    bridge_src
        .lines()
        .map(|l| {
            if l.starts_with("import ") && l.contains("bridge-common/sjournal-hook") {
                shared.clone()
            } else {
                l.to_owned()
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
        + "\n"
}

/// True if the file at `path` was written by sjournal's installer.
pub fn is_ours(path: &Path) -> bool {
    std::fs::read_to_string(path).is_ok_and(|t| t.contains(marker_text()))
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.permissions().mode() & 0o111 != 0)
}

/// The marker without its comment leader (Cline's hooks are shell scripts: `# sjournal ...`).
fn marker_text() -> &'static str {
    MARKER.trim_start_matches("// ")
}

/// Writes the files (creating directories); refuses to overwrite a file that is not ours.
/// Returns the files it changed.
pub fn write(files: &[BridgeFile]) -> Result<Vec<PathBuf>, InstallError> {
    let mut changed = Vec::new();
    for f in files {
        match std::fs::read_to_string(&f.path) {
            Ok(t) if t == f.text && (!f.executable || is_executable(&f.path)) => continue,
            Ok(t) if !t.contains(marker_text()) => {
                return Err(InstallError::Config {
                    path: f.path.clone(),
                    message: "exists and was not installed by sjournal; move it away first".into(),
                })
            }
            _ => {}
        }
        let dir = f.path.parent().unwrap_or(Path::new("."));
        std::fs::create_dir_all(dir).map_err(|e| super::io("create directory", dir, e))?;
        let tmp = dir.join(format!(".sjournal-tmp-{}", std::process::id()));
        std::fs::write(&tmp, &f.text).map_err(|e| super::io("write", &tmp, e))?;
        if f.executable {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&tmp, std::fs::Permissions::from_mode(0o755))
                .map_err(|e| super::io("make executable", &tmp, e))?;
        }
        std::fs::rename(&tmp, &f.path).map_err(|e| super::io("rename", &f.path, e))?;
        changed.push(f.path.clone());
    }
    Ok(changed)
}

/// Removes the bridge's files that are ours, and its OpenClaw plugin directory once empty.
/// Returns the files removed.
pub fn remove(files: &[BridgeFile]) -> Result<Vec<PathBuf>, InstallError> {
    let mut removed = Vec::new();
    for f in files {
        if is_ours(&f.path) {
            std::fs::remove_file(&f.path).map_err(|e| super::io("remove", &f.path, e))?;
            removed.push(f.path.clone());
        }
    }
    if let Some(dir) = files.first().and_then(|f| f.path.parent()) {
        if dir.ends_with("extensions/sjournal") {
            let _ = std::fs::remove_dir(dir);
        }
    }
    Ok(removed)
}

/// What `plugins.entries.sjournal` must say for the plugin to load and reach the conversation.
fn openclaw_entry() -> Value {
    serde_json::json!({
        "enabled": true,
        "hooks": {"allowConversationAccess": true, "allowPromptInjection": true}
    })
}

/// Sets (or, with `on` false, removes) `plugins.entries.sjournal` in OpenClaw's configuration.
/// Ok(false) when nothing changed; an error (with what to do by hand) if the file is not plain
/// JSON (OpenClaw also reads JSON5).
pub fn edit_openclaw_config(path: &Path, on: bool) -> Result<bool, InstallError> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(super::io("read", path, e)),
    };
    let mut doc: Map<String, Value> = if text.trim().is_empty() {
        Map::new()
    } else {
        match serde_json::from_str::<Value>(&text) {
            Ok(Value::Object(m)) => m,
            _ => {
                return Err(InstallError::Config {
                    path: path.to_owned(),
                    message: format!(
                        "not plain JSON, so sjournal leaves it alone; allow the plugin by hand: \
                         openclaw config set plugins.entries.{id}.enabled true; openclaw config set \
                         plugins.entries.{id}.hooks.allowConversationAccess true; openclaw config \
                         set plugins.entries.{id}.hooks.allowPromptInjection true",
                        id = OPENCLAW_PLUGIN_ID
                    ),
                })
            }
        }
    };
    let plugins = doc
        .entry("plugins")
        .or_insert_with(|| Value::Object(Map::new()));
    let Some(plugins) = plugins.as_object_mut() else {
        return Err(InstallError::Config {
            path: path.to_owned(),
            message: "\"plugins\" is not an object; fix it by hand first".into(),
        });
    };
    let entries = plugins
        .entry("entries")
        .or_insert_with(|| Value::Object(Map::new()));
    let Some(entries) = entries.as_object_mut() else {
        return Err(InstallError::Config {
            path: path.to_owned(),
            message: "\"plugins.entries\" is not an object; fix it by hand first".into(),
        });
    };
    let changed = if on {
        let want = openclaw_entry();
        let same = entries.get(OPENCLAW_PLUGIN_ID) == Some(&want);
        entries.insert(OPENCLAW_PLUGIN_ID.into(), want);
        !same
    } else {
        let had = entries.shift_remove(OPENCLAW_PLUGIN_ID).is_some();
        if entries.is_empty() {
            plugins.shift_remove("entries");
        }
        if plugins.is_empty() {
            doc.shift_remove("plugins");
        }
        had
    };
    if changed {
        let plan = super::Plan {
            path: path.to_owned(),
            before: (!text.is_empty()).then_some(text),
            after: format!(
                "{}\n",
                serde_json::to_string_pretty(&doc).expect("a JSON map serializes")
            ),
            changed: true,
        };
        plan.write()?;
    }
    Ok(changed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_installed_bridge_is_one_file_with_the_hook_inlined() {
        let text = inline_hook(OPENCODE_TS, "/opt/bin/sjournal");
        assert!(!text.contains("bridge-common/sjournal-hook"));
        assert!(text.contains("function hookSync("));
        assert!(
            !text.contains("export function hook("),
            "no exported helper"
        );
        assert!(text.contains("const SJOURNAL_DEFAULT = \"/opt/bin/sjournal\""));
        assert!(text.contains("export const SjournalPlugin"));
    }

    #[test]
    fn places_follow_the_hosts_variables() {
        let p = Places {
            home: Some("/home/u".into()),
            xdg_config: Some("/x".into()),
            openclaw_state: Some("/s".into()),
            project: "/p".into(),
            ..Places::default()
        };
        assert_eq!(
            Bridge::OpenCode.dir(Scope::User, &p).unwrap(),
            Path::new("/x/opencode/plugins")
        );
        assert_eq!(
            Bridge::Pi.dir(Scope::User, &p).unwrap(),
            Path::new("/home/u/.pi/agent/extensions")
        );
        assert_eq!(
            Bridge::OpenClaw.dir(Scope::Project, &p).unwrap(),
            Path::new("/p/.openclaw/extensions/sjournal")
        );
        assert_eq!(
            Bridge::openclaw_config(&p).unwrap(),
            Path::new("/s/openclaw.json")
        );
        assert!(Bridge::Pi.dir(Scope::Local, &p).is_err());
    }
}
