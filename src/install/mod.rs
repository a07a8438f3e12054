//! Installing sjournal's hooks into a host's JSON configuration, and removing them.
//!
//! The file is edited as a JSON document whose key order is kept (serde_json's
//! `preserve_order`), so everything that is not sjournal's stays as it was, in place:
//! other hooks, other matcher groups, other settings. sjournal's handlers are recognised by
//! their command: a `command` handler whose program is named `sjournal` and that runs its
//! `hook` subcommand. Installing twice changes nothing; installing from another path updates
//! the command in place; uninstalling removes exactly those handlers, and the groups, events
//! and `hooks` object that held nothing else.
//!
//! Reading: only a regular file is read, opened without waiting (`storage::open_regular`): a
//! FIFO, a device or a directory where the settings file should be is refused with what to
//! do, never read. A symlinked settings file (dotfiles) is edited at its target; a link whose
//! target does not exist is refused, never replaced by a file.
//!
//! Writing: under an exclusive `flock` on the file's directory (so two `sjournal install`
//! runs at once take turns), the file is read again and must still hold what the plan was
//! made from ([`InstallError::Changed`] otherwise: plan again); the original is copied to a
//! new `<file>.sjournal-backup-<unix seconds>[-n]` (created exclusively, never over another
//! backup), the new text is written to a temporary file in the same directory, synced and
//! renamed over the original. Nothing is written when nothing changes.

pub mod bridge;
pub mod cline;
pub mod hosts;
pub mod inspect;
#[cfg(feature = "search")]
pub mod mcp;

use std::io::Write;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

pub use crate::escape::shell_quote;
pub use hosts::{Homes, InstallTarget, Scope};

/// Why an installation could not be planned or written.
#[derive(Debug, thiserror::Error)]
pub enum InstallError {
    #[error("{path}: {message}")]
    Config { path: PathBuf, message: String },
    #[error("{op} {path}: {source}")]
    Io {
        op: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{0}")]
    Usage(String),
    /// The file changed between planning and writing (another install ran meanwhile):
    /// nothing was written; plan again from what it holds now.
    #[error(
        "{path} changed while sjournal was editing it (another install?); nothing was written"
    )]
    Changed { path: PathBuf },
}

pub(crate) fn io(op: &'static str, path: &Path, source: std::io::Error) -> InstallError {
    InstallError::Io {
        op,
        path: path.to_owned(),
        source,
    }
}

/// A change to one configuration file, computed but not yet written.
#[derive(Debug, Clone)]
pub struct Plan {
    /// The file that will be written (a symlink's target).
    pub path: PathBuf,
    /// Its text now (None: it does not exist).
    pub before: Option<String>,
    /// Its text after the change.
    pub after: String,
    pub changed: bool,
}

/// What writing a plan did.
#[derive(Debug, Clone)]
pub struct Written {
    pub backup: Option<PathBuf>,
}

/// True if `handler` is one of sjournal's: a command handler running `sjournal ... hook` (or
/// `sjournal-hook hook`).
pub fn is_ours(handler: &Value) -> bool {
    let Some(cmd) = handler.get("command").and_then(Value::as_str) else {
        return false;
    };
    if handler.get("type").and_then(Value::as_str) != Some("command") {
        return false;
    }
    let (program, rest) = first_word(cmd);
    let name = program.rsplit('/').next().unwrap_or("");
    matches!(name, "sjournal" | "sjournal-hook") && rest.split_whitespace().next() == Some("hook")
}

/// Splits off the first shell word (plain, or single-quoted as [`shell_quote`] writes it).
fn first_word(cmd: &str) -> (String, &str) {
    let cmd = cmd.trim_start();
    if let Some(q) = cmd.strip_prefix('\'') {
        let mut word = String::new();
        let mut rest = q;
        loop {
            match rest.find('\'') {
                None => return (word + rest, ""),
                Some(i) => {
                    word.push_str(&rest[..i]);
                    rest = &rest[i + 1..];
                    // `'\''` continues the word with a literal quote.
                    if let Some(r) = rest.strip_prefix("\\''") {
                        word.push('\'');
                        rest = r;
                    } else {
                        return (word, rest);
                    }
                }
            }
        }
    }
    let end = cmd.find(char::is_whitespace).unwrap_or(cmd.len());
    (cmd[..end].to_owned(), &cmd[end..])
}

fn hooks_object<'a>(
    doc: &'a mut Map<String, Value>,
    path: &Path,
) -> Result<&'a mut Map<String, Value>, InstallError> {
    let hooks = doc
        .entry("hooks")
        .or_insert_with(|| Value::Object(Map::new()));
    hooks.as_object_mut().ok_or_else(|| InstallError::Config {
        path: path.to_owned(),
        message: "\"hooks\" is not an object; fix it by hand first".into(),
    })
}

