//! Registering `sjournal mcp` where Claude Code loads MCP servers, as `claude mcp add
//! --scope user|project|local sjournal -- <sjournal> mcp` would: user scope in `~/.claude.json`
//! (`mcpServers`), project scope in `<project>/.mcp.json` (`mcpServers`; Claude Code asks the
//! user to approve a project's servers), local scope in `~/.claude.json` under
//! `projects.<project>.mcpServers`. The entry is named `sjournal`; an entry of that name that
//! does not run `sjournal ... mcp` is someone else's and is neither replaced nor removed.
//! Files are read, planned and written as the hooks' settings are (`super::Plan`).

use std::path::{Path, PathBuf};

use serde_json::{json, Map, Value};

use super::{first_word, plan, read_doc, Homes, InstallError, Plan, Scope};

/// The server's name in the host's configuration.
pub const SERVER_NAME: &str = "sjournal";

/// The file Claude Code reads the scope's MCP servers from.
pub fn config_path(scope: Scope, homes: &Homes, project: &Path) -> Result<PathBuf, String> {
    Ok(match scope {
        Scope::User | Scope::Local => homes
            .home
            .as_deref()
            .ok_or_else(|| "HOME is not set; cannot find the user's configuration".to_owned())?
            .join(".claude.json"),
        Scope::Project => project.join(".mcp.json"),
    })
}

/// The key Claude Code files a project under in `~/.claude.json`: its absolute path.
fn project_key(project: &Path) -> String {
    std::fs::canonicalize(project)
        .or_else(|_| std::path::absolute(project))
        .unwrap_or_else(|_| project.to_owned())
        .to_string_lossy()
        .into_owned()
}

/// The `mcpServers` object of the scope, created when `create`.
fn servers<'a>(
    doc: &'a mut Map<String, Value>,
    scope: Scope,
    project: &Path,
    create: bool,
    path: &Path,
) -> Result<Option<&'a mut Map<String, Value>>, InstallError> {
    let bad = |what: &str| InstallError::Config {
        path: path.to_owned(),
        message: format!("{what} is not a JSON object; fix it by hand first"),
    };
    let mut at = doc;
    if scope == Scope::Local {
        for key in ["projects".to_owned(), project_key(project)] {
            if !at.contains_key(&key) {
                if !create {
                    return Ok(None);
                }
                at.insert(key.clone(), Value::Object(Map::new()));
            }
            at = at
                .get_mut(&key)
                .and_then(Value::as_object_mut)
                .ok_or_else(|| bad(&key))?;
        }
    }
    if !at.contains_key("mcpServers") {
        if !create {
            return Ok(None);
        }
        at.insert("mcpServers".into(), Value::Object(Map::new()));
    }
    at.get_mut("mcpServers")
        .and_then(Value::as_object_mut)
        .map(Some)
        .ok_or_else(|| bad("mcpServers"))
}

/// True if the entry runs `sjournal ... mcp`.
pub fn is_ours(entry: &Value) -> bool {
    let program = entry.get("command").and_then(Value::as_str).unwrap_or("");
    let args: Vec<&str> = entry
        .get("args")
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    program.rsplit('/').next() == Some("sjournal") && args.last() == Some(&"mcp")
}

/// The entry for `command` (a shell command line as `install` takes it: the program, then
/// options such as `--root DIR`).
pub fn entry(command: &str) -> Value {
    let (program, rest) = first_word(command);
    let mut args: Vec<&str> = rest.split_whitespace().collect();
    args.push("mcp");
    json!({"type": "stdio", "command": program, "args": args, "env": {}})
}

/// Computes the change `install` makes to `path` to register the server.
pub fn plan_install(
    path: &Path,
    scope: Scope,
    project: &Path,
    command: &str,
) -> Result<Plan, InstallError> {
    let mut d = read_doc(path)?;
    let want = entry(command);
    let dpath = d.path.clone();
    let map = servers(&mut d.map, scope, project, true, &dpath)?.expect("created");
    let changed = match map.get(SERVER_NAME) {
        Some(have) if have == &want => false,
        Some(have) if !is_ours(have) => {
            return Err(InstallError::Config {
                path: dpath,
                message: format!(
                    "an MCP server named {SERVER_NAME:?} is there and does not run sjournal; \
                     rename it, or install without --mcp"
                ),
            })
        }
        _ => {
            map.insert(SERVER_NAME.into(), want);
            true
        }
    };
    Ok(plan(d, changed))
}

/// Computes the change `uninstall` makes to `path`: sjournal's entry removed, and the
/// `mcpServers` object if it held nothing else.
pub fn plan_uninstall(path: &Path, scope: Scope, project: &Path) -> Result<Plan, InstallError> {
    let mut d = read_doc(path)?;
    let dpath = d.path.clone();
    let mut changed = false;
    if let Some(map) = servers(&mut d.map, scope, project, false, &dpath)? {
        if map.get(SERVER_NAME).is_some_and(is_ours) {
            map.shift_remove(SERVER_NAME);
            changed = true;
        }
        if changed && map.is_empty() {
            let parent = match scope {
                Scope::Local => d
                    .map
                    .get_mut("projects")
                    .and_then(Value::as_object_mut)
                    .and_then(|p| p.get_mut(&project_key(project)))
                    .and_then(Value::as_object_mut),
                _ => Some(&mut d.map),
            };
            if let Some(p) = parent {
                p.shift_remove("mcpServers");
            }
        }
    }
    Ok(plan(d, changed))
}
