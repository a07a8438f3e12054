//! Installers, through the built binary, on configuration files that already hold other
//! tools' hooks and unrelated settings: `install` adds sjournal's hooks for every event it
//! handles, keeps everything else (values and key order), and backs the old file up;
//! a second `install` changes nothing; `--dry-run` prints a diff and writes nothing;
//! `uninstall` removes exactly sjournal's handlers, giving back the original document; a file
//! that is not valid JSON is refused and left alone; a settings file kept as a symlink is
//! edited at its target, a dangling one refused (never replaced by a file); installs run at
//! once all succeed, each with its own backup, and leave valid settings. HOME is a temporary
//! directory. (A FIFO as the settings file: `tests/security/fifo.rs`.)

use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::Value;

fn cli(home: &Path, args: &[&str]) -> Output {
    let mut cmd = assert_cmd::Command::cargo_bin("sjournal").unwrap();
    cmd.args(args)
        .env("HOME", home)
        .env_remove("SJOURNAL_HOME")
        .env_remove("CODEX_HOME")
        .env_remove("CLAUDE_CONFIG_DIR");
    // Where the hosts' MCP settings are found: under HOME only.
    for k in [
        "XDG_CONFIG_HOME",
        "PI_CODING_AGENT_DIR",
        "OPENCLAW_STATE_DIR",
        "OPENCLAW_CONFIG_PATH",
        "CLINE_DIR",
        "CLINE_DATA_DIR",
        "CLINE_MCP_SETTINGS_PATH",
    ] {
        cmd.env_remove(k);
    }
    cmd.output().unwrap()
}

const CLAUDE_SETTINGS: &str = r#"{
  "model": "opus",
  "permissions": {"allow": ["Bash(ls:*)"]},
  "hooks": {
    "PostToolUse": [
      {"matcher": "Write|Edit", "hooks": [{"type": "command", "command": "prettier --write", "timeout": 30}]}
    ],
    "Stop": [
      {"hooks": [{"type": "command", "command": "notify-send done"}]}
    ]
  },
  "statusLine": {"type": "command", "command": "~/bin/status"}
}
"#;

const GEMINI_SETTINGS: &str = r#"{
  "theme": "GitHub",
  "hooks": {
    "BeforeTool": [
      {"matcher": "run_shell_command", "hooks": [{"type": "command", "command": "./guard.sh", "timeout": 2000}]}
    ]
  }
}
"#;

const CODEX_HOOKS: &str = r#"{
  "hooks": {
    "SessionStart": [
      {"matcher": "startup", "hooks": [{"type": "command", "command": "python3 .codex/hooks/start.py", "timeout": 30}]}
    ]
  }
}
"#;

fn read_json(p: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}

fn ours(v: &Value) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for (event, groups) in v["hooks"].as_object().unwrap() {
        for g in groups.as_array().unwrap() {
            for h in g["hooks"].as_array().unwrap() {
                let c = h["command"].as_str().unwrap();
                if c.contains(" hook --host ") {
                    out.push((event.clone(), c.to_owned()));
                }
            }
        }
    }
    out
}

/// Backups of `file`, in its directory.
fn backups(file: &Path) -> Vec<PathBuf> {
    let prefix = format!(
        "{}.sjournal-backup-",
        file.file_name().unwrap().to_string_lossy()
    );
    std::fs::read_dir(file.parent().unwrap())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with(&prefix)
        })
        .collect()
}

/// Installs into `file` (already holding `original`), checks, reinstalls, uninstalls.
fn round_trip(
    host: &str,
    scope_args: &[&str],
    home: &Path,
    file: &Path,
    original: &str,
    events: &[&str],
) {
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(file, original).unwrap();
    let args = |verb: &str, extra: &[&str]| -> Vec<String> {
        let mut a = vec![verb.to_owned(), host.to_owned()];
        a.extend(scope_args.iter().map(|s| s.to_string()));
        a.extend(extra.iter().map(|s| s.to_string()));
        a
    };
    let run = |verb: &str, extra: &[&str]| {
        let a = args(verb, extra);
        let a: Vec<&str> = a.iter().map(String::as_str).collect();
        let out = cli(home, &a);
        assert!(out.status.success(), "{a:?}: {out:?}");
        String::from_utf8(out.stdout).unwrap()
    };

    // Dry run: a diff, nothing written. (The hooks alone: the MCP server's registration has
    // its own tests below.)
    let diff = run(
        "install",
        &["--no-mcp", "--dry-run", "--command", "/opt/bin/sjournal"],
    );
    assert!(diff.contains("+") && diff.contains("hook --host"), "{diff}");
    assert_eq!(std::fs::read_to_string(file).unwrap(), original);
    assert!(backups(file).is_empty());

    run("install", &["--no-mcp", "--command", "/opt/bin/sjournal"]);
    let after = read_json(file);
    let orig: Value = serde_json::from_str(original).unwrap();
    // Unrelated settings kept, in their order; other hooks kept in place, first.
    let keys = |v: &Value| v.as_object().unwrap().keys().cloned().collect::<Vec<_>>();
    assert_eq!(keys(&after)[..keys(&orig).len()], keys(&orig)[..]);
    for (event, groups) in orig["hooks"].as_object().unwrap() {
        let now = after["hooks"][event].as_array().unwrap();
        assert_eq!(
            &now[..groups.as_array().unwrap().len()],
            groups.as_array().unwrap().as_slice()
        );
    }
    let installed = ours(&after);
    let mut got: Vec<&str> = installed.iter().map(|(e, _)| e.as_str()).collect();
    got.sort();
    let mut want = events.to_vec();
    want.sort();
    assert_eq!(got, want);
    assert!(installed
        .iter()
        .all(|(_, c)| c.starts_with("/opt/bin/sjournal hook --host ")));
    let b = backups(file);
    assert_eq!(b.len(), 1);
    assert_eq!(std::fs::read_to_string(&b[0]).unwrap(), original);

    // Idempotent.
    let again = run("install", &["--no-mcp", "--command", "/opt/bin/sjournal"]);
    assert!(again.contains("nothing to change"), "{again}");
    assert_eq!(read_json(file), after);
    assert_eq!(backups(file).len(), 1);

    // Installed from elsewhere: updated in place, not duplicated.
    run(
        "install",
        &["--no-mcp", "--command", "'/other dir/sjournal'"],
    );
    let moved = ours(&read_json(file));
    assert_eq!(moved.len(), events.len());
    assert!(moved
        .iter()
        .all(|(_, c)| c.starts_with("'/other dir/sjournal' hook")));

    // Reversible: exactly the original document again.
    run("uninstall", &[]);
    assert_eq!(read_json(file), orig);
    let again = run("uninstall", &[]);
    assert!(again.contains("nothing to change"), "{again}");
}

