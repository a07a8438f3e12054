//! The machine's checks: this binary, the root and the free space under it, `config.toml`.

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::Path;

use sjournal::config::Config;
use sjournal::journal::Root;
use sjournal::report::CheckStatus;
use sjournal::storage::{self, Owner};

use super::{shown, Doctor};

/// Below this much free space under the root, events soon go to the fallback spool.
const SPACE_FAIL_BYTES: u64 = 64 << 20;
/// Below this much, a warning.
const SPACE_WARN_BYTES: u64 = 512 << 20;

/// True if this user may create files in the directory `path`.
fn writable(path: &Path) -> bool {
    use rustix::fs::Access;
    rustix::fs::access(path, Access::WRITE_OK | Access::EXEC_OK).is_ok()
}

fn nearest_existing(path: &Path) -> Option<&Path> {
    path.ancestors().find(|p| p.exists())
}

/// Free bytes for this user on the file system of `path`.
fn free_bytes(path: &Path) -> Option<u64> {
    let s = rustix::fs::statvfs(path).ok()?;
    Some(s.f_bavail.saturating_mul(s.f_frsize))
}

fn bytes(n: u64) -> String {
    match n {
        n if n >= 1 << 30 => format!("{:.1} GiB", n as f64 / (1u64 << 30) as f64),
        n => format!("{:.0} MiB", n as f64 / (1u64 << 20) as f64),
    }
}

/// Whether the ELF file at `path` names an interpreter (is dynamically linked); None if it
/// cannot tell.
fn dynamically_linked(path: &Path) -> Option<bool> {
    use std::io::Read;
    let open = || storage::open_regular(path, Owner::Anyone).ok();
    let mut f = open()?;
    let mut head = vec![0u8; 64];
    f.read_exact(&mut head).ok()?;
    if &head[..4] != b"\x7fELF" || head[5] != 1 {
        return None;
    }
    let u16_at = |b: &[u8], i: usize| u16::from_le_bytes([b[i], b[i + 1]]) as usize;
    let (phoff, phentsize, phnum) = match head[4] {
        2 => (
            u64::from_le_bytes(head[0x20..0x28].try_into().ok()?) as usize,
            u16_at(&head, 0x36),
            u16_at(&head, 0x38),
        ),
        1 => (
            u32::from_le_bytes(head[0x1c..0x20].try_into().ok()?) as usize,
            u16_at(&head, 0x2a),
            u16_at(&head, 0x2c),
        ),
        _ => return None,
    };
    let mut table = vec![0u8; phoff + phentsize * phnum];
    open()?.read_exact(&mut table).ok()?;
    const PT_INTERP: u32 = 3;
    Some((0..phnum).any(|i| {
        let at = phoff + i * phentsize;
        table
            .get(at..at + 4)
            .is_some_and(|t| u32::from_le_bytes(t.try_into().unwrap()) == PT_INTERP)
    }))
}

/// What is wrong with a root directory that is there, and the fixes, in the same order.
#[derive(Default)]
struct Problems {
    problems: Vec<String>,
    fixes: Vec<String>,
}

impl Problems {
    fn add(&mut self, problem: String, fix: String) {
        self.problems.push(problem);
        self.fixes.push(fix);
    }
}

impl Doctor {
    pub(super) fn binary(&mut self) {
        let version = env!("CARGO_PKG_VERSION");
        let Ok(exe) = std::env::current_exe() else {
            self.info(
                "binary",
                None,
                format!("this sjournal {version}: its path is unknown"),
            );
            return;
        };
        let linking = match dynamically_linked(&exe) {
            Some(false) => "statically linked: it runs wherever the host runs hooks",
            Some(true) => {
                "dynamically linked: it needs the same C library wherever the host runs hooks"
            }
            None => "linking unknown",
        };
        self.info(
            "binary",
            None,
            format!("this sjournal {version}: {} ({linking})", shown(&exe)),
        );
        use crate::cli::shared::{hook_binary, HookBinary};
        match hook_binary() {
            Ok(HookBinary::Same(p)) => self.info(
                "hook binary",
                None,
                format!(
                    "{}: this build's; `sjournal install` points hosts at it",
                    shown(&p)
                ),
            ),
            Ok(HookBinary::Absent) => self.info(
                "hook binary",
                None,
                "none beside this binary: hosts run `sjournal hook`, which loads every \
                 command's code on each event (cargo install --locked --path . installs sjournal-hook)"
                    .into(),
            ),
            Ok(HookBinary::Other(p)) => self.info(
                "hook binary",
                None,
                format!(
                    "{}: not from this build, so `sjournal install` does not use it; rebuild \
                     both (cargo build --release, or cargo install --locked --path .)",
                    shown(&p)
                ),
            ),
            Ok(HookBinary::Untrusted(p, why)) => self.info(
                "hook binary",
                None,
                format!(
                    "{}: not run ({why}), so `sjournal install` does not use it",
                    shown(&p)
                ),
            ),
            Err(_) => {}
        }
    }

