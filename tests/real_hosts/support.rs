//! Running a real host: its pinned install (tools/hosts/install.sh, cached outside the clone),
//! a fresh HOME in a temporary directory outside any git work tree, sjournal wired in by its
//! own installer, and reading back what sjournal journaled.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

pub fn bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_sjournal"))
}

/// Asserts that `install` pointed the host at the hook binary (`sjournal-hook`, beside `sjournal`
/// and from the same build) in `file`, so the real host drives the binary users' hosts run.
pub fn assert_runs_the_hook_binary(file: &Path) {
    let text = std::fs::read_to_string(file).unwrap();
    let lean = env!("CARGO_BIN_EXE_sjournal-hook");
    assert!(
        text.contains(lean),
        "{} does not run {lean}:\n{text}",
        file.display()
    );
    assert!(
        !text.contains(&format!("{} hook", bin().display())),
        "{} runs `sjournal hook`:\n{text}",
        file.display()
    );
}

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Whether a host that cannot be installed fails the test (CI) or skips it.
fn required() -> bool {
    std::env::var("SJOURNAL_REQUIRE_HOSTS").is_ok_and(|v| v == "1")
}

/// The host's install directory (its `node_modules`), installing it first if needed. None (the
/// test then skips, saying why) if it cannot be installed and SJOURNAL_REQUIRE_HOSTS is not 1.
pub fn installed(host: &str) -> Option<PathBuf> {
    if std::env::var("SJOURNAL_SKIP_HOSTS").is_ok_and(|v| v == "1") && !required() {
        crate::skip::whole(
            "SJOURNAL_SKIP_HOSTS=1: the real hosts are not run",
            "unset SJOURNAL_SKIP_HOSTS",
        );
        return None;
    }
    let start = Instant::now();
    let out = Command::new(repo().join("tools/hosts/install.sh"))
        .arg(host)
        .stdin(Stdio::null())
        .output();
    let why = match out {
        Ok(o) if o.status.success() => {
            let line = String::from_utf8_lossy(&o.stdout).into_owned();
            if let Some(dir) = line.split_whitespace().nth(1) {
                eprintln!(
                    "real host {host}: installed at {dir} ({:.1} s)",
                    start.elapsed().as_secs_f64()
                );
                return Some(PathBuf::from(dir));
            }
            format!("install.sh printed no directory: {line}")
        }
        Ok(o) => format!(
            "tools/hosts/install.sh failed: {}",
            String::from_utf8_lossy(&o.stderr)
                .lines()
                .rev()
                .take(5)
                .collect::<Vec<_>>()
                .join(" | ")
        ),
        Err(e) => format!("cannot run tools/hosts/install.sh: {e}"),
    };
    if required() {
        panic!("real host {host} is required (SJOURNAL_REQUIRE_HOSTS=1) but {why}");
    }
    crate::skip::whole(
        &format!("the host could not be installed: {why}"),
        "tools/hosts/install.sh (needs npm and the npm registry)",
    );
    None
}

/// One run's world: HOME, a project directory, the host's install.
pub struct World {
    pub _dir: tempfile::TempDir,
    pub home: PathBuf,
    pub project: PathBuf,
    #[allow(dead_code)] // for scenarios that run the host's other binaries
    pub host_dir: PathBuf,
    /// Extra environment for every command.
    pub env: BTreeMap<String, String>,
}

impl World {
    pub fn new(host_dir: PathBuf) -> World {
        // Under the system temp dir: outside any git work tree (inside one the hosts scope
        // trust, settings and instructions to the enclosing repository).
        let dir = tempfile::Builder::new()
            .prefix("sjournal-host-")
            .tempdir_in(std::env::temp_dir())
            .unwrap();
        let home = dir.path().join("home");
        let project = dir.path().join("project");
        for d in [&home, &project, &dir.path().join("tmp")] {
            std::fs::create_dir_all(d).unwrap();
        }
        let mut env = BTreeMap::new();
        let bin_dir = host_dir.join("node_modules/.bin");
        let path = format!(
            "{}:{}:{}",
            bin_dir.display(),
            bin().parent().unwrap().display(),
            std::env::var("PATH").unwrap_or_default()
        );
        env.insert("PATH".into(), path);
        env.insert("HOME".into(), home.display().to_string());
        env.insert(
            "TMPDIR".into(),
            dir.path().join("tmp").display().to_string(),
        );
        env.insert("LANG".into(), "C.UTF-8".into());
        env.insert("TERM".into(), "dumb".into());
        env.insert("NO_COLOR".into(), "1".into());
        World {
            home,
            project,
            host_dir,
            env,
            _dir: dir,
        }
    }