#[test]
fn claude_code_every_scope() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let events = [
        "SessionStart",
        // Memory leaves out what the instruction files it names already say.
        "InstructionsLoaded",
        "UserPromptSubmit",
        "PreToolUse",
        "PostToolUse",
        "PostToolUseFailure",
        "PreCompact",
        "PostCompact",
        "SubagentStart",
        "SubagentStop",
        "Stop",
        "Notification",
        "SessionEnd",
    ];
    round_trip(
        "claude-code",
        &[],
        home.path(),
        &home.path().join(".claude/settings.json"),
        CLAUDE_SETTINGS,
        &events,
    );
    let p = project.path().to_str().unwrap();
    round_trip(
        "claude-code",
        &["--scope", "project", "--project-dir", p],
        home.path(),
        &project.path().join(".claude/settings.json"),
        CLAUDE_SETTINGS,
        &events,
    );
    round_trip(
        "claude-code",
        &["--scope", "local", "--project-dir", p],
        home.path(),
        &project.path().join(".claude/settings.local.json"),
        CLAUDE_SETTINGS,
        &events,
    );
}

#[test]
fn codex_and_gemini() {
    let home = tempfile::tempdir().unwrap();
    round_trip(
        "codex",
        &[],
        home.path(),
        &home.path().join(".codex/hooks.json"),
        CODEX_HOOKS,
        &[
            "SessionStart",
            "UserPromptSubmit",
            "PreToolUse",
            "PostToolUse",
            "PreCompact",
            "PostCompact",
            "SubagentStart",
            "SubagentStop",
            "Stop",
            // Real Codex 0.171.0 fires it (`tests/real_hosts/codex.rs`).
            "SessionEnd",
        ],
    );
    round_trip(
        "gemini",
        &[],
        home.path(),
        &home.path().join(".gemini/settings.json"),
        GEMINI_SETTINGS,
        &[
            "SessionStart",
            "BeforeAgent",
            // The only event that names the model.
            "BeforeModel",
            "BeforeTool",
            "AfterTool",
            "AfterAgent",
            "PreCompress",
            "Notification",
            "SessionEnd",
        ],
    );
    // Gemini timeouts are milliseconds.
    let out = cli(home.path(), &["install", "gemini", "--command", "sjournal"]);
    assert!(out.status.success());
    let v = read_json(&home.path().join(".gemini/settings.json"));
    assert_eq!(v["hooks"]["SessionStart"][0]["hooks"][0]["timeout"], 10_000);
}

/// Codex reads its user hooks from `$CODEX_HOME/hooks.json` when `CODEX_HOME` is set:
/// `install codex` writes them there (not to `~/.codex/`), `uninstall codex` removes them
/// from there. A relative `CODEX_HOME` is taken from the working directory, as Codex does.
#[test]
fn codex_hooks_go_where_codex_home_says() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    std::fs::create_dir(&home).unwrap();
    let run = |codex_home: &str, args: &[&str]| {
        let mut cmd = assert_cmd::Command::cargo_bin("sjournal").unwrap();
        cmd.args(args)
            .current_dir(dir.path())
            .env("HOME", &home)
            .env("CODEX_HOME", codex_home)
            .env_remove("SJOURNAL_HOME");
        let out = cmd.output().unwrap();
        assert!(out.status.success(), "{args:?}: {out:?}");
        String::from_utf8(out.stdout).unwrap()
    };
    for (codex_home, file) in [
        (
            dir.path().join("codex-home").display().to_string(),
            dir.path().join("codex-home/hooks.json"),
        ),
        (
            "relative/codex".to_owned(),
            dir.path().join("relative/codex/hooks.json"),
        ),
    ] {
        let said = run(&codex_home, &["install", "codex", "--command", "sjournal"]);
        assert!(said.contains(&file.display().to_string()), "{said}");
        assert_eq!(ours(&read_json(&file)).len(), 10, "{}", file.display());
        assert!(
            !home.join(".codex").exists(),
            "nothing written to ~/.codex when CODEX_HOME is set"
        );
        run(&codex_home, &["uninstall", "codex"]);
        assert_eq!(
            read_json(&file),
            serde_json::json!({}),
            "{}",
            file.display()
        );
    }
    // Unset or empty: ~/.codex.
    let out = cli(&home, &["install", "codex", "--command", "sjournal"]);
    assert!(out.status.success(), "{out:?}");
    assert_eq!(ours(&read_json(&home.join(".codex/hooks.json"))).len(), 10);
    run("", &["uninstall", "codex"]);
    assert_eq!(
        read_json(&home.join(".codex/hooks.json")),
        serde_json::json!({})
    );
}

