//! `sjournal search QUERY [--project DIR | --all] [--session ID] [--kind K]... [--since T]
//! [--until T] [--limit N] [--json]`: ranked full-text search over every session's journal
//! (the library's `search`). Each hit names the record: session, seq, time, kind, status and
//! record hash; `sjournal show --session ID --seq N` prints it with its neighbours.
//!
//! `--json` prints one object per hit (JSON Lines): the library's `search::Hit` with `ts`
//! (RFC 3339) added. `--reindex` rebuilds the index from the journals first (alone: only
//! that); `--update` only brings it up to date (what the hook starts after a Stop, with
//! `--detached`).

use std::io::{IsTerminal, Write};
use std::path::PathBuf;

use crate::cli::{output, Outcome};
use sjournal::error::{Error, Result};
use sjournal::journal::Root;
use sjournal::search::{self, DocKind, Hit, Request, Scope};

const AFTER: &str = "\
Query: words (all must match, in the text or a path), \"a phrase\", -word (not),
  file:src/loader.rs (a path containing these segments: project-relative paths match the
  absolute paths the journal holds), tool:Bash, failed:yes|no, kind:K, status:damaged|rescued|
  pending|journal, session:ID.
Kinds: prompt reply tool call failure compact todo subagent note memory other (default: all
  but call, a tool call as it started).
Times (--since, --until): 2026-12-01, 2026-12-01T10:00:00Z, or a duration ago (2h, 3days).

Exit codes:
  0  hits found
  1  no hit
  2  error: bad query or option, the index could not be read; nothing was changed";

/// Search every session's journal: prompts, replies, tool calls and their outcomes, failures,
/// compaction summaries, todos, reviewed memory
#[derive(Debug, clap::Args)]
#[command(after_help = AFTER)]
pub struct Args {
    /// What to look for (see below)
    pub query: Vec<String>,
    /// The project whose sessions are searched [default: $CLAUDE_PROJECT_DIR, else the
    /// current directory's project (its git root)]
    #[arg(long, value_name = "DIR", conflicts_with = "all")]
    pub project: Option<PathBuf>,
    /// Every session under the root, whatever its project
    #[arg(long)]
    pub all: bool,
    /// Only this session
    #[arg(long, value_name = "ID")]
    pub session: Option<String>,
    /// Only hits of this kind (repeatable)
    #[arg(long, value_name = "KIND", value_parser = parse_kind)]
    pub kind: Vec<DocKind>,
    /// Only records at or after this time
    #[arg(long, value_name = "TIME", value_parser = parse_time)]
    pub since: Option<i64>,
    /// Only records before this time
    #[arg(long, value_name = "TIME", value_parser = parse_time)]
    pub until: Option<i64>,
    /// At most this many hits (at most 200)
    #[arg(long, default_value_t = search::LIMIT_DEFAULT)]
    pub limit: usize,
    /// One JSON object per hit
    #[arg(long)]
    pub json: bool,
    /// Rebuild the index from the journals first (without a query: only rebuild)
    #[arg(long)]
    pub reindex: bool,
    /// Only bring the index up to date
    #[arg(long, hide = true)]
    pub update: bool,
    /// Run as the hook's detached update (leave its session; leave if another one waits)
    #[arg(long, hide = true)]
    pub detached: bool,
}

fn parse_kind(s: &str) -> std::result::Result<DocKind, String> {
    DocKind::parse(s).ok_or_else(|| {
        format!(
            "unknown kind {s:?}: use one of {}",
            DocKind::ALL.map(DocKind::as_str).join(", ")
        )
    })
}

fn parse_time(s: &str) -> std::result::Result<i64, String> {
    search::parse_time(s)
}

/// The project a command works for: `flag`, else `$CLAUDE_PROJECT_DIR`, else the current
/// directory's (its git root), canonical; as the hook decides it.
pub fn project(flag: Option<&std::path::Path>) -> Result<String> {
    let dir = match flag {
        Some(d) => sjournal::memory::project_dir(Some(d), None),
        None => {
            let host = std::env::var_os("CLAUDE_PROJECT_DIR").map(PathBuf::from);
            let cwd = std::env::current_dir().ok();
            sjournal::memory::project_dir(host.as_deref(), cwd.as_deref())
        }
    };
    dir.map(|d| d.to_string_lossy().into_owned())
        .ok_or_else(|| Error::InvalidInput {
            reason: "no project: the current directory is unknown; pass --project DIR or --all"
                .into(),
        })
}

