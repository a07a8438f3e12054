//! `sjournal migrate (--session ID | --all) [--key SIGNER_KEY] [--dry-run] [--json]`: rewrites
//! format-1 and -2 journals in the current format, 3 (whose payloads `erase` can remove, and
//! whose chain verifies as fast as format 1's), keeping every record's
//! seq, timestamp, kind and payload, the old file beside the journal byte for byte, and a
//! statement binding the old head to the new one, signed with `--key` (see
//! [`sjournal::audit::migrate`]; `verify --migration FILE` checks it). A format-3 journal is
//! left alone. `--all` takes every journal of the root, the memory scopes' included. Exit 0
//! when every journal was migrated or needed nothing, 2 if one could not be (that one was not
//! changed; with `--all` the others still are).

use std::path::PathBuf;

use crate::cli::error::{CliError, Result};
use crate::cli::{output, Outcome};
use sjournal::audit::migrate::{migrate, sessions, MigrateError, Migrated, Options};
use sjournal::journal::Root;

/// Rewrite format-1 and -2 journals as format 3; the old file and a statement binding both are kept
#[derive(Debug, clap::Args)]
#[command(after_help = crate::cli::EXIT_CODES)]
pub struct Args {
    /// The session: its id, as the host gave it (or --all)
    #[arg(long, required_unless_present = "all", conflicts_with = "all")]
    pub session: Option<String>,
    /// Every journal under the root (memory scopes included)
    #[arg(long)]
    pub all: bool,
    /// Sign the statement with this signer key (from `sjournal checkpoint keygen`)
    #[arg(long, value_name = "SIGNER_KEY")]
    pub key: Option<PathBuf>,
    /// Build and check the new journal and report, but change nothing
    #[arg(long)]
    pub dry_run: bool,
    /// Print one JSON object per journal
    #[arg(long)]
    pub json: bool,
}

pub fn run(root: &Root, args: Args) -> Result<Outcome> {
    let key = match &args.key {
        Some(p) => Some(sjournal::storage::read_regular_text(
            p,
            sjournal::storage::Owner::Anyone,
            1 << 16,
        )?),
        None => None,
    };
    let opts = Options {
        dry_run: args.dry_run,
        key,
        ..Options::default()
    };
    let ids = match &args.session {
        Some(s) => vec![s.clone()],
        None => sessions(root)?,
    };
    let mut out = output::stdout();
    let mut failed = None;
    let mut migrated = false;
    for id in &ids {
        match migrate(root, id, &opts) {
            Ok(r) => {
                if args.json {
                    output::json_line(&mut out, &serde_json::to_string(&r).expect("serializable"))?;
                } else {
                    output::line(&mut out, &describe(&r))?;
                }
                migrated |= r.migrated && !r.dry_run;
            }
            Err(e) => {
                let e = match e {
                    MigrateError::Journal(e) => CliError::Lib(e),
                    e => CliError::Usage {
                        message: e.to_string(),
                    },
                };
                if args.session.is_some() {
                    return Err(e);
                }
                eprintln!("sjournal: session {}: {e}", sjournal::escape::text(id));
                failed = Some(e);
            }
        }
    }
    if migrated {
        crate::cli::shared::refresh_search_index(root);
    }
    match failed {
        Some(e) => Err(e),
        None => Ok(Outcome::Ok),
    }
}

fn describe(r: &Migrated) -> String {
    let id = sjournal::escape::text(&r.session_id);
    let finished = format!(
        "session {id}: finished an interrupted migration (the high-water mark named the old \
         head its statement binds; set to the journal's head)"
    );
    if r.finished && r.dry_run {
        return format!(
            "session {id}: would finish an interrupted migration (the high-water mark names \
             the old head its statement binds), then migrate what is left to migrate"
        );
    }
    if r.finished && r.migrated {
        // An older build's migration (to format 2) finished, then this one.
        return format!("{finished}\n{}", describe_migration(r));
    }
    if r.finished {
        return finished;
    }
    describe_migration(r)
}

fn describe_migration(r: &Migrated) -> String {
    let id = sjournal::escape::text(&r.session_id);
    if !r.migrated {
        return format!(
            "session {id}: already version {}; nothing to migrate",
            r.old_format
        );
    }
    let shown = |p: &Option<PathBuf>| {
        p.as_deref()
            .map(sjournal::escape::path)
            .unwrap_or_else(|| "-".into())
    };
    if r.dry_run {
        return format!(
            "session {id}: would migrate format {} to {} ({} records, head {} -> {}){}",
            r.old_format,
            sjournal::format::header::FORMAT_VERSION,
            r.records,
            &r.old_head[..16],
            &r.new_head[..16],
            if r.old_format == 1 {
                " (each record gets a fresh salt: a real run's new head differs)"
            } else {
                ""
            }
        );
    }
    format!(
        "session {id}: migrated format {} to {} ({} records, head {} -> {}); old journal kept \
         as {}; statement{} {}",
        r.old_format,
        sjournal::format::header::FORMAT_VERSION,
        r.records,
        &r.old_head[..16],
        &r.new_head[..16],
        shown(&r.kept),
        if r.signed { " (signed)" } else { "" },
        shown(&r.statement)
    )
}
