//! Registering `sjournal mcp` where each host loads its MCP servers (`install` does it unless
//! `--no-mcp`; `uninstall` removes it). The entry is named `sjournal` everywhere; an entry of
//! that name that does not run `sjournal ... mcp` is someone else's and is neither replaced
//! nor removed. Everything else in the file (other servers, other settings) is kept in place.
//!
//! Where each host loads them (the file per scope, the table in it, the entry's shape) is
//! declared in the host's folder (`host/<name>/install.rs`, an `McpInstall`); this module
//! locates the file from the environment ([`Places`]) and edits it.
//!
//! Claude Code's scopes are those of `claude mcp add --scope user|project|local`. Files are
//! read, planned and written as the hooks' settings are (`super::Plan`); TOML through
//! `toml_edit`, so comments and layout stay as they were.

use std::path::{Path, PathBuf};

use serde_json::{json, Map, Value};

use super::{plan, read_doc, read_text, Homes, InstallError, Plan, Scope};
use crate::host::install::{ConfigFile, McpInstall, ServersAt};
use crate::host::Host;

/// The server's name in the host's configuration.
pub(crate) const SERVER_NAME: &str = "sjournal";

/// A host that loads MCP servers from a file `install` can edit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum McpHost {
    ClaudeCode,
    Codex,
    Gemini,
    OpenCode,
    Pi,
    OpenClaw,
    Cline,
}

/// Where the hosts keep their configuration (the environment variables they read): the
/// bridges' places, and Codex's and Cline's own.
#[derive(Debug, Clone, Default)]
pub struct Places {
    pub bridge: super::bridge::Places,
    pub homes: Homes,
    pub cline_dir: Option<PathBuf>,
    pub cline_data_dir: Option<PathBuf>,
    pub cline_mcp_settings: Option<PathBuf>,
}

impl Places {
    /// From the process environment (an empty variable is unset).
    pub fn from_env(project: PathBuf) -> Places {
        let var = |k: &str| {
            std::env::var_os(k)
                .filter(|v| !v.is_empty())
                .map(PathBuf::from)
        };
        Places {
            bridge: super::bridge::Places::from_env(project),
            homes: Homes::from_env(),
            cline_dir: var("CLINE_DIR"),
            cline_data_dir: var("CLINE_DATA_DIR"),
            cline_mcp_settings: var("CLINE_MCP_SETTINGS_PATH"),
        }
    }

    fn home(&self) -> Result<&Path, String> {
        self.homes
            .home
            .as_deref()
            .ok_or_else(|| "HOME is not set; cannot find the user's configuration".to_owned())
    }
}

/// The shape of a file's server table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Format {
    /// A JSON object; the servers' object is at this path of keys.
    Json(Vec<String>),
    /// Codex's `config.toml`: `[mcp_servers.<name>]`.
    Toml,
}

/// Where a host's server entry goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Location {
    pub path: PathBuf,
    pub format: Format,
}

impl McpHost {
    /// The host's MCP spec (declared in its folder, `host/<name>/install.rs`).
    pub(crate) fn spec(self) -> &'static McpInstall {
        let host = match self {
            McpHost::ClaudeCode => Host::Claude,
            McpHost::Codex => Host::Codex,
            McpHost::Gemini => Host::Gemini,
            McpHost::OpenCode => Host::OpenCode,
            McpHost::Pi => Host::Pi,
            McpHost::OpenClaw => Host::OpenClaw,
            McpHost::Cline => Host::Cline,
        };
        host.mcp_install().expect("every MCP host has an MCP spec")
    }

    pub fn display_name(self) -> &'static str {
        self.spec().display_name
    }

    /// The file and table the server goes into for `scope`; None: the host has no MCP
    /// servers of that scope (OpenClaw and Cline read them from the user's configuration
    /// only; only Claude Code has a local scope).
    pub fn location(self, scope: Scope, p: &Places) -> Result<Option<Location>, String> {
        let Some(table) = self.spec().table(scope) else {
            return Ok(None);
        };
        let keys = |k: &[&str]| k.iter().map(|k| (*k).to_owned()).collect::<Vec<_>>();
        let format = match table.servers {
            ServersAt::Json(k) => Format::Json(keys(k)),
            ServersAt::ProjectJson(k) => {
                let mut all = vec!["projects".to_owned(), project_key(&p.bridge.project)];
                all.extend(keys(k));
                Format::Json(all)
            }
            ServersAt::Toml => Format::Toml,
        };
        Ok(Some(Location {
            path: p.file(table.file)?,
            format,
        }))
    }

    /// The entry for `command` (a shell command line as `install` takes it: the program,
    /// then options such as `--root DIR`), in the host's shape. The hosts run it without a
    /// shell, so it is split into words as a POSIX shell splits the hooks' same line (quotes
    /// and backslashes: `'/opt/my tools/sjournal' --root "/srv/my root"` is three words); no
    /// variable or `~` is expanded (give absolute paths). A line that does not split (an open
    /// quote) is one word, the program.
    pub fn entry(self, command: &str) -> Value {
        let words = shlex::split(command)
            .filter(|w| !w.is_empty())
            .unwrap_or_else(|| vec![command.trim().to_owned()]);
        let (program, rest) = words.split_first().expect("one word at least");
        let mut args: Vec<&str> = rest.iter().map(String::as_str).collect();
        args.push("mcp");
        (self.spec().entry)(program, &args)
    }
}

