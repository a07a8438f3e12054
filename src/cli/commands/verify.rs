//! `sjournal verify (--session ID | --all) [--json]`: checks journals without changing them.
//! Exit 0 if all are intact, 1 if any has a problem, 2 if it could not run.
//!
//! `--json` prints one [`VerifyReport`](sjournal::journal::VerifyReport) object per journal,
//! one per line, each followed by its redaction and digest lines (the whole stream, line by
//! line: [`sjournal::json`], "The `verify --json` stream"). With `--checkpoint FILE` one more line says whether the journal still
//! extends that checkpoint (a [`CheckpointReport`](sjournal::audit::checkpoint::CheckpointReport), from
//! [`sjournal::audit::checkpoint::verify`]). Over many journals a
//! progress bar shows on stderr when it is a terminal (never with `--json`).
//!
//! `--all` also lists the spool files and fallback directories sjournal refuses to merge from
//! as untrusted (`journal::spool::refused`; with `--json`, `{"refused_spool": {...}}` lines),
//! each a finding (exit 1) with the command to deal with it.
//!
//! Each report lists the journal's independent witnesses (`witnesses` in `--json`; see
//! [`sjournal::journal::verify::witness`]); when one disagrees, the human output lists them
//! all under the journal, one a line. A journal that is gone while its witnesses name its
//! records is reported too (a rollback to nothing).
//!
//! With `--migration FILE` one more line (and one per finding) checks a statement of `sjournal
//! migrate` ([`sjournal::audit::migrate::check`]).
//!
//! `--digests` also re-derives every event's fold digest from its JSON
//! ([`sjournal::audit::digests::verify_digests`]): a digest that differs is the journal's problem (exit
//! 1), and one more line per journal counts what was checked.

use std::path::PathBuf;

use crate::cli::error::CliError;
use crate::cli::{output, progress, Outcome};
use sjournal::error::{Error, Result};
use sjournal::journal::verify::witness;
use sjournal::journal::{verify_file, Root, VerifyReport};

/// Verify journals: framing, CRCs, contiguous seq, the hash chain, the header binding
#[derive(Debug, clap::Args)]
#[command(after_help = crate::cli::EXIT_CODES)]
pub struct Args {
    // Not a struct-level `#[group]`: clap puts every field of the struct in that group, which
    // made `--json` conflict with `--session`.
    /// The session: its id, as the host gave it (or --all)
    #[arg(
        long,
        required_unless_present_any = ["all", "remote"],
        conflicts_with = "all"
    )]
    pub session: Option<String>,
    /// Every journal under the root
    #[arg(long)]
    pub all: bool,
    /// Print JSON (one object per line) instead of text
    #[arg(long)]
    pub json: bool,
    /// Also check every event's fold digest against its JSON (a JSON parse of every event:
    /// several times slower than the chain check)
    #[arg(long, conflicts_with = "remote")]
    pub digests: bool,
    /// Also prove the journal still extends this checkpoint (from `sjournal checkpoint`)
    #[arg(
        long,
        value_name = "FILE",
        requires = "session",
        conflicts_with = "all"
    )]
    pub checkpoint: Option<PathBuf>,
    /// Also check this migration statement (from `sjournal migrate`): the kept old journal
    /// has the old head, the journal the new head, and both the same records
    #[arg(
        long,
        value_name = "FILE",
        requires = "session",
        conflicts_with = "all"
    )]
    pub migration: Option<PathBuf>,
    /// Require the checkpoint or migration statement (or, with --remote, every segment's
    /// checkpoint) to carry a valid signature by this verifier key (KEYFILE.pub)
    #[arg(long, value_name = "KEYFILE")]
    pub pubkey: Option<PathBuf>,
    /// Verify shipped journals instead: s3://BUCKET/PREFIX[/v1/...] or file:///DIR (needs the
    /// `remote` feature); compares with this root's journals of the same host id
    #[arg(long, value_name = "URL", conflicts_with_all = ["all", "session", "checkpoint", "migration"])]
    pub remote: Option<String>,
}

pub fn run(root: &Root, args: Args) -> crate::cli::error::Result<Outcome> {
    // `--all` over a root that is not there is a wrong --root or $SJOURNAL_HOME, not a clean
    // bill: an error, unless events of that root wait in the fallback spool (reported then).
    if args.all
        && std::fs::symlink_metadata(root.dir()).is_err()
        && sjournal::journal::spool::sessions_with_pending(
            root,
            &crate::cli::shared::writer_options(root),
        )?
        .is_empty()
    {
        return Err(CliError::Usage {
            message: format!(
                "there is no journal root at {}: nothing was verified (pass --root DIR, or set \
                 SJOURNAL_HOME, to where the journals are)",
                root.dir().display()
            ),
        });
    }
    check(root, args)
}