    /// The journal root sjournal uses for this HOME (its default: ~/.local/state/sjournal).
    pub fn root(&self) -> PathBuf {
        self.home.join(".local/state/sjournal")
    }

    /// A command with exactly this world's environment (nothing of the caller's: no model
    /// keys, no host variables), run in the project.
    pub fn cmd(&self, program: impl AsRef<std::ffi::OsStr>) -> Command {
        let mut c = Command::new(program);
        c.env_clear().envs(&self.env).current_dir(&self.project);
        c.stdin(Stdio::null());
        c
    }

    /// Runs a command with a time limit; returns its output (panics past the limit, killing
    /// it, with what it printed so far).
    pub fn run(&self, mut c: Command, limit: Duration) -> Output {
        let what = format!("{c:?}");
        c.stdout(Stdio::piped()).stderr(Stdio::piped());
        let mut child = c.spawn().unwrap_or_else(|e| panic!("spawn {what}: {e}"));
        let out_pipe = child.stdout.take().unwrap();
        let err_pipe = child.stderr.take().unwrap();
        let t1 = std::thread::spawn(move || read_all(out_pipe));
        let t2 = std::thread::spawn(move || read_all(err_pipe));
        let start = Instant::now();
        let status = loop {
            if let Some(s) = child.try_wait().unwrap() {
                break s;
            }
            if start.elapsed() > limit {
                let _ = child.kill();
                let _ = child.wait();
                panic!(
                    "{what} ran past {limit:?}\nstdout: {}\nstderr: {}",
                    t1.join().unwrap(),
                    t2.join().unwrap()
                );
            }
            std::thread::sleep(Duration::from_millis(50));
        };
        Output {
            status,
            stdout: t1.join().unwrap().into_bytes(),
            stderr: t2.join().unwrap().into_bytes(),
        }
    }

