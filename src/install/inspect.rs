//! Reading what `sjournal install` left where, for `sjournal doctor`: sjournal's handlers in a
//! host's settings file, the sjournal binary a bridge runs, and whether the host will run
//! them at all — Codex's hook trust, Gemini CLI's folder trust. Nothing here writes.
//!
//! Codex (0.171) runs a hook from a user's or project's `hooks.json` only if
//! `[hooks.state."<hooks.json path>:<event>:<group>:<handler>"]` in `$CODEX_HOME/config.toml`
//! holds a `trusted_hash` equal to the hook's own: `sha256:` and the hex SHA-256 of the
//! hook's identity — `{"event_name": <event, snake case>, "matcher"?: ..., "hooks":
//! [{"type": "command", "command": ..., "timeout": <seconds, 600 if unset>, "async": false,
//! "statusMessage"?: ...}]}` — as JSON with sorted keys and no spaces. Its `/hooks` screen
//! writes that when the user trusts the hooks; a hook whose text changed since no longer
//! matches and is skipped again, silently.
//!
//! Gemini CLI loads no hook at all in a folder it does not trust (folder trust is on unless
//! `security.folderTrust.enabled` is false): the longest rule of `trustedFolders.json` that
//! contains the folder decides (`TRUST_FOLDER`, `TRUST_PARENT` for the rule's parent,
//! `DO_NOT_TRUST`); `GEMINI_CLI_TRUST_WORKSPACE=true|false` overrides it.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};
use sha2::Digest;

use super::{first_word, is_ours, read_doc, InstallError};

/// One of sjournal's handlers in a host's settings file.
#[derive(Debug, Clone, PartialEq)]
pub struct InstalledHook {
    /// The event it is under (the key of `hooks`).
    pub event: String,
    /// Its matcher group's index under the event, and its own in the group.
    pub group: usize,
    pub index: usize,
    pub matcher: Option<String>,
    pub handler: Value,
}

impl InstalledHook {
    pub fn command(&self) -> &str {
        self.handler
            .get("command")
            .and_then(Value::as_str)
            .unwrap_or("")
    }

    /// The program the command runs (its first shell word, unquoted).
    pub fn program(&self) -> String {
        first_word(self.command()).0
    }
}

/// sjournal's handlers in the settings file at `path` (Claude Code's, Codex's or Gemini CLI's
/// shape), in file order; None if there is no such file.
pub fn read_hooks(path: &Path) -> Result<Option<Vec<InstalledHook>>, InstallError> {
    let d = read_doc(path)?;
    if d.text.is_none() {
        return Ok(None);
    }
    Ok(Some(hooks_in(&d.map)))
}

fn hooks_in(doc: &Map<String, Value>) -> Vec<InstalledHook> {
    let Some(hooks) = doc.get("hooks").and_then(Value::as_object) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (event, groups) in hooks {
        for (gi, group) in groups.as_array().into_iter().flatten().enumerate() {
            let handlers = group.get("hooks").and_then(Value::as_array);
            for (hi, h) in handlers.into_iter().flatten().enumerate() {
                if is_ours(h) {
                    out.push(InstalledHook {
                        event: event.clone(),
                        group: gi,
                        index: hi,
                        matcher: group
                            .get("matcher")
                            .and_then(Value::as_str)
                            .map(str::to_owned),
                        handler: h.clone(),
                    });
                }
            }
        }
    }
    out
}

/// The sjournal binary an installed bridge file runs by default: the TypeScript bridges'
/// `SJOURNAL_DEFAULT`, Cline's hook scripts' `exec` line.
pub fn bridge_binary(text: &str) -> Option<String> {
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("const SJOURNAL_DEFAULT = ") {
            let quoted = rest.split(" //").next().unwrap_or(rest).trim();
            return serde_json::from_str::<String>(quoted).ok();
        }
        if let Some(rest) = line.strip_prefix("exec ") {
            return Some(first_word(rest).0);
        }
    }
    None
}

/// Whether Codex will run a hook.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CodexTrust {
    Trusted,
    /// Trusted once, changed since: skipped until trusted again.
    Modified,
    Untrusted,
    /// Turned off (`enabled = false`).
    Disabled,
}