fn check(root: &Root, args: Args) -> crate::cli::error::Result<Outcome> {
    if let Some(url) = &args.remote {
        return remote(root, url, args.pubkey.as_slice(), args.json);
    }
    if args.pubkey.is_some() && args.checkpoint.is_none() && args.migration.is_none() {
        return Err(Error::InvalidInput {
            reason: "--pubkey needs --checkpoint FILE, --migration FILE or --remote URL".into(),
        }
        .into());
    }
    let opts = crate::cli::shared::writer_options(root);
    let paths = match &args.session {
        Some(s) => match root.existing_session(s) {
            Ok(p) => {
                let mut v = vec![p.journal];
                if std::fs::symlink_metadata(&p.rescue).is_ok() {
                    v.push(p.rescue);
                }
                v
            }
            // A session whose every event is still spooled (the root could not take even its
            // first one) has no journal yet: its pending spool below is the finding.
            Err(Error::NoSuchSession { .. })
                if sjournal::journal::spool::has_pending(root, s, &opts)? =>
            {
                Vec::new()
            }
            // A journal deleted while its witnesses still name its records: a finding below.
            Err(Error::NoSuchSession { .. }) if !gone_journals(root, s)?.is_empty() => Vec::new(),
            Err(e) => return Err(e.into()),
        },
        None => root.journals()?,
    };
    let gone = match &args.session {
        Some(s) => gone_journals(root, s)?,
        None => witness::orphans(&root.sessions_dir()),
    };
    let mut out = output::stdout();
    let mut bad = 0;
    let bar = progress::bar(paths.len() as u64, args.json, "verifying");
    // The session's main journal's erasures, for a checkpoint's report.
    let main_journal = match &args.session {
        Some(s) => Some(root.session(s)?.journal),
        None => None,
    };
    let mut main_erasures = Vec::new();
    for path in &paths {
        // Over every journal, one that cannot be read (a symlink or a directory in its place,
        // no permission) is a finding like any other: report it and go on. A single session's
        // journal that cannot be read is an error (exit 2), as for every other command.
        let mut report = match verify_file(path, None) {
            Ok(r) => r,
            Err(e) if args.all => VerifyReport::unreadable(path, &e),
            Err(e) => return Err(e.into()),
        };
        let digests = if args.digests && report.ok {
            match sjournal::audit::digests::verify_digests(path, None) {
                Ok(d) => Some(d),
                Err(e) if args.all => {
                    report = VerifyReport::unreadable(path, &e);
                    None
                }
                Err(e) => return Err(e.into()),
            }
        } else {
            None
        };
        if let Some(m) = digests.as_ref().and_then(|d| d.mismatch.clone()) {
            report.ok = false;
            report.problem = Some(m);
        }
        if !report.ok {
            bad += 1;
        }
        if main_journal.as_deref() == Some(path.as_path()) {
            main_erasures = report.erasures.clone();
        }
        let line = if args.json {
            serde_json::to_string(&report).expect("serializable")
        } else {
            report.summary()
        };
        bar.suspend(|| output::emit(&mut out, &line, args.json))?;
        if !args.json {
            bar.suspend(|| witness_lines(&mut out, &report))?;
        }
        // What was redacted at ingest (the `sjournal.redacted` records the verify noted, read
        // again at their offsets, and the last record, whose hash must be the verified head:
        // a journal replaced between the two reads is not summarised): an auditor sees that
        // the journal's events are not as the host sent them.
        let redacted = match (report.records, report.head.as_deref()) {
            (0, _) | (_, None) => None,
            (_, Some(head)) => match sjournal::journal::JournalReader::open(path, None)
                .ok()
                .map(|r| sjournal::redact::Summary::of_verified(r.bytes(), &report.seen, head))
            {
                Some(Some(s)) => Some(s),
                _ => {
                    if !args.json {
                        let line = "    redactions: not summarised: the journal changed after                                     it was verified (run verify again)";
                        bar.suspend(|| output::emit(&mut out, line, false))?;
                    }
                    None
                }
            },
        }
        .filter(|s| !s.is_empty());
        if let Some(r) = &redacted {
            let line = match args.json {
                true => sjournal::report::line(&sjournal::report::VerifyRedactionsLine {
                    path,
                    redactions: r,
                }),
                false => r.verify_line(),
            };
            bar.suspend(|| output::emit(&mut out, &line, args.json))?;
        }
        if let Some(d) = digests {
            let line = if args.json {
                sjournal::report::line(&sjournal::report::VerifyDigestsLine { path, digests: &d })
            } else {
                format!(
                    "    digests: {} events, {} checked against their JSON, {} without a digest, \
                     {} of another version",
                    d.events, d.checked, d.without, d.other_version
                )
            };
            bar.suspend(|| output::emit(&mut out, &line, args.json))?;
        }
        bar.inc(1);
    }
    bar.finish_and_clear();
    // Journals that are gone while their witnesses name their records.
    for path in &gone {
        let report = witness::missing_journal_report(path);
        bad += 1;
        if args.json {
            output::json_line(
                &mut out,
                &serde_json::to_string(&report).expect("serializable"),
            )?;
        } else {
            output::line(&mut out, &report.summary())?;
            witness_lines(&mut out, &report)?;
        }
    }
    // Events spooled but not yet merged: acknowledged, not in the journal (verify only looks).
    let with_pending = match &args.session {
        Some(s) => vec![s.clone()],
        None => sjournal::journal::spool::sessions_with_pending(root, &opts)?,
    };
    for session in &with_pending {
        let pending = sjournal::journal::pending_spool(root, session, &opts)?;
        if pending.is_empty() {
            continue;
        }
        bad += 1;
        if args.json {
            let line = sjournal::report::PendingSpoolLine {
                session,
                pending_spool: &pending,
            };
            output::json_line(&mut out, &sjournal::report::line(&line))?;
            continue;
        }
        output::line(
            &mut out,
            &format!(
                "PENDING {}: {} spooled event file(s) not yet in the journal \
                 (`sjournal flush --session {session:?}` merges them):",
                sjournal::escape::text(session),
                pending.len()
            ),
        )?;
        for p in &pending {
            output::line(
                &mut out,
                &format!(
                    "  {}{}: {}{}",
                    sjournal::escape::path(&p.path),
                    if p.fallback {
                        " (FALLBACK spool, outside the root)"
                    } else {
                        ""
                    },
                    sjournal::escape::text(&p.kinds.join(", ")),
                    match (&p.damaged, &p.reason) {
                        (Some(d), _) => format!(" DAMAGED: {}", sjournal::escape::text(d)),
                        (None, Some(r)) =>
                            format!("; spooled because: {}", sjournal::escape::text(r)),
                        (None, None) => String::new(),
                    }
                ),
            )?;
        }
    }
    if let (Some(cp), Some(session)) = (&args.checkpoint, &args.session) {
        let pubkey = args.pubkey.as_deref();
        let mut report = sjournal::audit::checkpoint::verify(root, session, cp, pubkey)?;
        report.note_erasures(&main_erasures);
        let line = match args.json {
            true => sjournal::report::line(&report),
            false => report.summary(),
        };
        output::emit(&mut out, &line, args.json)?;
        if !report.ok {
            bad += 1;
        }
    }
    if let (Some(m), Some(session)) = (&args.migration, &args.session) {
        let report = sjournal::audit::migrate::check(root, session, m, args.pubkey.as_deref())?;
        let line = match args.json {
            true => sjournal::report::line(&report),
            false => report.summary(),
        };
        output::emit(&mut out, &line, args.json)?;
        if !report.ok {
            bad += 1;
        }
    }
    // Over the whole root: spool files and fallback directories refused as untrusted.
    let refused =
        args.session.is_none() && super::flush::report_refused(root, &opts, args.json, &mut out)?;
    if !args.json {
        output::line(
            &mut out,
            &format!(
                "{} journal(s) verified, {} with problems",
                paths.len() + gone.len(),
                bad
            ),
        )?;
    }
    Ok(if bad == 0 && !refused {
        Outcome::Ok
    } else {
        Outcome::Findings
    })
}