    /// `sjournal <args>` in this world; panics unless it succeeds.
    pub fn sj(&self, args: &[&str]) -> String {
        let mut c = self.cmd(bin());
        c.args(args);
        let o = self.run(c, Duration::from_secs(60));
        assert!(
            o.status.success(),
            "sjournal {args:?} failed: {}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        );
        String::from_utf8(o.stdout).unwrap()
    }

    /// Writes `<root>/config.toml`: a hook deadline for a shared, noisy machine (a hook past
    /// its deadline spools the event, which the next append merges; the tests read the
    /// journal, so they give the hook time).
    pub fn patient_hook(&self) {
        std::fs::create_dir_all(self.root()).unwrap();
        std::fs::write(
            self.root().join("config.toml"),
            "[hook]\ndeadline_ms = 8000\n",
        )
        .unwrap();
    }

    /// Every session sjournal knows: `sessions --json`, one object per line.
    pub fn sessions(&self) -> Vec<Value> {
        self.sj(&["sessions", "--json"])
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }

    /// The folded state of a session (`state --json`'s `state`).
    pub fn state(&self, session: &str) -> Value {
        let v: Value =
            serde_json::from_str(&self.sj(&["state", "--json", "--session", session])).unwrap();
        v["state"].clone()
    }

    /// A session's records: (kind, payload JSON).
    pub fn log(&self, session: &str) -> Vec<(String, Value)> {
        self.sj(&["log", "--json", "--session", session])
            .lines()
            .map(|l| {
                let v: Value = serde_json::from_str(l).unwrap();
                (
                    v["kind"].as_str().unwrap_or("").to_owned(),
                    v["payload"].clone(),
                )
            })
            .collect()
    }

    /// The event payloads of a session, in order: (kind, payload).
    pub fn events(&self, session: &str) -> Vec<(String, Value)> {
        self.log(session)
            .into_iter()
            .filter(|(k, _)| !k.starts_with("sjournal."))
            .collect()
    }

    /// `verify --all` passes.
    pub fn verify(&self) {
        let mut c = self.cmd(bin());
        c.args(["verify", "--all"]);
        let o = self.run(c, Duration::from_secs(60));
        assert!(
            o.status.success(),
            "verify --all: {}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        );
    }

    /// With SJOURNAL_REFRESH_FIXTURES=1, refreshes tests/fixtures/<dir>/<file> from the
    /// payloads this run journaled: one line `{"event", "variant", "payload"}` per event name
    /// and variant (the payload's source, trigger, reason or tool name — for the Cline SDK,
    /// its tool's name and `/failed`; `in-subagent` for a subagent's), this run's temporary paths replaced by /home/dev/run. A line of the same
    /// event and variant is replaced in place; lines of variants this run did not produce are
    /// kept.
    pub fn refresh_fixtures(&self, dir: &str, file: &str, sessions: &[&str]) {
        if std::env::var("SJOURNAL_REFRESH_FIXTURES").as_deref() != Ok("1") {
            return;
        }
        let path = repo().join("tests/fixtures").join(dir).join(file);
        let key_of = |v: &Value| {
            (
                v["event"].as_str().unwrap_or("").to_owned(),
                v["variant"].as_str().unwrap_or("").to_owned(),
            )
        };
        let mut lines: Vec<Value> = std::fs::read_to_string(&path)
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        let base = self._dir.path().display().to_string();
        let mut fresh: Vec<((String, String), Value)> = Vec::new();
        for s in sessions {
            for (kind, p) in self.events(s) {
                let variant = ["source", "trigger", "reason", "tool_name"]
                    .iter()
                    .find_map(|k| p.get(*k).and_then(Value::as_str))
                    .map(str::to_owned)
                    .unwrap_or_else(|| cline_tool_variant(&p));
                // A subagent's: an `agent_id` (the Cline SDK's main agent has one too, with
                // a null `parent_agent_id`).
                let sub = p.get("agent_id").is_some()
                    && p.get("parent_agent_id").is_none_or(|v| !v.is_null());
                let variant = match (sub, variant.is_empty()) {
                    (false, _) => variant,
                    (true, true) => "in-subagent".to_owned(),
                    (true, false) => format!("{variant}/in-subagent"),
                };
                let key = (kind, variant);
                if fresh.iter().any(|(k, _)| *k == key) {
                    continue;
                }
                let text = p.to_string().replace(&base, "/home/dev/run");
                fresh.push((key, serde_json::from_str(&text).unwrap()));
            }
        }
        // In place, in the file's order (the line's other fields described the old capture);
        // new variants at the end.
        for ((event, variant), p) in fresh {
            let v = if variant.is_empty() {
                Value::Null
            } else {
                Value::String(variant.clone())
            };
            let line = serde_json::json!({"event": event, "variant": v, "payload": p});
            match lines
                .iter_mut()
                .find(|l| key_of(l) == (event.clone(), variant.clone()))
            {
                Some(old) => *old = line,
                None => lines.push(line),
            }
        }
        let out: String = lines.iter().map(|v| format!("{v}\n")).collect();
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, out).unwrap();
    }
}

/// The Cline SDK's tool events: the tool's name, `/failed` when an item of its output failed.
fn cline_tool_variant(p: &Value) -> String {
    let call = if p["tool_result"].is_object() {
        &p["tool_result"]
    } else {
        &p["tool_call"]
    };
    let Some(name) = call["name"].as_str() else {
        return String::new();
    };
    let items = match &call["output"] {
        Value::Array(a) => a.iter().collect(),
        o => vec![o],
    };
    if items.iter().any(|i| i["success"] == false) {
        format!("{name}/failed")
    } else {
        name.to_owned()
    }
}

fn read_all(mut r: impl std::io::Read) -> String {
    let mut b = Vec::new();
    let _ = r.read_to_end(&mut b);
    String::from_utf8_lossy(&b).into_owned()
}

/// Counts of event kinds (record kinds) in a list of events.
pub fn kinds(events: &[(String, Value)]) -> BTreeMap<String, usize> {
    let mut m = BTreeMap::new();
    for (k, _) in events {
        *m.entry(k.clone()).or_insert(0) += 1;
    }
    m
}

/// Asserts that `hay` contains `needle`, showing a window of `hay` otherwise.
#[track_caller]
pub fn assert_has(hay: &str, needle: &str, what: &str) {
    assert!(
        hay.contains(needle),
        "{what}: {needle:?} not found in {}",
        &hay[..hay.len().min(3000)]
    );
}

pub fn out_text(o: &Output) -> String {
    format!(
        "status {:?}\nstdout: {}\nstderr: {}",
        o.status.code(),
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}