/// Gemini CLI keeps its MCP servers in the settings file its hooks are in: `install gemini`
/// writes both at once, with one backup of the file as it was.
#[cfg(feature = "search")]
#[test]
fn gemini_hooks_and_mcp_server_are_one_write_with_one_backup() {
    let home = tempfile::tempdir().unwrap();
    let file = home.path().join(".gemini/settings.json");
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(&file, GEMINI_SETTINGS).unwrap();
    let out = cli(
        home.path(),
        &["install", "gemini", "--command", "/opt/bin/sjournal"],
    );
    assert!(out.status.success(), "{out:?}");
    let said = String::from_utf8(out.stdout).unwrap();
    assert!(said.contains("sjournal MCP server registered"), "{said}");
    // Gemini runs hooks only in a trusted folder: the one write still says so.
    assert!(said.contains("trusted folder"), "{said}");
    let v = read_json(&file);
    assert_eq!(ours(&v).len(), 9, "{v}");
    assert_eq!(
        v["mcpServers"]["sjournal"],
        serde_json::json!({"command": "/opt/bin/sjournal", "args": ["mcp"]})
    );
    let b = backups(&file);
    assert_eq!(b.len(), 1, "{b:?}");
    assert_eq!(std::fs::read_to_string(&b[0]).unwrap(), GEMINI_SETTINGS);
    // Again: nothing to change, nothing written.
    let out = cli(
        home.path(),
        &["install", "gemini", "--command", "/opt/bin/sjournal"],
    );
    let said = String::from_utf8(out.stdout).unwrap();
    assert!(
        said.contains("sjournal MCP server already registered"),
        "{said}"
    );
    assert_eq!(backups(&file).len(), 1);
}

/// Claude Code reads its user settings and its `.claude.json` (the MCP servers) from
/// `$CLAUDE_CONFIG_DIR` when it is set: `install claude-code` writes both there, nothing under
/// HOME, and `uninstall` removes them from there.
#[test]
fn claude_code_follows_claude_config_dir() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    std::fs::create_dir(&home).unwrap();
    let config = dir.path().join("claude-config");
    let run = |args: &[&str]| {
        let mut cmd = assert_cmd::Command::cargo_bin("sjournal").unwrap();
        cmd.args(args)
            .env("HOME", &home)
            .env("CLAUDE_CONFIG_DIR", &config)
            .env_remove("SJOURNAL_HOME");
        let out = cmd.output().unwrap();
        assert!(out.status.success(), "{args:?}: {out:?}");
        String::from_utf8(out.stdout).unwrap()
    };
    let settings = config.join("settings.json");
    let state = config.join(".claude.json");
    let said = run(&["install", "claude-code", "--command", "/opt/bin/sjournal"]);
    assert!(said.contains(&settings.display().to_string()), "{said}");
    assert!(!ours(&read_json(&settings)).is_empty());
    assert_eq!(
        read_json(&state)["mcpServers"]["sjournal"]["command"],
        serde_json::json!("/opt/bin/sjournal")
    );
    assert!(!home.join(".claude").exists() && !home.join(".claude.json").exists());
    run(&["uninstall", "claude-code"]);
    assert_eq!(read_json(&settings), serde_json::json!({}));
    assert!(
        read_json(&state).get("mcpServers").is_none(),
        "{}",
        read_json(&state)
    );
}

#[test]
fn a_missing_file_is_created_and_removed_hooks_leave_it_empty() {
    let home = tempfile::tempdir().unwrap();
    let file = home.path().join(".claude/settings.json");
    let out = cli(
        home.path(),
        &["install", "claude-code", "--command", "sjournal"],
    );
    assert!(out.status.success(), "{out:?}");
    assert_eq!(ours(&read_json(&file)).len(), 13);
    assert!(backups(&file).is_empty(), "nothing to back up");
    let out = cli(home.path(), &["uninstall", "claude-code"]);
    assert!(out.status.success());
    assert_eq!(read_json(&file), serde_json::json!({}));
}

#[test]
fn invalid_json_is_refused_and_left_alone() {
    let home = tempfile::tempdir().unwrap();
    let file = home.path().join(".claude/settings.json");
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(&file, "{ \"model\": \"opus\", // comment\n}").unwrap();
    let out = cli(home.path(), &["install", "claude-code"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("not valid JSON"),
        "{out:?}"
    );
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        "{ \"model\": \"opus\", // comment\n}"
    );
    let out = cli(home.path(), &["install", "codex", "--scope", "local"]);
    assert_eq!(out.status.code(), Some(2));
}