/// The session's journals (main, rescue) that are gone while their witnesses name records.
fn gone_journals(root: &Root, session: &str) -> Result<Vec<PathBuf>> {
    let p = root.session(session)?;
    Ok([p.journal, p.rescue]
        .into_iter()
        .filter(|j| std::fs::symlink_metadata(j).is_err() && witness::read(j).names_records())
        .collect())
}

/// Under a journal's summary, when a witness disagrees with it: every witness, one a line.
fn witness_lines(out: &mut impl std::io::Write, report: &VerifyReport) -> Result<()> {
    if !report.witnesses.iter().any(|w| w.verdict.disagrees()) {
        return Ok(());
    }
    for w in &report.witnesses {
        output::line(
            out,
            &format!("    witness: {}", sjournal::escape::text(&w.summary())),
        )?;
    }
    Ok(())
}

#[cfg(feature = "remote")]
fn remote(
    root: &Root,
    url: &str,
    pubkey: &[PathBuf],
    json: bool,
) -> crate::cli::error::Result<Outcome> {
    super::remote_verify::run(root, url, pubkey, json)
}

#[cfg(not(feature = "remote"))]
fn remote(_: &Root, _: &str, _: &[PathBuf], _: bool) -> crate::cli::error::Result<Outcome> {
    Err(Error::Remote {
        reason: "this sjournal was built without the `remote` feature; \
                 install it with `cargo install --locked --path . --features remote`"
            .into(),
    }
    .into())
}