    pub(super) fn root(&mut self, root: &Root) {
        let dir = root.dir();
        let meta = match std::fs::metadata(dir) {
            Ok(m) => m,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return self.root_missing(dir),
            Err(e) => {
                return self.fail(
                    "root",
                    None,
                    format!("{}: cannot be read: {e}", shown(dir)),
                    "fix its permissions, or choose another root with SJOURNAL_HOME".into(),
                )
            }
        };
        let mut p = Problems::default();
        if !meta.is_dir() {
            p.add(
                "it is not a directory".to_owned(),
                "move it away, or choose another root with SJOURNAL_HOME".to_owned(),
            );
        } else {
            root_dir_problems(dir, &meta, &mut p);
            sessions_dir_problems(&root.sessions_dir(), &mut p);
        }
        if p.problems.is_empty() {
            self.ok("root", None, format!("{}: writable, private", shown(dir)));
        } else {
            self.fail(
                "root",
                None,
                format!("{}: {}", shown(dir), p.problems.join("; ")),
                p.fixes.join("; "),
            );
        }
    }

    /// The root is not there yet: fine if this user can create it.
    fn root_missing(&mut self, dir: &Path) {
        let above = nearest_existing(dir).unwrap_or(Path::new("/"));
        if writable(above) {
            self.ok(
                "root",
                None,
                format!(
                    "{}: not created yet: the first event creates it",
                    shown(dir)
                ),
            );
        } else {
            self.fail(
                "root",
                None,
                format!(
                    "{}: not created yet, and this user cannot create it",
                    shown(dir)
                ),
                format!(
                    "create it yourself (`mkdir -p -m 700 {}`), or choose another root with \
                     SJOURNAL_HOME",
                    shown(dir)
                ),
            );
        }
    }

    pub(super) fn space(&mut self, root: &Root) {
        let at = nearest_existing(root.dir()).unwrap_or(Path::new("/"));
        let Some(free) = free_bytes(at) else {
            self.info(
                "space",
                None,
                format!("the free space under {} is unknown", shown(at)),
            );
            return;
        };
        let (status, fix) = match free {
            f if f < SPACE_FAIL_BYTES => (
                CheckStatus::Fail,
                Some("free some space on that file system (events go to the fallback spool when it is full)".into()),
            ),
            f if f < SPACE_WARN_BYTES => (
                CheckStatus::Warn,
                Some("free some space on that file system".into()),
            ),
            _ => (CheckStatus::Ok, None),
        };
        self.push(
            "space",
            None,
            status,
            format!("{} free under {}", bytes(free), shown(at)),
            fix,
        );
    }

    pub(super) fn config(&mut self, root: &Root) -> Option<Config> {
        let path = Config::path(root);
        match Config::load(root) {
            Ok(c) => {
                let what = if path.exists() {
                    format!("{} reads", shown(&path))
                } else {
                    format!("{} absent: the defaults", shown(&path))
                };
                self.ok("config", None, what);
                Some(c)
            }
            Err(e) => {
                self.fail(
                    "config",
                    None,
                    format!(
                        "{}: {} (the hook runs with the defaults)",
                        shown(&e.path),
                        e.message
                    ),
                    format!("correct {}", shown(&e.path)),
                );
                None
            }
        }
    }
}

/// The root directory itself: ours, not writable by others, writable by us.
fn root_dir_problems(dir: &Path, meta: &std::fs::Metadata, p: &mut Problems) {
    let me = rustix::process::geteuid().as_raw();
    let mode = meta.permissions().mode() & 0o7777;
    if meta.uid() != me {
        p.add(
            format!("it belongs to uid {}, not to this user", meta.uid()),
            "choose a root of your own with SJOURNAL_HOME".into(),
        );
    }
    if mode & 0o022 != 0 {
        p.add(
            format!(
                "others can write in it (mode {mode:o}): they could replace what sjournal keeps there"
            ),
            format!("chmod go-w {}", shown(dir)),
        );
    }
    if !writable(dir) {
        p.add(
            "this user cannot write in it: events go to the fallback spool".into(),
            format!("chmod u+rwx {}", shown(dir)),
        );
    }
}

/// `<root>/sessions`: a private directory, not a link.
fn sessions_dir_problems(sessions: &Path, p: &mut Problems) {
    match std::fs::symlink_metadata(sessions) {
        Ok(m) if m.file_type().is_symlink() => p.add(
            format!(
                "{} is a symbolic link, which sjournal does not follow: events go to the \
                 fallback spool",
                shown(sessions)
            ),
            format!(
                "move the link away (`mv {0} {0}.link`); sjournal makes a new one",
                shown(sessions)
            ),
        ),
        Ok(m) if m.is_dir() && m.permissions().mode() & 0o077 != 0 => p.add(
            format!(
                "{} is open to others (mode {:o})",
                shown(sessions),
                m.permissions().mode() & 0o7777
            ),
            format!("chmod 700 {}", shown(sessions)),
        ),
        Ok(m) if !m.is_dir() => p.add(
            format!("{} is not a directory", shown(sessions)),
            format!("move {} away", shown(sessions)),
        ),
        _ => {}
    }
}