/// A settings file kept in dotfiles is a symlink: edited at its target, the link kept. A link
/// whose target does not exist is refused (exit 2, saying what to do), never replaced by a
/// regular file (which would silently fork the user's settings from their dotfiles).
#[test]
fn a_symlinked_settings_file_is_edited_at_its_target_and_a_dangling_one_refused() {
    use std::os::unix::fs::symlink;
    let home = tempfile::tempdir().unwrap();
    let link = home.path().join(".claude/settings.json");
    let target = home.path().join("dotfiles/claude-settings.json");
    std::fs::create_dir_all(link.parent().unwrap()).unwrap();
    std::fs::create_dir_all(target.parent().unwrap()).unwrap();
    symlink(&target, &link).unwrap();

    let out = cli(home.path(), &["install", "claude-code"]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("symbolic link") && err.contains("does not exist"),
        "{err}"
    );
    assert!(
        std::fs::symlink_metadata(&link).unwrap().is_symlink(),
        "the link is kept"
    );
    assert!(!target.exists(), "nothing was created");

    std::fs::write(&target, CLAUDE_SETTINGS).unwrap();
    let out = cli(
        home.path(),
        &["install", "claude-code", "--command", "/opt/bin/sjournal"],
    );
    assert!(out.status.success(), "{out:?}");
    assert!(
        std::fs::symlink_metadata(&link).unwrap().is_symlink(),
        "the link is kept"
    );
    assert!(
        !ours(&read_json(&target)).is_empty(),
        "the target was edited"
    );
}

