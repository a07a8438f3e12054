//! `sjournal report --html`: a session with two turns, overlapping tool calls, a failed
//! call, a compaction, a subagent and the context injected at three points (as the hook
//! journals it, `sjournal.injected`) becomes one self-contained page: the counts are right,
//! journal text is escaped (a prompt holding a script tag stays text), nothing outside the
//! page is referenced, and headless Chromium renders it: the screenshot is a real image whose
//! pixels include the timeline's colours for turns, tool calls, failures and compactions.
//!
//! The Chromium part needs Debian's `chromium` package at /usr/bin/chromium; without it
//! that test says so on stderr and checks only what it can without a browser.

use crate::support;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;
use support::*;

const SESSION: &str = "report-session";
const CHROMIUM: &str = "/usr/bin/chromium";

fn injected(event_seq: u64, text: &str) -> String {
    serde_json::json!({
        "event_seq": event_seq,
        "text_blake3": blake3_hex(text.as_bytes()),
        "len": text.len(),
        "truncated": false,
        "text": text,
    })
    .to_string()
}

/// The session's records, one second apart.
fn records() -> Vec<(&'static str, String)> {
    let p = |e: &str, v: Option<&str>| claude_payload(e, v);
    let pre = |id: &str, tool: &str| {
        format!(
            r#"{{"hook_event_name":"PreToolUse","tool_name":"{tool}","tool_use_id":"{id}","tool_input":{{}}}}"#
        )
    };
    let post = |id: &str, tool: &str, ms: u64| {
        format!(
            r#"{{"hook_event_name":"PostToolUse","tool_name":"{tool}","tool_use_id":"{id}","duration_ms":{ms}}}"#
        )
    };
    vec![
        ("SessionStart", p("SessionStart", Some("startup"))),
        ("sjournal.injected", injected(1, "turns: 0")),
        (
            "UserPromptSubmit",
            r#"{"hook_event_name":"UserPromptSubmit","prompt":"fix <script>alert(1)</script> & ship"}"#.into(),
        ),
        ("sjournal.injected", injected(3, "task: fix the bug")),
        ("PreToolUse", pre("t1", "Bash")),
        ("PreToolUse", pre("t2", "Read")),
        ("PostToolUse", post("t2", "Read", 900)),
        ("PostToolUse", post("t1", "Bash", 2800)),
        ("PreToolUse", pre("t3", "Bash")),
        ("PostToolUseFailure", p("PostToolUseFailure", None).replace("toolu_5a6517a5f8b94d488f9e9747", "t3")),
        ("SubagentStart", p("SubagentStart", None)),
        ("SubagentStop", p("SubagentStop", Some("general-purpose"))),
        ("Stop", p("Stop", None)),
        ("UserPromptSubmit", p("UserPromptSubmit", None)),
        ("PreCompact", p("PreCompact", Some("auto"))),
        ("SessionStart", p("SessionStart", Some("compact"))),
        ("sjournal.injected", injected(16, "turns: 2, persistent notes")),
        ("PostCompact", p("PostCompact", Some("auto"))),
        ("PreToolUse", pre("t4", "Edit")),
        ("PostToolUse", post("t4", "Edit", 1500)),
        ("Stop", p("Stop", None)),
        ("SessionEnd", p("SessionEnd", Some("other"))),
    ]
}

/// A root holding the session; returns (root, report path, the report's JSON summary).
fn make_report() -> (tempfile::TempDir, PathBuf, Value) {
    report_of(&records())
}

/// A root holding a session of `recs`, and its report.
fn report_of(recs: &[(&str, String)]) -> (tempfile::TempDir, PathBuf, Value) {
    let root = tempfile::tempdir().unwrap();
    let r = root.path();
    let refs: Vec<(&str, &str)> = recs.iter().map(|(k, j)| (*k, j.as_str())).collect();
    let built = build_journal(SESSION, 1_764_000_000_000_000_000, &refs);
    std::fs::create_dir_all(r.join("sessions")).unwrap();
    let path = r.join(format!("sessions/{SESSION}.sjl"));
    std::fs::write(&path, &built.bytes).unwrap();
    // As a writer leaves it: with its high-water mark.
    let last = sjournal::format::mark::Mark {
        seq: built.hashes.len() as u64,
        hash: *built.hashes.last().unwrap(),
    };
    sjournal::journal::hwm::reset(&sjournal::storage::RealFs, &path, last).unwrap();
    sjournal(r)
        .args(["verify", "--session", SESSION])
        .assert()
        .success();
    let out_path = r.join("report.html");
    let out = sjournal(r)
        .args(["report", "--json", "--session", SESSION, "--html"])
        .arg(&out_path)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let summary = serde_json::from_slice(&out.stdout).unwrap();
    (root, out_path, summary)
}