/// Adds (or updates) sjournal's handlers in `doc`. Returns true if anything changed.
pub(crate) fn install_doc(
    doc: &mut Map<String, Value>,
    host: InstallTarget,
    command: &str,
    path: &Path,
) -> Result<bool, InstallError> {
    let hooks = hooks_object(doc, path)?;
    let mut changed = false;
    for spec in host.specs() {
        let want = host.handler(command, spec);
        let groups = hooks
            .entry(spec.event)
            .or_insert_with(|| Value::Array(Vec::new()));
        let groups = groups.as_array_mut().ok_or_else(|| InstallError::Config {
            path: path.to_owned(),
            message: format!("hooks.{} is not an array; fix it by hand first", spec.event),
        })?;
        let mut found = false;
        groups.retain_mut(|group| {
            let Some(handlers) = group.get_mut("hooks").and_then(Value::as_array_mut) else {
                return true;
            };
            let mut removed = false;
            handlers.retain_mut(|h| {
                if !is_ours(h) {
                    return true;
                }
                if found {
                    // A second handler of ours for this event: the host would run it twice.
                    removed = true;
                    changed = true;
                    return false;
                }
                found = true;
                if *h != want {
                    *h = want.clone();
                    changed = true;
                }
                true
            });
            // Drop a group only if it held nothing but the duplicates we removed.
            !(removed && handlers.is_empty())
        });
        if !found {
            let mut g = Map::new();
            if let Some(m) = spec.matcher {
                g.insert("matcher".into(), Value::String(m.into()));
            }
            g.insert("hooks".into(), Value::Array(vec![want]));
            groups.push(Value::Object(g));
            changed = true;
        }
    }
    Ok(changed)
}

/// Removes sjournal's handlers from `doc`, and the groups, events and `hooks` object that
/// held only them. Returns true if anything changed.
pub(crate) fn uninstall_doc(doc: &mut Map<String, Value>) -> bool {
    let Some(hooks) = doc.get_mut("hooks").and_then(Value::as_object_mut) else {
        return false;
    };
    let mut changed = false;
    let events: Vec<String> = hooks.keys().cloned().collect();
    for event in events {
        let Some(groups) = hooks.get_mut(&event).and_then(Value::as_array_mut) else {
            continue;
        };
        let mut touched = false;
        groups.retain_mut(|g| {
            let Some(handlers) = g.get_mut("hooks").and_then(Value::as_array_mut) else {
                return true;
            };
            let before = handlers.len();
            handlers.retain(|h| !is_ours(h));
            if handlers.len() == before {
                return true;
            }
            touched = true;
            !handlers.is_empty()
        });
        if touched {
            changed = true;
            if groups.is_empty() {
                hooks.shift_remove(&event);
            }
        }
    }
    if changed && hooks.is_empty() {
        doc.shift_remove("hooks");
    }
    changed
}

/// A configuration file as read: its real path, its text, and its JSON object.
struct Doc {
    path: PathBuf,
    text: Option<String>,
    map: Map<String, Value>,
}

/// Settings files larger than this are refused (no host writes one near it).
const SETTINGS_MAX_BYTES: u64 = 16 << 20;

/// The file a configuration path names (a symlink's target; the path itself if there is
/// nothing there yet) and its text (None: it does not exist). A link whose target does not
/// exist is refused (writing would replace the link with a file); only a regular file is read,
/// opened without waiting (a FIFO is refused at once).
pub(crate) fn read_text(path: &Path) -> Result<(PathBuf, Option<String>), InstallError> {
    let target = match std::fs::canonicalize(path) {
        Ok(p) => p,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            if let Ok(m) = std::fs::symlink_metadata(path) {
                if m.file_type().is_symlink() {
                    let to = std::fs::read_link(path)
                        .map(|t| t.display().to_string())
                        .unwrap_or_else(|_| "?".into());
                    return Err(InstallError::Config {
                        path: path.to_owned(),
                        message: format!(
                            "is a symbolic link to {to}, which does not exist; sjournal edits a \
                             linked file at its target but never replaces the link with a file: \
                             create the target (or remove the link), then run the command again"
                        ),
                    });
                }
            }
            path.to_owned()
        }
        Err(e) => return Err(io("resolve", path, e)),
    };
    let text = match crate::storage::read_regular_text(
        &target,
        crate::storage::Owner::Anyone,
        SETTINGS_MAX_BYTES,
    ) {
        Ok(t) => Some(t),
        Err(crate::Error::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => {
            None
        }
        Err(crate::Error::NotRegular { found, .. }) => {
            return Err(InstallError::Config {
                path: target,
                message: format!(
                    "is a {found}, not a regular file; sjournal reads and edits only a regular \
                     file there: move it away, then run the command again"
                ),
            })
        }
        Err(e) => {
            return Err(InstallError::Config {
                path: target,
                message: format!("cannot be read: {e}"),
            })
        }
    };
    Ok((target, text))
}