/// Installs run at once (each from another path, so each changes the file): every run
/// succeeds, each one that wrote kept its own backup (created exclusively: two runs in the
/// same second never fight over one name), and the settings end valid, with the other
/// tools' hooks and settings intact and exactly one set of sjournal's hooks.
#[test]
fn concurrent_installs_both_succeed_and_never_corrupt_the_settings() {
    let home = tempfile::tempdir().unwrap();
    let file = home.path().join(".claude/settings.json");
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(&file, CLAUDE_SETTINGS).unwrap();
    let runs: Vec<std::process::Child> = (0..8)
        .map(|i| {
            std::process::Command::new(assert_cmd::cargo::cargo_bin("sjournal"))
                .args(["install", "claude-code", "--command"])
                .arg(format!("/opt/bin{i}/sjournal"))
                .env("HOME", home.path())
                .env_remove("SJOURNAL_HOME")
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    let mut wrote = 0;
    for r in runs {
        let out = r.wait_with_output().unwrap();
        assert!(out.status.success(), "{out:?}");
        if String::from_utf8_lossy(&out.stdout).contains("previous version kept as") {
            wrote += 1;
        }
    }
    let after = read_json(&file);
    let orig: Value = serde_json::from_str(CLAUDE_SETTINGS).unwrap();
    for key in ["model", "permissions", "statusLine"] {
        assert_eq!(after[key], orig[key], "{key}");
    }
    assert!(after["hooks"]["Stop"]
        .to_string()
        .contains("notify-send done"));
    let installed = ours(&after);
    assert_eq!(
        installed.len(),
        13,
        "one set of sjournal's hooks: {installed:?}"
    );
    let command = installed[0].1.split(" hook").next().unwrap().to_owned();
    assert!(
        installed.iter().all(|(_, c)| c.starts_with(&command)),
        "{installed:?}"
    );
    let b = backups(&file);
    assert_eq!(b.len(), wrote, "one backup per run that wrote: {b:?}");
    for p in &b {
        serde_json::from_str::<Value>(&std::fs::read_to_string(p).unwrap()).unwrap();
    }
}

/// Claude Code's MCP registration (`claude mcp add --scope user|project|local` does the same):
/// `sjournal mcp` under `mcpServers.sjournal` in ~/.claude.json (user), <project>/.mcp.json
/// (project), or ~/.claude.json's entry of the project (local); everything else kept;
/// idempotent; removed by `uninstall`, giving back the original document; with `--no-mcp`
/// none is written; another server of that name is refused and left alone; and the registered command
/// line starts a server that answers MCP's `initialize`.
#[cfg(feature = "search")]
#[test]
fn claude_code_registers_the_mcp_server_in_every_scope() {
    use serde_json::json;
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let p = std::fs::canonicalize(project.path()).unwrap();
    let ps = p.to_str().unwrap();
    let user_file = home.path().join(".claude.json");
    let original = json!({
        "numStartups": 3,
        "mcpServers": {"other": {"type": "stdio", "command": "other-server", "args": []}},
        "projects": {ps: {"allowedTools": [], "mcpServers": {}}},
    });
    std::fs::write(&user_file, serde_json::to_string_pretty(&original).unwrap()).unwrap();
    let ok = |args: &[&str]| {
        let out = cli(home.path(), args);
        assert!(out.status.success(), "{args:?}: {out:?}");
        String::from_utf8(out.stdout).unwrap()
    };
    let want = json!({"type": "stdio", "command": "/opt/bin/sjournal", "args": ["mcp"], "env": {}});

    // With --no-mcp: hooks only.
    ok(&[
        "install",
        "claude-code",
        "--no-mcp",
        "--command",
        "/opt/bin/sjournal",
    ]);
    assert_eq!(read_json(&user_file), original);
    ok(&["uninstall", "claude-code"]);

    // User scope.
    let said = ok(&[
        "install",
        "claude-code",
        "--mcp",
        "--command",
        "/opt/bin/sjournal",
    ]);
    assert!(said.contains("sjournal MCP server registered"), "{said}");
    let after = read_json(&user_file);
    assert_eq!(after["mcpServers"]["sjournal"], want);
    assert_eq!(
        after["mcpServers"]["other"],
        original["mcpServers"]["other"]
    );
    assert_eq!(after["projects"], original["projects"]);
    let text = std::fs::read_to_string(&user_file).unwrap();
    let said = ok(&[
        "install",
        "claude-code",
        "--mcp",
        "--command",
        "/opt/bin/sjournal",
    ]);
    assert!(
        said.contains("sjournal MCP server already registered"),
        "{said}"
    );
    assert_eq!(std::fs::read_to_string(&user_file).unwrap(), text);
    ok(&["uninstall", "claude-code"]);
    assert_eq!(read_json(&user_file), original);

    // Project scope: <project>/.mcp.json, created, then emptied.
    let scope = ["--scope", "project", "--project-dir", ps];
    let mut args = vec![
        "install",
        "claude-code",
        "--mcp",
        "--command",
        "/opt/bin/sjournal --root /r",
    ];
    args.extend(scope);
    ok(&args);
    let mcp_json = p.join(".mcp.json");
    assert_eq!(
        read_json(&mcp_json),
        json!({"mcpServers": {"sjournal": {"type": "stdio", "command": "/opt/bin/sjournal",
            "args": ["--root", "/r", "mcp"], "env": {}}}})
    );
    assert_eq!(read_json(&user_file), original);
    let mut args = vec!["uninstall", "claude-code"];
    args.extend(scope);
    ok(&args);
    assert_eq!(read_json(&mcp_json), json!({}));

    // Local scope: the project's entry in ~/.claude.json.
    let scope = ["--scope", "local", "--project-dir", ps];
    let mut args = vec![
        "install",
        "claude-code",
        "--mcp",
        "--command",
        "/opt/bin/sjournal",
    ];
    args.extend(scope);
    ok(&args);
    let after = read_json(&user_file);
    assert_eq!(after["projects"][ps]["mcpServers"]["sjournal"], want);
    assert_eq!(after["projects"][ps]["allowedTools"], json!([]));
    assert!(after["mcpServers"].get("sjournal").is_none());
    let mut args = vec!["uninstall", "claude-code"];
    args.extend(scope);
    ok(&args);
    let mut back = original.clone();
    back["projects"][ps]
        .as_object_mut()
        .unwrap()
        .remove("mcpServers");
    assert_eq!(read_json(&user_file), back);
    std::fs::write(&user_file, serde_json::to_string_pretty(&original).unwrap()).unwrap();

    // Someone else's server named sjournal: refused (a note), nothing written.
    let mut foreign = original.clone();
    foreign["mcpServers"]["sjournal"] = json!({"type": "http", "url": "http://example.invalid"});
    let foreign_text = serde_json::to_string_pretty(&foreign).unwrap();
    std::fs::write(&user_file, &foreign_text).unwrap();
    let out = cli(
        home.path(),
        &[
            "install",
            "claude-code",
            "--mcp",
            "--command",
            "/opt/bin/sjournal",
        ],
    );
    // The hooks are installed; the MCP server is a note saying why it was not registered.
    assert!(out.status.success(), "{out:?}");
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        said.contains("does not run sjournal") && said.contains("was not registered"),
        "{out:?}"
    );
    assert_eq!(std::fs::read_to_string(&user_file).unwrap(), foreign_text);
    ok(&["uninstall", "claude-code"]);
    assert_eq!(read_json(&user_file), foreign, "not ours: not removed");
    std::fs::write(&user_file, serde_json::to_string_pretty(&original).unwrap()).unwrap();

    // What Claude Code runs: the entry's command and args start a server that answers.
    let bin = assert_cmd::cargo::cargo_bin("sjournal");
    let root = home.path().join("root");
    let line = format!("{} --root {}", bin.display(), root.display());
    ok(&["install", "claude-code", "--mcp", "--command", &line]);
    let entry = read_json(&user_file)["mcpServers"]["sjournal"].clone();
    let args: Vec<String> = entry["args"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap().to_owned())
        .collect();
    let mut child = std::process::Command::new(entry["command"].as_str().unwrap())
        .args(&args)
        .current_dir(&p)
        .env("HOME", home.path())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    {
        use std::io::{BufRead, Write};
        let mut to = child.stdin.take().unwrap();
        let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "t", "version": "0"}}});
        writeln!(to, "{init}").unwrap();
        to.flush().unwrap();
        let mut line = String::new();
        std::io::BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let v: Value = serde_json::from_str(&line).unwrap();
        assert_eq!(v["result"]["serverInfo"]["name"], "sjournal", "{line}");
    }
    assert!(child.wait().unwrap().success());
}