/// `PreToolUse` -> `pre_tool_use`: Codex's name for an event in trust keys and hashes.
pub fn codex_event_label(event: &str) -> String {
    let mut out = String::new();
    for (i, c) in event.chars().enumerate() {
        if c.is_ascii_uppercase() {
            if i > 0 {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

/// The hash Codex records when the hook is trusted.
pub fn codex_hook_hash(hook: &InstalledHook) -> String {
    let h = &hook.handler;
    let mut handler = Map::new();
    handler.insert("type".into(), Value::String("command".into()));
    handler.insert("command".into(), Value::String(hook.command().to_owned()));
    let timeout = h
        .get("timeout")
        .and_then(Value::as_u64)
        .unwrap_or(600)
        .max(1);
    handler.insert("timeout".into(), Value::from(timeout));
    let is_async = h.get("async").and_then(Value::as_bool).unwrap_or(false);
    handler.insert("async".into(), Value::Bool(is_async));
    if let Some(m) = h.get("statusMessage").and_then(Value::as_str) {
        handler.insert("statusMessage".into(), Value::String(m.to_owned()));
    }
    let mut identity = Map::new();
    identity.insert(
        "event_name".into(),
        Value::String(codex_event_label(&hook.event)),
    );
    if let Some(m) = &hook.matcher {
        identity.insert("matcher".into(), Value::String(m.clone()));
    }
    identity.insert("hooks".into(), Value::Array(vec![Value::Object(handler)]));
    let text = serde_json::to_string(&sorted(Value::Object(identity))).expect("JSON serializes");
    let digest = sha2::Sha256::digest(text.as_bytes());
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    format!("sha256:{hex}")
}

/// `v` with every object's keys in order (serde_json keeps insertion order here).
fn sorted(v: Value) -> Value {
    match v {
        Value::Object(m) => {
            let mut entries: Vec<(String, Value)> = m.into_iter().collect();
            entries.sort_by(|a, b| a.0.cmp(&b.0));
            Value::Object(entries.into_iter().map(|(k, v)| (k, sorted(v))).collect())
        }
        Value::Array(a) => Value::Array(a.into_iter().map(sorted).collect()),
        v => v,
    }
}

/// Codex's trust of each hook of `hooks.json` at `hooks_json`, from the text of
/// `$CODEX_HOME/config.toml` (None: there is none). A config that is not TOML trusts nothing.
pub fn codex_trust(
    hooks_json: &Path,
    hooks: &[InstalledHook],
    config_toml: Option<&str>,
) -> Vec<CodexTrust> {
    let config: toml::Table = config_toml
        .and_then(|t| toml::from_str(t).ok())
        .unwrap_or_default();
    let state = config
        .get("hooks")
        .and_then(|h| h.get("state"))
        .and_then(toml::Value::as_table);
    // Codex names the file by the path it resolved; try it as given and canonical.
    let mut sources = vec![hooks_json.to_path_buf()];
    if let Ok(c) = std::fs::canonicalize(hooks_json) {
        if c != hooks_json {
            sources.push(c);
        }
    }
    hooks
        .iter()
        .map(|h| {
            let entry = sources.iter().find_map(|src| {
                let key = format!(
                    "{}:{}:{}:{}",
                    src.display(),
                    codex_event_label(&h.event),
                    h.group,
                    h.index
                );
                state.and_then(|s| s.get(&key))
            });
            let enabled = entry
                .and_then(|e| e.get("enabled"))
                .and_then(toml::Value::as_bool);
            let trusted = entry
                .and_then(|e| e.get("trusted_hash"))
                .and_then(toml::Value::as_str);
            match (enabled, trusted) {
                (Some(false), _) => CodexTrust::Disabled,
                (_, Some(t)) if t == codex_hook_hash(h) => CodexTrust::Trusted,
                (_, Some(_)) => CodexTrust::Modified,
                (_, None) => CodexTrust::Untrusted,
            }
        })
        .collect()
}

/// Whether Codex loads a project's `.codex/` (its hooks among it): the project, or the
/// repository it is in, is `trust_level = "trusted"` under `[projects]` in config.toml.
pub fn codex_project_trusted(project: &Path, config_toml: Option<&str>) -> bool {
    let config: toml::Table = config_toml
        .and_then(|t| toml::from_str(t).ok())
        .unwrap_or_default();
    let Some(projects) = config.get("projects").and_then(toml::Value::as_table) else {
        return false;
    };
    let canonical = std::fs::canonicalize(project).unwrap_or_else(|_| project.to_path_buf());
    projects.iter().any(|(dir, v)| {
        let trusted = v.get("trust_level").and_then(toml::Value::as_str) == Some("trusted");
        let dir = Path::new(dir);
        trusted && (project.starts_with(dir) || canonical.starts_with(dir))
    })
}

/// Gemini CLI's trust of a folder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FolderTrust {
    /// Trusted, by the rule for this directory (or by the environment).
    Trusted(String),
    /// Distrusted by the rule for this directory (or by the environment).
    Distrusted(String),
    /// No rule covers it: Gemini asks in its UI, and runs no hook until the user trusts it.
    NoRule,
    /// Folder trust is off: every folder is trusted.
    Off,
}

/// Gemini CLI's trust of `dir`: `trusted_folders` is the text of its `trustedFolders.json`
/// (None: none), `folder_trust_enabled` its `security.folderTrust.enabled` (default true),
/// `env` its `GEMINI_CLI_TRUST_WORKSPACE`. Err: the file is not valid JSON (Gemini then stops
/// with an error too).
pub fn gemini_folder_trust(
    dir: &Path,
    trusted_folders: Option<&str>,
    folder_trust_enabled: bool,
    env: Option<&str>,
) -> Result<FolderTrust, String> {
    match env {
        Some("false") => {
            return Ok(FolderTrust::Distrusted(
                "GEMINI_CLI_TRUST_WORKSPACE=false".into(),
            ))
        }
        Some("true") => {
            return Ok(FolderTrust::Trusted(
                "GEMINI_CLI_TRUST_WORKSPACE=true".into(),
            ))
        }
        _ => {}
    }
    if !folder_trust_enabled {
        return Ok(FolderTrust::Off);
    }
    let Some(text) = trusted_folders else {
        return Ok(FolderTrust::NoRule);
    };
    let rules: Map<String, Value> = if text.trim().is_empty() {
        Map::new()
    } else {
        match serde_json::from_str::<Value>(&strip_line_comments(text)) {
            Ok(Value::Object(m)) => m,
            Ok(_) => return Err("not a JSON object".into()),
            Err(e) => return Err(e.to_string()),
        }
    };
    let real = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    let here = real(dir);
    let mut best: Option<(usize, &str, &str)> = None;
    for (rule, level) in &rules {
        let Some(level) = level.as_str() else {
            continue;
        };
        let path = Path::new(rule);
        let effective: PathBuf = match level {
            "TRUST_PARENT" => path.parent().unwrap_or(path).to_path_buf(),
            "TRUST_FOLDER" | "DO_NOT_TRUST" => path.to_path_buf(),
            _ => continue,
        };
        if here.starts_with(real(&effective)) && best.is_none_or(|(len, _, _)| rule.len() > len) {
            best = Some((rule.len(), rule, level));
        }
    }
    Ok(match best {
        None => FolderTrust::NoRule,
        Some((_, rule, "DO_NOT_TRUST")) => FolderTrust::Distrusted(format!("{rule}: DO_NOT_TRUST")),
        Some((_, rule, level)) => FolderTrust::Trusted(format!("{rule}: {level}")),
    })
}

/// `text` without `//` line comments outside strings (Gemini reads the file with comments
/// stripped).
fn strip_line_comments(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for line in text.lines() {
        let mut in_str = false;
        let mut escaped = false;
        let mut cut = line.len();
        let b = line.as_bytes();
        for i in 0..b.len() {
            match b[i] {
                b'\\' if in_str => {
                    escaped = !escaped;
                    continue;
                }
                b'"' if !escaped => in_str = !in_str,
                b'/' if !in_str && b.get(i + 1) == Some(&b'/') => {
                    cut = i;
                    break;
                }
                _ => {}
            }
            escaped = false;
        }
        out.push_str(&line[..cut]);
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hook(event: &str, command: &str, timeout: u64) -> InstalledHook {
        InstalledHook {
            event: event.into(),
            group: 0,
            index: 0,
            matcher: None,
            handler: serde_json::json!({"type": "command", "command": command, "timeout": timeout}),
        }
    }

    /// The hashes Codex 0.171.0's app server reported (`hooks/list`, `currentHash`) for the
    /// hooks `sjournal install codex --command /usr/local/bin/sjournal` writes (what it
    /// records as `trusted_hash` when the user trusts them).
    #[test]
    fn the_codex_hash_is_codexs() {
        let cmd = "/usr/local/bin/sjournal hook --host codex";
        for (event, timeout, hash) in [
            (
                "PreToolUse",
                5,
                "2a6dea6a78cfd005b83090591ea60dcb52d5d8a40bf047f9318ccf894d87867f",
            ),
            (
                "SessionStart",
                10,
                "97a499833fc87daf612d1e8a63fc9940879df51ac4e50540098a0c838e02d257",
            ),
            (
                "SessionEnd",
                3,
                "c2fdc865c6cc2a7d0da36edcdf8d9c1601119e065cdd64fc4d864651e8a02efb",
            ),
            (
                "UserPromptSubmit",
                5,
                "effebbf79c1024d2bf1e5f3040fd7d18c45bebc45a9aa4c415daadd14f1d3bb9",
            ),
            (
                "Stop",
                10,
                "e64cdbe8d7952d605085dc7f2287c73d94bee57ff7377e3c5bb4af17eddbf43e",
            ),
        ] {
            assert_eq!(
                codex_hook_hash(&hook(event, cmd, timeout)),
                format!("sha256:{hash}"),
                "{event}"
            );
        }
        assert_eq!(codex_event_label("UserPromptSubmit"), "user_prompt_submit");
    }

    #[test]
    fn codex_trust_by_key_and_hash() {
        let h = hook("Stop", "sjournal hook --host codex", 10);
        let path = Path::new("/nowhere/.codex/hooks.json");
        let key = "/nowhere/.codex/hooks.json:stop:0:0";
        let with = |state: &str| {
            let toml = format!("[hooks.state.\"{key}\"]\n{state}\n");
            codex_trust(path, std::slice::from_ref(&h), Some(&toml))[0]
        };
        assert_eq!(
            with(&format!("trusted_hash = {:?}", codex_hook_hash(&h))),
            CodexTrust::Trusted
        );
        assert_eq!(with("trusted_hash = \"sha256:00\""), CodexTrust::Modified);
        assert_eq!(with("enabled = false"), CodexTrust::Disabled);
        assert_eq!(
            codex_trust(path, std::slice::from_ref(&h), None)[0],
            CodexTrust::Untrusted
        );
    }

    #[test]
    fn gemini_folder_rules() {
        let d = tempfile::tempdir().unwrap();
        let project = d.path().join("work/project");
        std::fs::create_dir_all(&project).unwrap();
        let rule =
            |r: &Path, level: &str| serde_json::json!({ r.to_str().unwrap(): level }).to_string();
        let t = |text: Option<String>| gemini_folder_trust(&project, text.as_deref(), true, None);
        assert_eq!(t(None).unwrap(), FolderTrust::NoRule);
        assert!(matches!(
            t(Some(rule(&project, "TRUST_FOLDER"))).unwrap(),
            FolderTrust::Trusted(_)
        ));
        // TRUST_PARENT on a sibling trusts its parent, and so everything in it.
        let sibling = d.path().join("work/other");
        assert!(matches!(
            t(Some(rule(&sibling, "TRUST_PARENT"))).unwrap(),
            FolderTrust::Trusted(_)
        ));
        // The longest rule wins.
        let both = serde_json::json!({
            d.path().join("work").to_str().unwrap(): "TRUST_FOLDER",
            project.to_str().unwrap(): "DO_NOT_TRUST",
        })
        .to_string();
        assert!(matches!(t(Some(both)).unwrap(), FolderTrust::Distrusted(_)));
        assert_eq!(
            gemini_folder_trust(&project, None, false, None).unwrap(),
            FolderTrust::Off
        );
        assert!(t(Some("{oops".into())).is_err());
        let commented = format!("// mine\n{}", rule(&project, "TRUST_FOLDER"));
        assert!(matches!(
            t(Some(commented)).unwrap(),
            FolderTrust::Trusted(_)
        ));
    }

    #[test]
    fn the_binary_a_bridge_runs() {
        let ts =
            "x\nconst SJOURNAL_DEFAULT = \"/opt/my tools/sjournal\" // sjournal-install: binary\n";
        assert_eq!(bridge_binary(ts).as_deref(), Some("/opt/my tools/sjournal"));
        let sh = "#!/bin/sh\n# m\nexec '/opt/my tools/sjournal' hook --host cline\n";
        assert_eq!(bridge_binary(sh).as_deref(), Some("/opt/my tools/sjournal"));
        assert_eq!(bridge_binary("nothing"), None);
    }
}