impl Places {
    /// Where `file` is under these places.
    fn file(&self, file: ConfigFile) -> Result<PathBuf, String> {
        if let Some(path) = self.bridge.path(file) {
            return path.map_err(|e| e.to_string());
        }
        Ok(match file {
            ConfigFile::User(dir, f) => self.homes.dir(dir)?.join(f),
            ConfigFile::ClaudeJson => self.homes.claude_json()?,
            ConfigFile::ClineMcpSettings => {
                match (
                    &self.cline_mcp_settings,
                    &self.cline_data_dir,
                    &self.cline_dir,
                ) {
                    (Some(f), _, _) => f.clone(),
                    (None, Some(d), _) => d.join("settings/cline_mcp_settings.json"),
                    (None, None, Some(c)) => c.join("data/settings/cline_mcp_settings.json"),
                    (None, None, None) => self
                        .home()?
                        .join(".cline/data/settings/cline_mcp_settings.json"),
                }
            }
            // The bridges' places, located above.
            other => return Err(format!("no place for {other:?}")),
        })
    }
}

/// The key Claude Code files a project under in `~/.claude.json`: its absolute path.
fn project_key(project: &Path) -> String {
    std::fs::canonicalize(project)
        .or_else(|_| std::path::absolute(project))
        .unwrap_or_else(|_| project.to_owned())
        .to_string_lossy()
        .into_owned()
}

/// `sjournal ... mcp`, or `sjournal-hook ... mcp` (which hands the line to `sjournal`: what
/// `install --command .../sjournal-hook` writes).
fn runs_sjournal_mcp(program: &str, args: &[&str]) -> bool {
    matches!(
        program.rsplit('/').next(),
        Some("sjournal" | "sjournal-hook")
    ) && args.last() == Some(&"mcp")
}

/// True if the entry runs `sjournal ... mcp` (`command` and `args`, or OpenCode's
/// `command` array).
pub fn is_ours(entry: &Value) -> bool {
    fn strs(v: Option<&Value>) -> Vec<&str> {
        v.and_then(Value::as_array)
            .map(|a| a.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default()
    }
    match entry.get("command") {
        Some(Value::String(program)) => runs_sjournal_mcp(program, &strs(entry.get("args"))),
        Some(Value::Array(_)) => {
            let all = strs(entry.get("command"));
            all.split_first()
                .is_some_and(|(program, args)| runs_sjournal_mcp(program, args))
        }
        _ => false,
    }
}

/// The object at `keys` in `doc`, created when `create` (None: absent and not created).
fn servers<'a>(
    doc: &'a mut Map<String, Value>,
    keys: &[String],
    create: bool,
    path: &Path,
) -> Result<Option<&'a mut Map<String, Value>>, InstallError> {
    let mut at = doc;
    for key in keys {
        if !at.contains_key(key) {
            if !create {
                return Ok(None);
            }
            at.insert(key.clone(), Value::Object(Map::new()));
        }
        at = at
            .get_mut(key)
            .and_then(Value::as_object_mut)
            .ok_or_else(|| InstallError::Config {
                path: path.to_owned(),
                message: format!("{key} is not a JSON object; fix it by hand first"),
            })?;
    }
    Ok(Some(at))
}

fn foreign(path: &Path) -> InstallError {
    InstallError::Config {
        path: path.to_owned(),
        message: format!(
            "an MCP server named {SERVER_NAME:?} is there and does not run sjournal; rename it, \
             or install with --no-mcp"
        ),
    }
}