/// Every other host's MCP registration, made by a plain `install <host>` (default on): the
/// entry in the host's own shape where the host reads MCP servers; the user's other servers
/// and settings kept; a second install leaves the file byte for byte as it was; `uninstall`
/// gives back the original document (Codex's TOML: the original text, comments included);
/// `--no-mcp` registers nothing; a project-scope install of a host that reads MCP servers
/// only from the user's configuration registers nothing and says so.
#[cfg(feature = "search")]
#[test]
fn every_host_registers_the_mcp_server_by_default_and_uninstall_restores() {
    use serde_json::json;
    let other = json!({"command": "other-server", "args": ["--x"]});
    // host, file under HOME, the original text, the JSON path of the servers, the entry.
    let cases: Vec<(&str, &str, String, Vec<&str>, Value)> = vec![
        (
            "claude-code",
            ".claude.json",
            json!({"numStartups": 2, "mcpServers": {"other": other}}).to_string(),
            vec!["mcpServers"],
            json!({"type": "stdio", "command": "/opt/bin/sjournal", "args": ["mcp"], "env": {}}),
        ),
        (
            "gemini",
            ".gemini/settings.json",
            json!({"theme": "GitHub", "mcpServers": {"other": other}}).to_string(),
            vec!["mcpServers"],
            json!({"command": "/opt/bin/sjournal", "args": ["mcp"]}),
        ),
        (
            "opencode",
            ".config/opencode/opencode.json",
            json!({"model": "a/b", "mcp": {"other": {"type": "local", "command": ["o"]}}})
                .to_string(),
            vec!["mcp"],
            json!({"type": "local", "command": ["/opt/bin/sjournal", "mcp"], "enabled": true}),
        ),
        (
            "pi",
            ".pi/agent/mcp.json",
            json!({"mcpServers": {"other": other}}).to_string(),
            vec!["mcpServers"],
            json!({"command": "/opt/bin/sjournal", "args": ["mcp"]}),
        ),
        (
            "openclaw",
            ".openclaw/openclaw.json",
            json!({"agents": {"defaults": {}}, "mcp": {"servers": {"other": other}}}).to_string(),
            vec!["mcp", "servers"],
            json!({"command": "/opt/bin/sjournal", "args": ["mcp"]}),
        ),
        (
            "cline",
            ".cline/data/settings/cline_mcp_settings.json",
            json!({"mcpServers": {"other": other}}).to_string(),
            vec!["mcpServers"],
            json!({"type": "stdio", "command": "/opt/bin/sjournal", "args": ["mcp"],
                "disabled": false}),
        ),
    ];
    for (host, file, original, keys, want) in cases {
        let home = tempfile::tempdir().unwrap();
        let path = home.path().join(file);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, &original).unwrap();
        let orig: Value = serde_json::from_str(&original).unwrap();
        let ok = |args: &[&str]| {
            let out = cli(home.path(), args);
            assert!(out.status.success(), "{host} {args:?}: {out:?}");
            String::from_utf8(out.stdout).unwrap()
        };
        let at = |v: &Value| keys.iter().fold(v.clone(), |v, k| v[*k].clone());

        // --no-mcp: nothing registered.
        ok(&[
            "install",
            host,
            "--no-mcp",
            "--command",
            "/opt/bin/sjournal",
        ]);
        assert_eq!(at(&read_json(&path)), at(&orig), "{host}");
        ok(&["uninstall", host]);

        let said = ok(&["install", host, "--command", "/opt/bin/sjournal"]);
        assert!(
            said.contains("sjournal MCP server registered"),
            "{host}: {said}"
        );
        let after = read_json(&path);
        assert_eq!(at(&after)["sjournal"], want, "{host}: {after}");
        assert_eq!(at(&after)["other"], at(&orig)["other"], "{host}");
        let text = std::fs::read_to_string(&path).unwrap();
        let said = ok(&["install", host, "--command", "/opt/bin/sjournal"]);
        assert!(
            said.contains("sjournal MCP server already registered"),
            "{host}: {said}"
        );
        assert_eq!(std::fs::read_to_string(&path).unwrap(), text, "{host}");
        // `--mcp`, the old opt-in, is accepted and changes nothing.
        ok(&["install", host, "--mcp", "--command", "/opt/bin/sjournal"]);
        assert_eq!(std::fs::read_to_string(&path).unwrap(), text, "{host}");
        ok(&["uninstall", host]);
        assert_eq!(read_json(&path), orig, "{host}");
    }

    // Cline and OpenClaw read MCP servers from the user's configuration only.
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let p = project.path().to_str().unwrap();
    let said = ok_in(
        home.path(),
        &["install", "cline", "--scope", "project", "--project-dir", p],
    );
    assert!(
        said.contains("reads MCP servers from the user's configuration only"),
        "{said}"
    );
    assert!(!home.path().join(".cline").exists());

    // Project scope where the host has it: Pi's <project>/.pi/mcp.json, created and emptied.
    ok_in(
        home.path(),
        &[
            "install",
            "pi",
            "--scope",
            "project",
            "--project-dir",
            p,
            "--command",
            "/opt/bin/sjournal",
        ],
    );
    let mcp = project.path().join(".pi/mcp.json");
    assert_eq!(
        read_json(&mcp),
        json!({"mcpServers": {"sjournal": {"command": "/opt/bin/sjournal", "args": ["mcp"]}}})
    );
    ok_in(
        home.path(),
        &["uninstall", "pi", "--scope", "project", "--project-dir", p],
    );
    assert_eq!(read_json(&mcp), json!({}));
}

