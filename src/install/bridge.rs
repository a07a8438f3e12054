//! Installing the bridges of the hosts that have no exec hooks — OpenCode and Pi (an in-process
//! TypeScript plugin or extension), OpenClaw (a native plugin) — where the host loads them,
//! and Cline's hook files (one executable per hook, named after it: `cline.rs`).
//!
//! What each bridge is (its directory per scope, its files, the note after installing) is
//! declared in the host's folder (`host/<name>/install.rs`, a `BridgeInstall`); this module
//! locates the directory ([`Places`]) and writes or removes the files. Each bridge is written
//! as the host loads it: OpenCode and Pi as one file (the bridge with
//! the shared `tools/bridge-common/sjournal-hook.ts` inlined in place of its import), OpenClaw
//! as a plugin directory. The installing binary's path becomes the bridge's default `sjournal`.
//! Every file starts with [`MARKER`]; `uninstall` removes exactly the files that carry it (and
//! the plugin directory once empty), never a file of the same name someone else wrote.
//! OpenClaw also needs its conversation hooks allowed for the plugin: when its configuration
//! is plain JSON, `plugins.entries.sjournal` is set there (and removed by `uninstall`).

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use super::{InstallError, Scope};
use crate::host::install::{BridgeInstall, BridgeSource, ConfigFile, UserDir};
use crate::host::Host;

/// The first line of every file sjournal installs for a bridge.
pub const MARKER: &str = "// sjournal bridge: installed by `sjournal install";

const HOOK_TS: &str = include_str!("../../tools/bridge-common/sjournal-hook.ts");

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

    /// Where `file` is under these places (None: it is not one of theirs; see
    /// `mcp::Places`, which knows the others).
    pub(crate) fn path(&self, file: ConfigFile) -> Option<Result<PathBuf, InstallError>> {
        let under = |dir: Result<PathBuf, InstallError>, f: &str| dir.map(|d| d.join(f));
        let or_home = |set: &Option<PathBuf>, default: &str| match set {
            Some(d) => Ok(d.clone()),
            None => self.home().map(|h| h.join(default)),
        };
        Some(match file {
            ConfigFile::Project(f) => Ok(self.project.join(f)),
            ConfigFile::User(UserDir::Home, f) => under(self.home().map(Path::to_owned), f),
            ConfigFile::XdgConfig(f) => under(or_home(&self.xdg_config, ".config"), f),
            ConfigFile::PiAgent(f) => under(or_home(&self.pi_agent_dir, ".pi/agent"), f),
            ConfigFile::OpenClawState(f) => under(or_home(&self.openclaw_state, ".openclaw"), f),
            ConfigFile::OpenClawConfig => Bridge::openclaw_config(self),
            ConfigFile::User(UserDir::ClaudeConfig | UserDir::CodexHome, _)
            | ConfigFile::ClaudeJson
            | ConfigFile::ClineMcpSettings => return None,
        })
    }
}

/// One file of a bridge and its text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BridgeFile {
    pub path: PathBuf,
    pub text: String,
    /// Written with mode 0700 (a hook the host executes); otherwise 0600.
    pub executable: bool,
}