/// Computes the change `install` makes to register the server for `host` at `at`.
pub fn plan_install(host: McpHost, at: &Location, command: &str) -> Result<Plan, InstallError> {
    let want = host.entry(command);
    let keys = match &at.format {
        Format::Toml => return toml_install(&at.path, &want),
        Format::Json(keys) => keys,
    };
    let mut d = read_doc(&at.path)?;
    let dpath = d.path.clone();
    let changed = install_entry(&mut d.map, keys, want, &dpath)?;
    Ok(plan(d, changed))
}

/// [`plan_install`] on top of `base`, a plan for the same file (Gemini CLI keeps its MCP
/// servers in the settings file its hooks are in): one plan, so one write and one backup.
pub fn plan_install_onto(
    host: McpHost,
    at: &Location,
    command: &str,
    base: &Plan,
) -> Result<Plan, InstallError> {
    let Format::Json(keys) = &at.format else {
        return Err(InstallError::Usage(format!(
            "{} keeps its MCP servers in TOML, not in its hooks' file",
            host.display_name()
        )));
    };
    let mut map = match serde_json::from_str::<Value>(&base.after) {
        Ok(Value::Object(m)) => m,
        _ if base.after.trim().is_empty() => Map::new(),
        _ => {
            return Err(InstallError::Config {
                path: base.path.clone(),
                message: "the file is not a JSON object; fix it by hand first".into(),
            })
        }
    };
    let changed = install_entry(&mut map, keys, host.entry(command), &base.path)?;
    Ok(Plan {
        path: base.path.clone(),
        before: base.before.clone(),
        after: if changed {
            super::render(&map)
        } else {
            base.after.clone()
        },
        changed: base.changed || changed,
    })
}

/// Puts `want` as sjournal's entry in the servers' object at `keys` of `doc`; true if that
/// changed it.
fn install_entry(
    doc: &mut Map<String, Value>,
    keys: &[String],
    want: Value,
    path: &Path,
) -> Result<bool, InstallError> {
    let map = servers(doc, keys, true, path)?.expect("created");
    Ok(match map.get_mut(SERVER_NAME) {
        Some(have) if !is_ours(have) => return Err(foreign(path)),
        Some(have) => {
            let merged = keep_theirs(have, &want);
            let changed = *have != merged;
            *have = merged;
            changed
        }
        None => {
            map.insert(SERVER_NAME.into(), want);
            true
        }
    })
}

/// sjournal's existing entry `have` updated to run what `want` runs: `command` and `args` are
/// sjournal's, every other key the user's (a server the user disabled stays disabled, its
/// `env`, timeouts and approvals stay), and only keys it lacks are added from `want`.
fn keep_theirs(have: &Value, want: &Value) -> Value {
    let (Some(have), Some(want)) = (have.as_object(), want.as_object()) else {
        return want.clone();
    };
    let mut out = have.clone();
    for (k, v) in want {
        if k == "command" || k == "args" || !out.contains_key(k) {
            out.insert(k.clone(), v.clone());
        }
    }
    Value::Object(out)
}

/// Computes the change `uninstall` makes at `at`: sjournal's entry removed, and the objects
/// above it that held nothing else (up to the first key; the document itself stays).
pub fn plan_uninstall(at: &Location) -> Result<Plan, InstallError> {
    let keys = match &at.format {
        Format::Toml => return toml_uninstall(&at.path),
        Format::Json(keys) => keys,
    };
    let mut d = read_doc(&at.path)?;
    let dpath = d.path.clone();
    let mut changed = false;
    if let Some(map) = servers(&mut d.map, keys, false, &dpath)? {
        if map.get(SERVER_NAME).is_some_and(is_ours) {
            map.shift_remove(SERVER_NAME);
            changed = true;
        }
    }
    if changed {
        // Remove the emptied objects, innermost first; Claude Code's `projects.<dir>` (the
        // two keys above local scope's `mcpServers`) are the host's own and stay.
        let keep = if keys.first().map(String::as_str) == Some("projects") {
            2
        } else {
            0
        };
        for depth in (keep..keys.len()).rev() {
            let Some(parent) = servers(&mut d.map, &keys[..depth], false, &dpath)? else {
                break;
            };
            let empty = parent
                .get(&keys[depth])
                .and_then(Value::as_object)
                .is_some_and(Map::is_empty);
            if !empty {
                break;
            }
            parent.shift_remove(&keys[depth]);
        }
    }
    Ok(plan(d, changed))
}