/// Codex's `config.toml`: `[mcp_servers.sjournal]` added beside the user's other servers, comments
/// and layout kept; a second install writes nothing; `uninstall` gives back the original text
/// byte for byte; `--no-mcp` registers nothing; someone else's
/// `sjournal` server is refused and left alone.
#[cfg(feature = "search")]
#[test]
fn codex_registers_the_mcp_server_in_config_toml() {
    let home = tempfile::tempdir().unwrap();
    let file = home.path().join(".codex/config.toml");
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    let original = "# my settings\nmodel = \"gpt-5\"   # pinned\n\n[mcp_servers.other]\n\
                    command = \"other-server\"\nargs = [\"--x\"]\n\n[projects.\"/p\"]\n\
                    trust_level = \"trusted\"\n";
    std::fs::write(&file, original).unwrap();
    ok_in(
        home.path(),
        &[
            "install",
            "codex",
            "--no-mcp",
            "--command",
            "/opt/bin/sjournal",
        ],
    );
    assert_eq!(std::fs::read_to_string(&file).unwrap(), original);

    let said = ok_in(
        home.path(),
        &[
            "install",
            "codex",
            "--command",
            "/opt/bin/sjournal --root /r",
        ],
    );
    assert!(said.contains("sjournal MCP server registered"), "{said}");
    let text = std::fs::read_to_string(&file).unwrap();
    // Beside the user's other servers; every line of the user's kept.
    assert!(original.lines().all(|l| text.contains(l)), "{text}");
    let v: toml::Table = toml::from_str(&text).unwrap();
    assert_eq!(
        v["mcp_servers"]["sjournal"]["command"].as_str(),
        Some("/opt/bin/sjournal")
    );
    let args: Vec<&str> = v["mcp_servers"]["sjournal"]["args"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect();
    assert_eq!(args, ["--root", "/r", "mcp"]);
    assert_eq!(
        v["mcp_servers"]["other"]["command"].as_str(),
        Some("other-server")
    );
    ok_in(
        home.path(),
        &[
            "install",
            "codex",
            "--command",
            "/opt/bin/sjournal --root /r",
        ],
    );
    assert_eq!(std::fs::read_to_string(&file).unwrap(), text);
    ok_in(home.path(), &["uninstall", "codex"]);
    assert_eq!(std::fs::read_to_string(&file).unwrap(), original);

    // A file without MCP servers: the table is added, then removed with no trace.
    std::fs::write(&file, "model = \"m\"\n").unwrap();
    ok_in(
        home.path(),
        &["install", "codex", "--command", "/opt/bin/sjournal"],
    );
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(
        text.contains("[mcp_servers.sjournal]") && !text.contains("[mcp_servers]\n"),
        "{text}"
    );
    ok_in(home.path(), &["uninstall", "codex"]);
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "model = \"m\"\n");

    // Someone else's server named sjournal: refused (a note), nothing written, not removed.
    let foreign = "[mcp_servers.sjournal]\ncommand = \"npx\"\nargs = [\"sjournal-mcp\"]\n";
    std::fs::write(&file, foreign).unwrap();
    let out = cli(
        home.path(),
        &["install", "codex", "--command", "/opt/bin/sjournal"],
    );
    // The hooks are installed; the MCP server is a note saying why it was not registered.
    assert!(out.status.success(), "{out:?}");
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        said.contains("does not run sjournal") && said.contains("was not registered"),
        "{out:?}"
    );
    ok_in(home.path(), &["uninstall", "codex"]);
    assert_eq!(std::fs::read_to_string(&file).unwrap(), foreign);
}

#[cfg(feature = "search")]
fn ok_in(home: &Path, args: &[&str]) -> String {
    let out = cli(home, args);
    assert!(out.status.success(), "{args:?}: {out:?}");
    String::from_utf8(out.stdout).unwrap()
}

/// An MCP entry of sjournal's that the user turned off or extended stays as the user left it
/// when `install` runs again (an upgrade, a new `--command`): only what runs the server
/// (`command`, `args`) is sjournal's; `disabled`/`enabled`, `env` and timeouts are the user's.
#[cfg(feature = "search")]
#[test]
fn install_again_keeps_what_the_user_set_on_sjournals_mcp_entry() {
    use serde_json::json;
    let home = tempfile::tempdir().unwrap();
    let cline = home
        .path()
        .join(".cline/data/settings/cline_mcp_settings.json");
    let opencode = home.path().join(".config/opencode/opencode.json");
    let codex = home.path().join(".codex/config.toml");
    for f in [&cline, &opencode, &codex] {
        std::fs::create_dir_all(f.parent().unwrap()).unwrap();
    }
    std::fs::write(
        &cline,
        json!({"mcpServers": {"sjournal": {"type": "stdio", "command": "/old/sjournal",
            "args": ["mcp"], "disabled": true, "autoApprove": ["search"], "timeout": 30}}})
        .to_string(),
    )
    .unwrap();
    std::fs::write(
        &opencode,
        json!({"mcp": {"sjournal": {"type": "local", "command": ["/old/sjournal", "mcp"],
            "enabled": false, "environment": {"A": "1"}}}})
        .to_string(),
    )
    .unwrap();
    std::fs::write(
        &codex,
        "[mcp_servers.sjournal]\ncommand = \"/old/sjournal\"\nargs = [\"mcp\"]\nenabled = false\n\
         startup_timeout_sec = 20\n",
    )
    .unwrap();
    for host in ["cline", "opencode", "codex"] {
        ok_in(
            home.path(),
            &["install", host, "--command", "/opt/bin/sjournal"],
        );
    }
    let c: Value = serde_json::from_str(&std::fs::read_to_string(&cline).unwrap()).unwrap();
    let e = &c["mcpServers"]["sjournal"];
    assert_eq!(e["command"], "/opt/bin/sjournal");
    assert_eq!(e["disabled"], true, "{e}");
    assert_eq!(e["autoApprove"], json!(["search"]));
    assert_eq!(e["timeout"], 30);
    let o: Value = serde_json::from_str(&std::fs::read_to_string(&opencode).unwrap()).unwrap();
    let e = &o["mcp"]["sjournal"];
    assert_eq!(e["command"], json!(["/opt/bin/sjournal", "mcp"]));
    assert_eq!(e["enabled"], false, "{e}");
    assert_eq!(e["environment"], json!({"A": "1"}));
    let t: toml::Table = toml::from_str(&std::fs::read_to_string(&codex).unwrap()).unwrap();
    let e = &t["mcp_servers"]["sjournal"];
    assert_eq!(e["command"].as_str(), Some("/opt/bin/sjournal"));
    assert_eq!(e["enabled"].as_bool(), Some(false), "{e:?}");
    assert_eq!(e["startup_timeout_sec"].as_integer(), Some(20));
}