pub fn run(root: &Root, args: Args) -> Result<Outcome> {
    if args.detached {
        sjournal::webhook::detach();
        // Nothing to say to anyone: the hook that started it is gone.
        let _ = search::update_detached(root);
        return Ok(Outcome::Ok);
    }
    let query = args.query.join(" ");
    if args.update || (args.reindex && query.trim().is_empty()) {
        let u = search::update(root, args.reindex, None)?;
        for p in &u.problems {
            output::warn(&format!("sjournal: warning: {p}"));
        }
        let mut out = output::stdout();
        let line = format!(
            "{} journal(s) read, {} document(s) added{}",
            u.journals,
            u.docs,
            u.rebuilt
                .as_deref()
                .map(|w| format!("; index rebuilt ({w})"))
                .unwrap_or_default()
        );
        output::line(&mut out, &line)?;
        out.flush().map_err(output::write_err)?;
        return Ok(Outcome::Ok);
    }
    if args.reindex {
        let u = search::update(root, true, None)?;
        for p in &u.problems {
            output::warn(&format!("sjournal: warning: {p}"));
        }
    }
    let scope = if args.all {
        Scope::All
    } else {
        Scope::Project(project(args.project.as_deref())?)
    };
    let req = Request {
        query,
        scope: scope.clone(),
        session: args.session.clone(),
        kinds: args.kind.clone(),
        since: args.since,
        until: args.until,
        limit: args.limit,
    };
    let opts = search::Options {
        writer: crate::cli::shared::writer_options(root),
        ..Default::default()
    };
    let found = search::search(root, &req, &opts)?;
    if let Some(why) = &found.stale {
        output::warn(&format!(
            "sjournal: warning: the index could not be brought up to date ({why}); searching it \
             as it is"
        ));
    }
    for p in found.updated.iter().flat_map(|u| &u.problems) {
        output::warn(&format!("sjournal: warning: {p}"));
    }
    if let (Scope::Project(p), Some(0)) = (&scope, found.sessions) {
        output::warn(&format!(
            "sjournal: no session of the project {} is in the journals; --all searches every \
             session, --project DIR another project",
            sjournal::escape::text(p)
        ));
    }
    let mut out = output::stdout();
    if args.json {
        for h in &found.hits {
            output::json_line(&mut out, &json_hit(h))?;
        }
    } else {
        let color = std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none();
        for (i, h) in found.hits.iter().enumerate() {
            for l in lines(i + 1, h, color) {
                output::line(&mut out, &l)?;
            }
        }
        if let Some(h) = found.hits.iter().find(|h| h.seq.is_some()) {
            if !found.hits.is_empty() {
                output::line(&mut out, "")?;
                output::line(
                    &mut out,
                    &format!(
                        "Show a record with its neighbours: sjournal show --session {} --seq {}{}",
                        shell_word(&h.session),
                        h.seq.unwrap_or(0),
                        if h.journal == Some("rescue") {
                            " --rescue"
                        } else {
                            ""
                        }
                    ),
                )?;
            }
        }
    }
    out.flush().map_err(output::write_err)?;
    Ok(if found.hits.is_empty() {
        Outcome::Findings
    } else {
        Outcome::Ok
    })
}

/// A hit as its JSON line: the library's fields and `ts`.
pub fn json_hit(h: &Hit) -> String {
    let mut v = serde_json::to_value(h).expect("a hit serializes");
    v["ts"] = output::rfc3339(h.ts_unix_ns).into();
    serde_json::to_string(&v).expect("a value serializes")
}

/// A hit as text: a line naming the record, the snippet, the paths.
fn lines(n: usize, h: &Hit, color: bool) -> Vec<String> {
    let mut head = format!(
        "{n:>2}. {}  {}",
        output::rfc3339(h.ts_unix_ns),
        h.kind.as_str()
    );
    if let Some(t) = &h.tool {
        head.push_str(&format!(" {}", sjournal::escape::text(t)));
    }
    if h.failed && h.kind != DocKind::Failure {
        head.push_str(" failed");
    }
    match h.status {
        search::Status::Journal if h.journal == Some("rescue") => head.push_str("  RESCUED"),
        search::Status::Journal => {}
        s => head.push_str(&format!("  {}", s.as_str().to_uppercase())),
    }
    head.push_str(&format!("  session {}", sjournal::escape::text(&h.session)));
    match (&h.seq, &h.hash) {
        (Some(seq), Some(hash)) => {
            head.push_str(&format!(" seq {seq} {}", &hash[..hash.len().min(16)]));
            if h.journal == Some("rescue") {
                head.push_str(" (rescue journal)");
            }
        }
        _ => {
            if let Some(f) = &h.spool_file {
                head.push_str(&format!(
                    " (not yet in the journal: {})",
                    sjournal::escape::text(f)
                ));
            }
        }
    }
    let snippet = if color {
        highlighted(h)
    } else {
        sjournal::escape::text(&h.snippet).into_owned()
    };
    let mut v = vec![head, format!("    {snippet}")];
    if !h.files.is_empty() {
        let f: Vec<String> = h
            .files
            .iter()
            .map(|p| sjournal::escape::text(p).into_owned())
            .collect();
        v.push(format!("    files: {}", f.join(", ")));
    }
    v
}

/// The snippet with its matches in bold red; everything else escaped for the terminal.
fn highlighted(h: &Hit) -> String {
    let mut out = String::new();
    let mut at = 0;
    for &(a, b) in &h.highlights {
        if a < at || b > h.snippet.len() {
            continue;
        }
        out.push_str(&sjournal::escape::text(&h.snippet[at..a]));
        out.push_str("\x1b[1;31m");
        out.push_str(&sjournal::escape::text(&h.snippet[a..b]));
        out.push_str("\x1b[0m");
        at = b;
    }
    out.push_str(&sjournal::escape::text(&h.snippet[at..]));
    out
}

/// `s` as one shell word (quoted when it needs to be).
fn shell_word(s: &str) -> String {
    if !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'/' | b':'))
    {
        s.to_owned()
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}