impl Bridge {
    /// The host's bridge spec (declared in its folder, `host/<name>/install.rs`).
    pub(crate) fn spec(self) -> &'static BridgeInstall {
        let host = match self {
            Bridge::OpenCode => Host::OpenCode,
            Bridge::Pi => Host::Pi,
            Bridge::OpenClaw => Host::OpenClaw,
            Bridge::Cline => Host::Cline,
        };
        host.bridge_install()
            .expect("every bridge host has a bridge spec")
    }

    pub fn display_name(self) -> &'static str {
        self.spec().display_name
    }

    /// What the user should know once the bridge is installed.
    pub fn after_install(self) -> &'static str {
        self.spec().after_install
    }

    /// The directory the bridge goes into.
    pub fn dir(self, scope: Scope, p: &Places) -> Result<PathBuf, InstallError> {
        let spec = self.spec();
        match scope {
            Scope::User => p.path(spec.user_dir).unwrap_or_else(|| {
                Err(InstallError::Usage(format!(
                    "{}: its bridge's directory is not under the bridges' places",
                    spec.display_name
                )))
            }),
            Scope::Project => Ok(p.project.join(spec.project_dir)),
            Scope::Local => Err(InstallError::Usage(format!(
                "{} has no local (uncommitted) settings; use --scope user or project",
                spec.display_name
            ))),
        }
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
        if scope == Scope::Project {
            refuse_links_below(&p.project, &dir)?;
        }
        let spec = self.spec();
        let marker = format!(
            "{MARKER} {w}`; `sjournal uninstall {w}` removes it.\n",
            w = spec.word
        );
        let file = |name: &str, text: String| BridgeFile {
            path: dir.join(name),
            text,
            executable: false,
        };
        let mut files = Vec::new();
        for source in spec.files {
            match *source {
                BridgeSource::TypeScript { name, source } => files.push(file(
                    name,
                    format!("{marker}{}", inline_hook(source, command)),
                )),
                BridgeSource::Json { name, source } => {
                    files.push(file(name, json_with_marker(source, &marker)))
                }
                BridgeSource::HookScripts => {
                    files.extend(super::cline::files(&dir, &marker, command))
                }
            }
        }
        Ok(files)
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
pub(crate) fn inline_hook(bridge_src: &str, command: &str) -> String {
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

/// True if the file at `path` is a regular file (not a symlink) written by sjournal's installer.
pub fn is_ours(path: &Path) -> bool {
    matches!(read_nofollow(path), Ok(Some(b)) if contains(&b, marker_text().as_bytes()))
}

/// The bytes of the regular file at `path`; None if there is none. A symlink (never
/// followed), a directory or anything else that is not a regular file is an error.
fn read_nofollow(path: &Path) -> std::io::Result<Option<Vec<u8>>> {
    use std::io::Read;
    let mut f = match crate::storage::open_regular(path, crate::storage::Owner::Anyone) {
        Ok(f) => f,
        Err(crate::Error::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => {
            return Ok(None)
        }
        Err(crate::Error::Symlink { .. }) => {
            return Err(std::io::Error::other(
                "it is a symbolic link, which sjournal does not follow",
            ))
        }
        Err(crate::Error::NotRegular { found, .. }) => {
            return Err(std::io::Error::other(format!(
                "it is not a regular file (a {found})"
            )))
        }
        Err(crate::Error::Io { source, .. }) => return Err(source),
        Err(e) => return Err(std::io::Error::other(e.to_string())),
    };
    let mut b = Vec::new();
    f.read_to_end(&mut b)?;
    Ok(Some(b))
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}

/// The mode a bridge file is written with: a hook the host executes is 0700 (only the user
/// runs it), anything else 0600.
fn mode_of(f: &BridgeFile) -> u32 {
    if f.executable {
        0o700
    } else {
        0o600
    }
}

/// The marker without its comment leader (Cline's hooks are shell scripts: `# sjournal ...`).
fn marker_text() -> &'static str {
    MARKER.trim_start_matches("// ")
}

/// Whether `f` must be written: false if it is already there as sjournal would write it; an
/// error (naming the file, saying what to do) if something that is not ours is in its place.
fn needs_write(f: &BridgeFile) -> Result<bool, InstallError> {
    use std::os::unix::fs::PermissionsExt;
    let refuse = |message: String| InstallError::Config {
        path: f.path.clone(),
        message,
    };
    let bytes = match read_nofollow(&f.path) {
        Ok(None) => return Ok(true),
        Ok(Some(b)) => b,
        Err(e) => return Err(refuse(format!("cannot read it ({e}); move it away first"))),
    };
    if !contains(&bytes, marker_text().as_bytes()) {
        return Err(refuse(
            "exists and was not installed by sjournal; move it away first".into(),
        ));
    }
    let mode = std::fs::symlink_metadata(&f.path)
        .map(|m| m.permissions().mode() & 0o7777)
        .map_err(|e| refuse(format!("cannot read it ({e}); move it away first")))?;
    Ok(bytes != f.text.as_bytes() || mode != mode_of(f))
}

/// Creates the directory `dir` and its missing parents, each 0700; refuses a symlink at
/// `dir` itself (a cloned repository could plant `.clinerules/hooks` pointing anywhere).
fn ensure_dir(dir: &Path) -> Result<(), InstallError> {
    use std::os::unix::fs::DirBuilderExt;
    match std::fs::symlink_metadata(dir) {
        Ok(_) => check_dir(dir),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            if let Some(parent) = dir.parent().filter(|p| !p.as_os_str().is_empty()) {
                if std::fs::symlink_metadata(parent).is_err() {
                    ensure_dir(parent)?;
                }
            }
            std::fs::DirBuilder::new()
                .mode(0o700)
                .create(dir)
                .map_err(|e| super::io("create directory", dir, e))?;
            sync_parent(dir);
            Ok(())
        }
        Err(e) => Err(super::io("inspect", dir, e)),
    }
}

/// Refuses a symlink (or a non-directory) at any directory from below `root` down to `dir`:
/// a cloned repository could plant `.clinerules`, `.opencode`, `.pi` or `.openclaw` as a link
/// to anywhere, and the bridge would be written (or looked for, to remove) through it. Only
/// in a project: a user's own directories (`~/.config` kept in a dotfiles repository) may be
/// links of the user's making.
fn refuse_links_below(root: &Path, dir: &Path) -> Result<(), InstallError> {
    let Ok(below) = dir.strip_prefix(root) else {
        return Ok(());
    };
    let mut at = root.to_path_buf();
    for part in below.components() {
        at.push(part);
        check_dir(&at)?;
    }
    Ok(())
}

/// Refuses a symlink or a non-directory at `dir` (nothing there is fine: it is created).
fn check_dir(dir: &Path) -> Result<(), InstallError> {
    let refuse = |message: &str| InstallError::Config {
        path: dir.to_owned(),
        message: format!("{message}; move it away first"),
    };
    match std::fs::symlink_metadata(dir) {
        Ok(m) if m.file_type().is_symlink() => {
            Err(refuse("is a symbolic link, which sjournal does not follow"))
        }
        Ok(m) if !m.is_dir() => Err(refuse("is not a directory")),
        Ok(_) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(super::io("inspect", dir, e)),
    }
}

fn sync_parent(path: &Path) {
    if let Some(d) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        use std::os::unix::fs::OpenOptionsExt;
        let d = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_DIRECTORY | libc::O_NONBLOCK | libc::O_CLOEXEC)
            .open(d);
        if let Ok(d) = d {
            let _ = d.sync_all();
        }
    }
}