/// A configuration directory `install` has to make (the host has not run yet) is the user's
/// alone: 0700, as every directory sjournal makes.
#[cfg(feature = "search")]
#[test]
fn directories_install_makes_are_private() {
    use std::os::unix::fs::PermissionsExt;
    let home = tempfile::tempdir().unwrap();
    ok_in(
        home.path(),
        &["install", "cline", "--command", "/opt/bin/sjournal"],
    );
    for dir in [".cline", ".cline/data", ".cline/data/settings"] {
        let mode = std::fs::metadata(home.path().join(dir))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o700, "{dir}: {mode:o}");
    }
}

/// `install` points the hooks at the `sjournal-hook` beside it when that binary is from the
/// same build, and the MCP server at `sjournal` itself; a `sjournal-hook` from another build
/// (here, one whose `--version` names another stamp) is passed over with a note, and so is a
/// missing one, silently. Binaries are copied into a temp dir so each case has its own
/// neighbours.
#[test]
fn install_points_hooks_at_the_hook_binary_of_the_same_build_only() {
    use std::os::unix::fs::PermissionsExt;
    let run = |bin: &Path, home: &Path| -> (Vec<String>, String) {
        let out = std::process::Command::new(bin)
            .args(["install", "claude-code"])
            .env("HOME", home)
            .env_remove("SJOURNAL_HOME")
            .env_remove("CLAUDE_CONFIG_DIR")
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        assert!(out.status.success(), "{stdout}");
        let doc = read_json(&home.join(".claude/settings.json"));
        let commands = ours(&doc).into_iter().map(|(_, c)| c).collect();
        (commands, stdout)
    };
    let mcp_command = |home: &Path| -> String {
        let doc = read_json(&home.join(".claude.json"));
        doc["mcpServers"]["sjournal"]["command"]
            .as_str()
            .unwrap()
            .to_owned()
    };
    let dir = tempfile::tempdir().unwrap();
    let bins = dir.path().join("bin");
    std::fs::create_dir(&bins).unwrap();
    let full = bins.join("sjournal");
    std::fs::copy(env!("CARGO_BIN_EXE_sjournal"), &full).unwrap();
    let lean = bins.join("sjournal-hook");

    // None beside it: `sjournal hook`.
    let home = dir.path().join("h1");
    let (commands, _) = run(&full, &home);
    assert!(!commands.is_empty());
    let want = format!("{} hook --host claude", full.display());
    assert!(commands.iter().all(|c| *c == want), "{commands:?}");

    // This build's: the hooks run it, the MCP server is `sjournal`'s.
    std::fs::copy(env!("CARGO_BIN_EXE_sjournal-hook"), &lean).unwrap();
    let home = dir.path().join("h2");
    let (commands, stdout) = run(&full, &home);
    let want = format!("{} hook --host claude", lean.display());
    assert!(commands.iter().all(|c| *c == want), "{commands:?}");
    assert!(!stdout.contains("not from this build"), "{stdout}");
    assert_eq!(mcp_command(&home), full.display().to_string());
    // doctor: fine as installed; once others could change the `sjournal` it hands work to
    // (its directory made group-writable), it says the hooks journal but that work stops.
    let doctor = |home: &Path| -> String {
        let out = std::process::Command::new(&full)
            .arg("doctor")
            .env("HOME", home)
            .env("SJOURNAL_HOME", home.join("root"))
            .env_remove("CLAUDE_CONFIG_DIR")
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    assert!(!doctor(&home).contains("will not hand work"));
    std::fs::set_permissions(&bins, std::fs::Permissions::from_mode(0o775)).unwrap();
    let said = doctor(&home);
    assert!(said.contains("will not hand work to"), "{said}");
    std::fs::set_permissions(&bins, std::fs::Permissions::from_mode(0o755)).unwrap();

    // One other users could have planted (its directory group-writable): not even run.
    std::fs::set_permissions(&bins, std::fs::Permissions::from_mode(0o775)).unwrap();
    let home = dir.path().join("h2b");
    let (commands, stdout) = run(&full, &home);
    let want = format!("{} hook --host claude", full.display());
    assert!(commands.iter().all(|c| *c == want), "{commands:?}");
    assert!(
        stdout.contains("is not used (its directory has mode 775"),
        "{stdout}"
    );
    std::fs::set_permissions(&bins, std::fs::Permissions::from_mode(0o755)).unwrap();

    // Another build's: passed over, with a note.
    std::fs::write(
        &lean,
        "#!/bin/sh\necho 'sjournal-hook 0.1.0 (build 0000000000000000)'\n",
    )
    .unwrap();
    std::fs::set_permissions(&lean, std::fs::Permissions::from_mode(0o755)).unwrap();
    let home = dir.path().join("h3");
    let (commands, stdout) = run(&full, &home);
    let want = format!("{} hook --host claude", full.display());
    assert!(commands.iter().all(|c| *c == want), "{commands:?}");
    assert!(stdout.contains("is not from this build"), "{stdout}");
}