/// Reads a configuration file as a JSON object (missing or empty: an empty object).
fn read_doc(path: &Path) -> Result<Doc, InstallError> {
    let (target, text) = read_text(path)?;
    let doc = match text.as_deref().map(str::trim) {
        None | Some("") => Map::new(),
        Some(t) => match serde_json::from_str::<Value>(t) {
            Ok(Value::Object(m)) => m,
            Ok(_) => {
                return Err(InstallError::Config {
                    path: target,
                    message: "the file is JSON but not an object; fix it by hand first".into(),
                })
            }
            Err(e) => {
                return Err(InstallError::Config {
                    path: target,
                    message: format!(
                        "not valid JSON ({e}); fix it by hand first (hosts accept plain JSON only)"
                    ),
                })
            }
        },
    };
    Ok(Doc {
        path: target,
        text,
        map: doc,
    })
}

fn render(doc: &Map<String, Value>) -> String {
    let mut s = serde_json::to_string_pretty(doc).expect("a JSON map serializes");
    s.push('\n');
    s
}

fn plan(d: Doc, changed: bool) -> Plan {
    Plan {
        after: if changed {
            render(&d.map)
        } else {
            d.text.clone().unwrap_or_default()
        },
        path: d.path,
        before: d.text,
        changed,
    }
}

/// Computes the change `install` makes to `path`.
pub fn plan_install(path: &Path, host: InstallTarget, command: &str) -> Result<Plan, InstallError> {
    let mut d = read_doc(path)?;
    let changed = install_doc(&mut d.map, host, command, &d.path)?;
    Ok(plan(d, changed))
}

/// Computes the change `uninstall` makes to `path`.
pub fn plan_uninstall(path: &Path) -> Result<Plan, InstallError> {
    let mut d = read_doc(path)?;
    let changed = uninstall_doc(&mut d.map);
    Ok(plan(d, changed))
}

impl Plan {
    /// A unified diff of the change, for `--dry-run`.
    pub fn diff(&self) -> String {
        let before = self.before.as_deref().unwrap_or("");
        similar::TextDiff::from_lines(before, &self.after)
            .unified_diff()
            .header(
                &format!("{} (now)", self.path.display()),
                &format!("{} (after)", self.path.display()),
            )
            .to_string()
    }

    /// Writes the plan: under the directory's lock, checks the file still holds what the
    /// plan was made from, then backup, temporary file, sync, a last check, rename. Nothing if
    /// nothing changed. [`InstallError::Changed`] if the file changed since it was read (plan
    /// again): the lock keeps other installs out, but a host rewrites its own files without
    /// it (Claude Code its `.claude.json`), so the file is read once more just before the
    /// rename, and a change that landed meanwhile is planned over, not lost.
    pub fn write(&self) -> Result<Written, InstallError> {
        self.write_with(|| {})
    }

    /// [`Plan::write`], running `before_rename` after the new text and the backup are
    /// written and before the last check: where another writer's change can land (tests
    /// put one there).
    pub fn write_with(&self, before_rename: impl FnOnce()) -> Result<Written, InstallError> {
        if !self.changed {
            return Ok(Written { backup: None });
        }
        let dir = self.path.parent().unwrap_or(Path::new("."));
        // Directories the host has not made yet are the user's alone (0700), as sjournal's are.
        std::os::unix::fs::DirBuilderExt::mode(std::fs::DirBuilder::new().recursive(true), 0o700)
            .create(dir)
            .map_err(|e| io("create directory", dir, e))?;
        let lock = lock_dir(dir)?;
        let (_, now) = read_text(&self.path)?;
        if now != self.before {
            return Err(InstallError::Changed {
                path: self.path.clone(),
            });
        }
        let name = self
            .path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let mode = std::fs::metadata(&self.path)
            .map(|m| std::os::unix::fs::PermissionsExt::mode(&m.permissions()) & 0o7777)
            .unwrap_or(0o600);
        let backup = match &self.before {
            Some(text) => Some(write_backup(dir, &name, text, mode)?),
            None => None,
        };
        let tmp = dir.join(format!(".{name}.sjournal-tmp-{}", std::process::id()));
        let _ = std::fs::remove_file(&tmp);
        write_new(&tmp, &self.after, mode)?;
        before_rename();
        match read_text(&self.path) {
            Ok((_, now)) if now == self.before => {}
            changed => {
                // Written over since the first check: this plan is stale, and so is its backup.
                let _ = std::fs::remove_file(&tmp);
                if let Some(b) = &backup {
                    let _ = std::fs::remove_file(b);
                }
                changed?;
                return Err(InstallError::Changed {
                    path: self.path.clone(),
                });
            }
        }
        std::fs::rename(&tmp, &self.path).map_err(|e| {
            let _ = std::fs::remove_file(&tmp);
            io("rename", &self.path, e)
        })?;
        let _ = lock.sync_all();
        Ok(Written { backup })
    }
}