/// Writes the files (creating directories 0700). Every file is checked first: if any is in
/// the way (someone else's, unreadable, a symlink), nothing is written. Each file is written
/// to a fresh temporary file (never through a symlink), synced, renamed into place, and its
/// directory synced. Returns the files it changed.
pub fn write(files: &[BridgeFile]) -> Result<Vec<PathBuf>, InstallError> {
    for dir in files.iter().filter_map(|f| f.path.parent()) {
        check_dir(dir)?;
    }
    let mut todo = Vec::new();
    for f in files {
        if needs_write(f)? {
            todo.push(f);
        }
    }
    let mut changed = Vec::new();
    for f in todo {
        let dir = f.path.parent().unwrap_or(Path::new("."));
        ensure_dir(dir)?;
        let name = f
            .path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let tmp = dir.join(format!(".{name}.sjournal-tmp-{}", std::process::id()));
        let _ = std::fs::remove_file(&tmp);
        super::write_new(&tmp, &f.text, mode_of(f))?;
        std::fs::rename(&tmp, &f.path).map_err(|e| {
            let _ = std::fs::remove_file(&tmp);
            super::io("rename", &f.path, e)
        })?;
        sync_parent(&f.path);
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
    // Another run may change the file between our read and our write: read it again then.
    let mut tries = 0;
    loop {
        match edit_openclaw_once(path, on) {
            Err(InstallError::Changed { .. }) if tries < 5 => tries += 1,
            r => return r,
        }
    }
}

fn edit_openclaw_once(path: &Path, on: bool) -> Result<bool, InstallError> {
    let (path, before) = super::read_text(path)?;
    let path = path.as_path();
    let text = before.clone().unwrap_or_default();
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
            before,
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

    const OPENCODE_TS: &str = include_str!("../../tools/opencode-plugin/sjournal.ts");

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

    /// A project's directory above the bridge's, planted as a link (a cloned repository's
    /// `.opencode`, `.pi`, `.openclaw` or `.clinerules`, or a deeper one), is refused for
    /// every bridge; the same links in the user's own directories are the user's, and
    /// followed.
    #[test]
    fn a_link_above_a_projects_bridge_directory_is_refused() {
        let root = tempfile::tempdir().unwrap();
        let elsewhere = root.path().join("elsewhere");
        std::fs::create_dir(&elsewhere).unwrap();
        for b in [
            Bridge::OpenCode,
            Bridge::Pi,
            Bridge::OpenClaw,
            Bridge::Cline,
        ] {
            let project = tempfile::tempdir().unwrap();
            let p = Places {
                home: Some(project.path().to_owned()),
                project: project.path().to_owned(),
                ..Places::default()
            };
            let dir = b.dir(Scope::Project, &p).unwrap();
            let below = dir.strip_prefix(project.path()).unwrap();
            assert!(b.files(Scope::Project, &p, "sjournal").is_ok(), "{b:?}");
            // A link at each directory from the top one down to the bridge's own.
            let mut at = project.path().to_path_buf();
            for part in below.components() {
                at.push(part);
                std::os::unix::fs::symlink(&elsewhere, &at).unwrap();
                let err = b.files(Scope::Project, &p, "sjournal").unwrap_err();
                assert!(
                    err.to_string().contains("symbolic link"),
                    "{b:?} {at:?}: {err}"
                );
                std::fs::remove_file(&at).unwrap();
                std::fs::create_dir(&at).unwrap();
            }
            assert!(b.files(Scope::Project, &p, "sjournal").is_ok(), "{b:?}");
        }
        // The user's own `~/.config` as a link: followed (the user made it).
        let home = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(&elsewhere, home.path().join(".config")).unwrap();
        let p = Places {
            home: Some(home.path().to_owned()),
            project: home.path().join("project"),
            ..Places::default()
        };
        assert!(Bridge::OpenCode.files(Scope::User, &p, "sjournal").is_ok());
    }

    #[test]
    fn a_symlink_at_the_temporary_name_is_removed_not_written_through() {
        use std::os::unix::fs::PermissionsExt;
        let root = tempfile::tempdir().unwrap();
        let victim = root.path().join("victim");
        std::fs::write(&victim, "precious\n").unwrap();
        std::fs::set_permissions(&victim, std::fs::Permissions::from_mode(0o600)).unwrap();
        let dir = root.path().join("hooks");
        std::fs::create_dir(&dir).unwrap();
        let files = super::super::cline::files(&dir, "// sjournal bridge: x\n", "sjournal");
        for f in &files {
            let name = f.path.file_name().unwrap().to_string_lossy();
            let tmp = dir.join(format!(".{name}.sjournal-tmp-{}", std::process::id()));
            std::os::unix::fs::symlink(&victim, tmp).unwrap();
        }
        // The name the previous installer used for every file.
        let legacy = dir.join(format!(".sjournal-tmp-{}", std::process::id()));
        std::os::unix::fs::symlink(&victim, &legacy).unwrap();
        assert_eq!(write(&files).unwrap().len(), files.len());
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious\n");
        let mode = std::fs::metadata(&victim).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600, "the link's target is not chmodded");
        for f in &files {
            let m = std::fs::symlink_metadata(&f.path).unwrap();
            assert!(m.is_file(), "a regular file, not the link");
            assert_eq!(m.permissions().mode() & 0o7777, 0o700);
        }
        assert_eq!(
            std::fs::read_dir(&dir).unwrap().count(),
            files.len() + 1,
            "no temporary file left (only the planted legacy link)"
        );
    }
}