/// A recovery block is thousands of characters over many lines: the report shows all of it,
/// escaped, line breaks kept, folded away under its first line when it is long.
#[test]
fn injected_text_is_shown_whole_and_escaped() {
    let mut block = String::from("sjournal: recovered after compaction #1 (auto)\n");
    for i in 0..60 {
        block.push_str(&format!(
            "- [ ] step {i} of the plan: keep <vendor/> & the tests green\n"
        ));
    }
    block.push_str("Full record: sjournal show --session S <END>");
    assert!(block.chars().count() > 3000);
    let recs = vec![
        (
            "SessionStart",
            claude_payload("SessionStart", Some("compact")),
        ),
        ("sjournal.injected", injected(1, &block)),
        ("sjournal.injected", injected(1, "short & sweet")),
    ];
    let (_root, path, _) = report_of(&recs);
    let html = std::fs::read_to_string(&path).unwrap();
    let table = &html[html.find("Injected context").unwrap()..];
    let escaped = block
        .replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;");
    assert!(
        table.contains(&escaped),
        "the whole block, escaped: {table}"
    );
    assert!(!table.contains("<vendor/>") && !table.contains("<END>"));
    // Long: folded under its first line, which says how long it is.
    assert!(
        table.contains("<details><summary>sjournal: recovered after compaction #1 (auto)"),
        "{table}"
    );
    assert!(table.contains("62 lines"), "{table}");
    // Short: as it is.
    assert!(table.contains("<td>short &amp; sweet</td>"), "{table}");
}

#[test]
fn report_counts_and_is_self_contained() {
    let (_root, path, s) = make_report();
    assert_eq!(s["records"], 22);
    assert_eq!(s["turns"], 2);
    assert_eq!(s["tool_calls"], 4);
    assert_eq!(s["failed_tool_calls"], 1);
    assert_eq!(s["compactions"], 1);
    assert_eq!(s["injections"], 3);
    let html = std::fs::read_to_string(&path).unwrap();
    assert_eq!(s["bytes"], html.len());
    // Journal text is escaped, never markup.
    assert!(!html.contains("<script"), "a prompt became markup");
    assert!(html.contains("fix &lt;script&gt;alert(1)&lt;/script&gt; &amp; ship"));
    // Nothing outside the page is referenced (the SVG namespace is a name, not a fetch).
    for needle in ["src=", "href=", "url(", "@import", "<link", "https://"] {
        assert!(!html.contains(needle), "report references {needle}");
    }
    assert_eq!(html.matches("http://").count(), 1);
    assert!(html.contains("xmlns=\"http://www.w3.org/2000/svg\""));
    // The facts are in it: tools with durations, the failure, the injection's event.
    assert!(html.contains("2.8 s"));
    assert!(html.contains("900 ms"));
    assert!(html.contains("failed: Exit code 2"));
    let injections = &html[html.find("Injected context").unwrap()..];
    assert!(injections.contains("SessionStart (seq 16)"), "{injections}");
    assert!(html.contains("compaction (auto)"));
}