/// How long an install waits for another one editing the same directory.
const INSTALL_LOCK_WAIT: std::time::Duration = std::time::Duration::from_secs(10);

/// Takes an exclusive `flock` on `dir` (held while the returned file is open): installs
/// editing files of one directory take turns.
fn lock_dir(dir: &Path) -> Result<std::fs::File, InstallError> {
    use std::os::unix::fs::OpenOptionsExt;
    let f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_DIRECTORY | libc::O_CLOEXEC | libc::O_NONBLOCK)
        .open(dir)
        .map_err(|e| io("open directory", dir, e))?;
    let deadline = std::time::Instant::now() + INSTALL_LOCK_WAIT;
    crate::storage::lock::lock(
        &f,
        dir,
        crate::storage::lock::Mode::Exclusive,
        Some(deadline),
    )
    .map_err(|e| InstallError::Config {
        path: dir.to_owned(),
        message: format!(
            "another process is editing files here ({e}); nothing was written: try again"
        ),
    })?;
    Ok(f)
}

/// Writes a backup of `text` under a name no other file has: `<name>.sjournal-backup-<secs>`,
/// else `-1`, `-2`, … (each created exclusively, so two runs never write the same one).
fn write_backup(dir: &Path, name: &str, text: &str, mode: u32) -> Result<PathBuf, InstallError> {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    for n in 0..10_000u32 {
        let b = match n {
            0 => dir.join(format!("{name}.sjournal-backup-{secs}")),
            n => dir.join(format!("{name}.sjournal-backup-{secs}-{n}")),
        };
        match write_new(&b, text, mode) {
            Ok(()) => return Ok(b),
            Err(InstallError::Io { source, .. })
                if source.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(e),
        }
    }
    Err(InstallError::Config {
        path: dir.join(format!("{name}.sjournal-backup-{secs}")),
        message: "too many backups by that name; remove old ones".into(),
    })
}

/// Creates `path` (never an existing file, never through a symlink) with `text` and exactly
/// `mode` (set on the open file, so the umask does not change it), synced.
pub(crate) fn write_new(path: &Path, text: &str, mode: u32) -> Result<(), InstallError> {
    use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(mode)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(path)
        .map_err(|e| io("create", path, e))?;
    f.set_permissions(std::fs::Permissions::from_mode(mode))
        .map_err(|e| io("set the mode of", path, e))?;
    f.write_all(text.as_bytes())
        .map_err(|e| io("write", path, e))?;
    f.sync_all().map_err(|e| io("fsync", path, e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recognises_our_commands_only() {
        let h = |c: &str| serde_json::json!({"type": "command", "command": c});
        assert!(is_ours(&h("sjournal hook --host claude")));
        assert!(is_ours(&h("/usr/local/bin/sjournal hook")));
        assert!(is_ours(&h("'/opt/my tools/sjournal' hook --host codex")));
        assert!(is_ours(&h("/opt/bin/sjournal-hook hook --host claude")));
        assert!(!is_ours(&h("/opt/bin/sjournal-hooks hook --host claude")));
        assert!(!is_ours(&h("sjournal append --session x")));
        assert!(!is_ours(&h("/bin/not-sjournal hook")));
        assert!(!is_ours(&h("echo sjournal hook")));
        assert!(!is_ours(
            &serde_json::json!({"type": "http", "command": "sjournal hook"})
        ));
    }

    #[test]
    fn quoting_round_trips_through_first_word() {
        for p in [
            "/usr/bin/sjournal",
            "/opt/my tools/sjournal",
            "/x/it's/sjournal",
        ] {
            let q = shell_quote(p);
            assert_eq!(first_word(&format!("{q} hook")).0, p, "{q}");
        }
    }
}
