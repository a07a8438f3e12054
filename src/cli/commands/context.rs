//! `sjournal context show|set|clear --session ID`: the session's context channels.
//!
//! `show` prints exactly the text the hook would inject if the event `--at` (default
//! `compact`: the host compacting now) came next, under the root's config.toml: the injection
//! policy's own function, on the session's state with that SessionStart folded in (as the hook
//! folds it before it renders), with the sections the hook adds from outside the session
//! (reviewed memory, the handoff: `memory::hook::prepare`, the function the hook calls) for the
//! project the hook would take (`--project`, else `$CLAUDE_PROJECT_DIR`, else the session's
//! directory, else the current one). A session that does not exist yet is shown as its first
//! SessionStart would find it. Nothing at all when it is empty.
//! `--json` prints the [`Injection`](sjournal::context::Injection) with `"seq"` (the state's).
//! `set` writes an entry (`--channel persistent|ephemeral|at-stop`, default persistent) with
//! the text given as an argument or on stdin; `clear` removes one key, one channel or all.

use std::io::Write;

use std::path::PathBuf;

use crate::cli::shared::{load, read_stdin};
use crate::cli::{output, Outcome};
use sjournal::config::Config;
use sjournal::context::{inject, Channel, Extras, InjectionPoint, Policy};
use sjournal::error::{Error, Result};
use sjournal::event::{EventKind, Host};
use sjournal::fold::State;
use sjournal::journal::Root;
use sjournal::memory::{self, Scope};
use sjournal::primitives;

/// An event to show the injection for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum At {
    /// SessionStart after a compaction: the full recovery block
    Compact,
    /// SessionStart(resume)
    Resume,
    /// SessionStart(startup)
    Startup,
    /// SessionStart(clear)
    Clear,
    /// The next UserPromptSubmit
    Prompt,
}

/// Show or change a session's context channels
#[derive(Debug, clap::Args)]
#[command(after_help = crate::cli::EXIT_CODES)]
pub struct Args {
    #[command(subcommand)]
    pub action: Action,
}

#[derive(Debug, clap::Subcommand)]
pub enum Action {
    /// Print exactly the context the hook would inject at the next event
    Show {
        /// The session: its id, as the host gave it
        #[arg(long)]
        session: String,
        /// The event (default: the host compacting now)
        #[arg(long, value_enum, default_value_t = At::Compact)]
        at: At,
        /// The recovery block's budget in characters (default: config.toml's, else 4000)
        #[arg(long)]
        budget: Option<usize>,
        /// The project whose memory applies [default: $CLAUDE_PROJECT_DIR, else the
        /// session's directory, else the current one]
        #[arg(long, value_name = "DIR")]
        project: Option<std::path::PathBuf>,
        /// Print the injection as JSON instead of text
        #[arg(long)]
        json: bool,
    },
    /// Set a context entry (text from the argument, or from stdin when absent or "-")
    Set {
        /// The session: its id, as the host gave it
        #[arg(long)]
        session: String,
        /// The entry's key (an entry of that key in the channel is replaced)
        #[arg(long)]
        key: String,
        /// persistent (kept, survives compaction), ephemeral (this turn), at-stop (replaces
        /// the persistent entry when the turn ends)
        #[arg(long, default_value = "persistent", value_parser = parse_channel)]
        channel: Channel,
        /// The entry's text [default: stdin; "-" reads stdin too]
        text: Option<String>,
    },
    /// Clear one key, one channel, or (neither given) every entry
    Clear {
        /// The session: its id, as the host gave it
        #[arg(long)]
        session: String,
        /// Clear only the entry of this key
        #[arg(long)]
        key: Option<String>,
        /// Clear only this channel: persistent, ephemeral or at-stop
        #[arg(long, value_parser = parse_channel)]
        channel: Option<Channel>,
    },
}

fn parse_channel(s: &str) -> std::result::Result<Channel, String> {
    Channel::from_name(s)
        .ok_or_else(|| format!("unknown channel {s:?}: use persistent, ephemeral or at-stop"))
}