/// Codex's entry as TOML values: `command` and `args` from the JSON entry.
fn toml_table(want: &Value) -> toml_edit::Table {
    let mut t = toml_edit::Table::new();
    t["command"] = toml_edit::value(want["command"].as_str().unwrap_or_default());
    let mut args = toml_edit::Array::new();
    for a in want["args"].as_array().into_iter().flatten() {
        args.push(a.as_str().unwrap_or_default());
    }
    t["args"] = toml_edit::value(args);
    t
}

/// A TOML server entry as JSON (`command`, `args`), for [`is_ours`] and comparison.
fn toml_entry_json(item: &toml_edit::Item) -> Value {
    let Some(t) = item.as_table_like() else {
        return Value::Null;
    };
    let command = t.get("command").and_then(|c| c.as_str()).map(str::to_owned);
    let args: Option<Vec<String>> = t.get("args").and_then(|a| a.as_array()).map(|a| {
        a.iter()
            .filter_map(|v| v.as_str().map(str::to_owned))
            .collect()
    });
    let mut m = Map::new();
    if let Some(c) = command {
        m.insert("command".into(), Value::String(c));
    }
    if let Some(a) = args {
        m.insert("args".into(), json!(a));
    }
    Value::Object(m)
}

fn read_toml(
    path: &Path,
) -> Result<(PathBuf, Option<String>, toml_edit::DocumentMut), InstallError> {
    let (target, text) = read_text(path)?;
    let doc = match text.as_deref() {
        None => toml_edit::DocumentMut::new(),
        Some(t) => t
            .parse::<toml_edit::DocumentMut>()
            .map_err(|e| InstallError::Config {
                path: target.clone(),
                message: format!("not valid TOML ({e}); fix it by hand first"),
            })?,
    };
    Ok((target, text, doc))
}

fn toml_plan(path: PathBuf, before: Option<String>, after: Option<String>) -> Plan {
    let changed = after.is_some();
    Plan {
        after: after.unwrap_or_else(|| before.clone().unwrap_or_default()),
        path,
        before,
        changed,
    }
}

fn toml_install(path: &Path, want: &Value) -> Result<Plan, InstallError> {
    let (target, before, mut doc) = read_toml(path)?;
    let root = doc.as_table_mut();
    if !root.contains_key("mcp_servers") {
        let mut t = toml_edit::Table::new();
        // No bare `[mcp_servers]` header: only `[mcp_servers.sjournal]` appears.
        t.set_implicit(true);
        root.insert("mcp_servers", toml_edit::Item::Table(t));
    }
    let servers = root["mcp_servers"]
        .as_table_like_mut()
        .ok_or_else(|| InstallError::Config {
            path: target.clone(),
            message: "mcp_servers is not a table; fix it by hand first".into(),
        })?;
    match servers.get_mut(SERVER_NAME) {
        Some(have) => {
            let seen = toml_entry_json(have);
            if !is_ours(&seen) {
                return Err(foreign(&target));
            }
            if seen.get("command") == want.get("command") && seen.get("args") == want.get("args") {
                return Ok(toml_plan(target, before, None));
            }
            // Only what runs the server is sjournal's: the user's other keys (enabled, env,
            // timeouts) stay as they are.
            let fresh = toml_table(want);
            let t = have.as_table_like_mut().expect("is_ours: a table");
            for k in ["command", "args"] {
                t.insert(k, fresh[k].clone());
            }
        }
        None => {
            servers.insert(SERVER_NAME, toml_edit::Item::Table(toml_table(want)));
        }
    }
    let after = doc.to_string();
    Ok(toml_plan(target, before, Some(after)))
}