/// Runs headless Chromium on `page`, returning the screenshot's path.
fn screenshot(page: &Path, dir: &Path) -> PathBuf {
    let png = dir.join("shot.png");
    let profile = tempfile::tempdir().unwrap();
    let mut child = Command::new(CHROMIUM)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--disable-dev-shm-usage",
            "--hide-scrollbars",
            "--force-color-profile=srgb",
            "--window-size=1280,900",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .arg(format!("--screenshot={}", png.display()))
        .arg(format!("file://{}", page.display()))
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // A bound so a wedged browser fails the test instead of hanging it; not a speed check.
    let deadline = Instant::now() + Duration::from_secs(180);
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            let mut err = String::new();
            use std::io::Read;
            child
                .stderr
                .take()
                .unwrap()
                .read_to_string(&mut err)
                .unwrap();
            assert!(
                status.success() && png.exists(),
                "chromium failed ({status}): {err}"
            );
            return png;
        }
        if Instant::now() > deadline {
            child.kill().unwrap();
            panic!("chromium did not finish");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn report_renders_in_headless_chromium() {
    let (root, page, _) = make_report();
    if !Path::new(CHROMIUM).exists() {
        crate::support::skip::whole(
            &format!("{CHROMIUM} is missing (no headless browser to render the page)"),
            "apt-get install -y chromium",
        );
        return;
    }
    let png = screenshot(&page, root.path());
    // To look at it: SJOURNAL_KEEP_SCREENSHOT=/some/file.png cargo test --test report
    if let Some(keep) = std::env::var_os("SJOURNAL_KEEP_SCREENSHOT") {
        std::fs::copy(&png, &keep).unwrap();
    }
    let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(&png).unwrap()));
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).unwrap();
    assert_eq!((info.width, info.height), (1280, 900));
    let channels = info.color_type.samples();
    assert!(channels >= 3, "{:?}", info.color_type);
    let pixels: Vec<[u8; 3]> = buf[..info.buffer_size()]
        .chunks(channels)
        .map(|p| [p[0], p[1], p[2]])
        .collect();
    let distinct: std::collections::BTreeSet<_> = pixels.iter().collect();
    assert!(
        distinct.len() > 50,
        "a flat image: {} colours",
        distinct.len()
    );
    // The timeline's colours are on screen, drawn wider than the legend's 12-pixel swatches:
    // turns, tool calls, a failure, a compaction, injections.
    let width = info.width as usize;
    let extent = |want: [u8; 3]| {
        let xs: Vec<usize> = pixels
            .iter()
            .enumerate()
            .filter(|(_, p)| (0..3).all(|i| p[i].abs_diff(want[i]) <= 6))
            .map(|(i, _)| i % width)
            .collect();
        xs.iter().max().unwrap_or(&0) - xs.iter().min().unwrap_or(&0)
    };
    for (name, rgb) in [
        ("turn", [0x4c, 0x78, 0xa8]),
        ("tool call", [0x59, 0xa1, 0x4f]),
        ("failure", [0xe1, 0x57, 0x59]),
        ("compaction", [0xf2, 0x8e, 0x2b]),
        ("injection", [0xb0, 0x7a, 0xa1]),
    ] {
        let w = extent(rgb);
        assert!(
            w > 40,
            "the {name} colour spans {w} pixels: the timeline did not render"
        );
    }
}

/// `--html` names a FIFO (or a device such as /dev/null, a socket, a directory): refused, and
/// the thing there is left as it was (the page is written through a temporary file renamed
/// over the path, which would have put a regular file in its place); a symlink there is
/// replaced, not followed.
#[test]
fn a_device_or_fifo_at_the_output_path_is_refused_and_left_alone() {
    let (root, page, _) = make_report();
    let r = root.path();
    let fifo = r.join("out.fifo");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    let out = sjournal(r)
        .args(["report", "--session", SESSION, "--html"])
        .arg(&fifo)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("a FIFO (named pipe) is there, not a regular file"),
        "{err}"
    );
    use std::os::unix::fs::FileTypeExt;
    assert!(std::fs::symlink_metadata(&fifo)
        .unwrap()
        .file_type()
        .is_fifo());
    // A symlink at the path is replaced by the page; its target is untouched.
    let target = r.join("target.txt");
    std::fs::write(&target, "mine").unwrap();
    let link = r.join("link.html");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    sjournal(r)
        .args(["report", "--session", SESSION, "--html"])
        .arg(&link)
        .assert()
        .success();
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "mine");
    assert!(std::fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_file());
    assert_eq!(std::fs::read(&link).unwrap(), std::fs::read(&page).unwrap());
}