pub fn run(root: &Root, args: Args) -> Result<Outcome> {
    let mut out = output::stdout();
    let opts = crate::cli::shared::writer_options(root);
    match args.action {
        Action::Show {
            session,
            at,
            budget,
            project,
            json,
        } => {
            let mut state = match load(root, &session, None, true) {
                Ok((s, _)) => s,
                // Not journaled yet: as its first event finds it.
                Err(Error::NoSuchSession { .. }) => State::new(),
                Err(e) => return Err(e),
            };
            let config = Config::load(root).unwrap_or_else(|e| {
                output::warn(&format!("sjournal: {e}"));
                Config::default()
            });
            let mut policy = Policy::from_config(&config);
            if let Some(b) = budget {
                policy.budget_chars = b;
            }
            let (kind, source) = match at {
                At::Compact => (EventKind::SessionStart, Some("compact")),
                At::Resume => (EventKind::SessionStart, Some("resume")),
                At::Startup => (EventKind::SessionStart, Some("startup")),
                At::Clear => (EventKind::SessionStart, Some("clear")),
                At::Prompt => (EventKind::UserPromptSubmit, None),
            };
            let host = state
                .identity
                .host
                .as_deref()
                .and_then(Host::from_name)
                .unwrap_or(Host::Unknown);
            let dir = project_of(project, state.identity.cwd.as_deref());
            // The journal's own seq (the SessionStart shown is not journaled).
            let seq = state.seq;
            let mut extras = Extras::default();
            if let Some(source) = source {
                sjournal::context::fold_next_start(
                    &mut state,
                    &session,
                    source,
                    host,
                    dir.as_deref(),
                );
                if let Some(d) = &dir {
                    let scope = Scope::Project(d.to_string_lossy().into_owned());
                    extras = memory::hook::prepare(
                        root,
                        source,
                        &scope,
                        &session,
                        &sjournal::memory::hook::Settings::from(&config.memory),
                    )
                    .extras;
                }
            }
            let point = InjectionPoint {
                // The next event: no prompt of the journal is the one being answered.
                event_seq: state.seq + u64::from(source.is_none()),
                kind,
                source: source.map(str::to_owned),
                host,
            };
            let r = inject(&state, &point, &policy, &extras);
            if json {
                let show = sjournal::report::ContextShow { injection: &r, seq };
                output::json_line(&mut out, &sjournal::report::line(&show))?;
            } else {
                // Escaped for the terminal (`--json` has the exact text).
                output::text(&mut out, &r.text)?;
            }
        }
        Action::Set {
            session,
            key,
            channel,
            text,
        } => {
            let text = match text.as_deref() {
                None | Some("-") => {
                    String::from_utf8(read_stdin()?).map_err(|_| Error::InvalidInput {
                        reason: "the text on stdin is not UTF-8".into(),
                    })?
                }
                Some(t) => t.to_owned(),
            };
            let landed = primitives::context_set(root, &session, channel, &key, &text, &opts)?;
            return crate::cli::shared::print_landed(&mut out, root, &session, &landed, seq_line);
        }
        Action::Clear {
            session,
            key,
            channel,
        } => {
            let landed = primitives::context_clear(root, &session, channel, key.as_deref(), &opts)?;
            return crate::cli::shared::print_landed(&mut out, root, &session, &landed, seq_line);
        }
    }
    out.flush().map_err(output::write_err)?;
    Ok(Outcome::Ok)
}

/// The project the hook would take for the session's next event: `--project`, else
/// `$CLAUDE_PROJECT_DIR`, else the session's directory, else the current one (canonical, the
/// git root above it where there is one).
fn project_of(flag: Option<PathBuf>, session_cwd: Option<&str>) -> Option<PathBuf> {
    if let Some(d) = flag {
        return memory::project_dir(Some(&d), None);
    }
    let host = std::env::var_os("CLAUDE_PROJECT_DIR").map(PathBuf::from);
    let cwd = session_cwd
        .map(PathBuf::from)
        .or_else(|| std::env::current_dir().ok());
    memory::project_dir(host.as_deref(), cwd.as_deref())
}

fn seq_line(a: &sjournal::journal::Appended) -> String {
    sjournal::report::line(&sjournal::report::SeqLine { seq: a.seq })
}