fn toml_uninstall(path: &Path) -> Result<Plan, InstallError> {
    let (target, before, mut doc) = read_toml(path)?;
    let root = doc.as_table_mut();
    let Some(servers) = root
        .get_mut("mcp_servers")
        .and_then(toml_edit::Item::as_table_like_mut)
    else {
        return Ok(toml_plan(target, before, None));
    };
    if !servers
        .get(SERVER_NAME)
        .is_some_and(|e| is_ours(&toml_entry_json(e)))
    {
        return Ok(toml_plan(target, before, None));
    }
    servers.remove(SERVER_NAME);
    let implicit_and_empty = servers.is_empty()
        && root["mcp_servers"]
            .as_table()
            .is_some_and(toml_edit::Table::is_implicit);
    if implicit_and_empty {
        root.remove("mcp_servers");
    }
    let after = doc.to_string();
    Ok(toml_plan(target, before, Some(after)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recognises_our_entries_in_every_shape() {
        for h in [
            McpHost::ClaudeCode,
            McpHost::Codex,
            McpHost::OpenCode,
            McpHost::Cline,
        ] {
            assert!(is_ours(&h.entry("/opt/bin/sjournal --root /r")), "{h:?}");
            assert!(is_ours(&h.entry("'/opt/my tools/sjournal'")), "{h:?}");
        }
        assert!(!is_ours(&json!({"command": "other", "args": ["mcp"]})));
        assert!(is_ours(
            &McpHost::Gemini.entry(r#""/opt/my tools/sjournal""#)
        ));
        assert!(!is_ours(&json!({"command": ["sjournal", "search"]})));
        assert!(!is_ours(&json!({"url": "http://x"})));
    }

    #[test]
    fn a_command_with_spaces_in_its_words_stays_those_words() {
        let e = McpHost::ClaudeCode.entry(r#"'/opt/my tools/sjournal' --root "/srv/my root""#);
        assert_eq!(e["command"], json!("/opt/my tools/sjournal"));
        assert_eq!(e["args"], json!(["--root", "/srv/my root", "mcp"]));
        let e = McpHost::OpenCode.entry(r"/opt/my\ tools/sjournal --root /r");
        assert_eq!(
            e["command"],
            json!(["/opt/my tools/sjournal", "--root", "/r", "mcp"])
        );
        // `install` quotes the binary's path with `shell_quote`: it comes back whole.
        let quoted = super::super::shell_quote("/opt/it's here/sjournal");
        let e = McpHost::Codex.entry(&quoted);
        assert_eq!(e["command"], json!("/opt/it's here/sjournal"));
        assert_eq!(e["args"], json!(["mcp"]));
        // An open quote: the line is one word, not words cut at its spaces.
        let e = McpHost::Pi.entry("'/opt/my tools/sjournal");
        assert_eq!(e["command"], json!("'/opt/my tools/sjournal"));
    }

    /// Claude Code rewrites `.claude.json` itself, without install's lock: a write of its
    /// that lands after install's first check and before its rename is kept, and planned
    /// over.
    #[test]
    fn a_change_the_host_makes_while_install_writes_is_not_lost() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(".claude.json");
        std::fs::write(&path, "{\"numStartups\": 1}\n").unwrap();
        let at = Location {
            path: path.clone(),
            format: Format::Json(vec!["mcpServers".into()]),
        };
        let plan = plan_install(McpHost::ClaudeCode, &at, "/bin/sjournal").unwrap();
        let host_write = "{\"numStartups\": 2, \"tipsHistory\": {\"x\": 1}}\n";
        let e = plan
            .write_with(|| std::fs::write(&path, host_write).unwrap())
            .unwrap_err();
        assert!(matches!(e, InstallError::Changed { .. }), "{e}");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), host_write);
        let left: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .filter(|n| n != ".claude.json")
            .collect();
        assert!(
            left.is_empty(),
            "no temporary file or stale backup: {left:?}"
        );
        // Planned again from what the file holds now: the host's change and sjournal's.
        plan_install(McpHost::ClaudeCode, &at, "/bin/sjournal")
            .unwrap()
            .write()
            .unwrap();
        let v: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(v["numStartups"], json!(2));
        assert_eq!(v["tipsHistory"], json!({"x": 1}));
        assert!(is_ours(&v["mcpServers"]["sjournal"]), "{v}");
    }

    #[test]
    fn a_toml_entry_round_trips_and_leaves_the_rest_alone() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        let original = "# mine\nmodel = \"m\"\n\n[mcp_servers.other]\ncommand = \"o\" # keep\n";
        std::fs::write(&path, original).unwrap();
        let want = McpHost::Codex.entry("/bin/sjournal");
        let p = toml_install(&path, &want).unwrap();
        assert!(p.changed);
        assert!(p.after.starts_with(original), "{}", p.after);
        assert!(p.after.contains("# keep\n"), "{}", p.after);
        assert!(p
            .after
            .contains("[mcp_servers.sjournal]\ncommand = \"/bin/sjournal\"\nargs = [\"mcp\"]\n"));
        std::fs::write(&path, &p.after).unwrap();
        assert!(!toml_install(&path, &want).unwrap().changed);
        let u = toml_uninstall(&path).unwrap();
        assert_eq!(u.after, original);
    }
}
