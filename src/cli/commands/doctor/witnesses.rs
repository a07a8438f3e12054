//! Journals whose independent witnesses disagree with them: the high-water mark, its copy and
//! the tail hint in the lock file, the snapshot, the ship cursors each name a record the
//! journal held when they were written (`journal::verify::witness`). A journal that verifies
//! record by record but lacks what they name was rolled back (records cut off, an older copy
//! put back, the journal deleted); a journal with records but no readable mark cannot be
//! checked for that. Each is a finding with the `repair` that settles it.

use sjournal::audit::sessions::SessionSummary;
use sjournal::journal::paths::{file_stem, JOURNAL_EXT};
use sjournal::journal::verify::witness::{self, Witness};
use sjournal::journal::{verify_file, Root, VerifyReport};

use super::{shown, Doctor};

/// How long doctor waits for a journal's shared lock to verify it again.
const LOCK_WAIT: std::time::Duration = std::time::Duration::from_secs(5);

/// The witnesses of `report` that disagree with its journal, if they are what is wrong with
/// it: the records verify to the end (the finding is past the last one), so the witnesses,
/// not damage, make the journal fail. A damaged journal's witnesses disagree too (they name
/// records past the damage): that is the damage's finding.
fn disagreeing(report: &VerifyReport) -> Option<Vec<&Witness>> {
    let problem = report.problem.as_ref()?;
    if problem.torn_tail || problem.offset != report.bytes {
        return None;
    }
    let against: Vec<&Witness> = report
        .witnesses
        .iter()
        .filter(|w| w.verdict.disagrees())
        .collect();
    (!against.is_empty()).then_some(against)
}

/// What the disagreement means, in a few words.
fn meaning(report: &VerifyReport) -> &'static str {
    if report.rolled_back {
        "records it held were lost (cut off, an older copy put back, or the journal deleted); \
         the next event goes to the rescue journal"
    } else {
        "the high-water mark is missing or damaged, so a rollback of the journal cannot be \
         checked against it"
    }
}

/// "high-water mark s.hwm names seq 5, tail hint in s.lock names seq 5".
fn listed(against: &[&Witness]) -> String {
    against
        .iter()
        .map(|w| sjournal::escape::text(&w.against()).into_owned())
        .collect::<Vec<_>>()
        .join(", ")
}

/// `sjournal repair --session ID`, with what it does here.
fn repair(id: &str, does: &str) -> String {
    format!(
        "sjournal repair --session {} ({does})",
        sjournal::install::shell_quote(id)
    )
}

/// The session id a journal's file name gives, if the name is the id itself (not the hash
/// of a long one).
fn id_of(journal: &std::path::Path) -> Option<String> {
    let name = journal.file_name()?.to_str()?;
    let base = name.strip_suffix(&format!(".{JOURNAL_EXT}"))?;
    let stem = base.strip_suffix(".rescue").unwrap_or(base);
    (file_stem(stem).ok()? == stem).then(|| stem.to_owned())
}

impl Doctor {
    /// For a journal that does not verify: a `witnesses` finding if its witnesses are what
    /// is wrong with it (true), else nothing (false: the caller reports the damage).
    pub(super) fn witnesses(&mut self, s: &SessionSummary) -> bool {
        // A journal whose lock a stuck process holds is not waited on for ever: past the
        // deadline it is reported as the summary found it.
        let deadline = std::time::Instant::now() + LOCK_WAIT;
        let (Some(id), Ok(report)) = (&s.session_id, verify_file(&s.journal, Some(deadline)))
        else {
            return false;
        };
        let Some(against) = disagreeing(&report) else {
            return false;
        };
        self.fail(
            "witnesses",
            None,
            format!(
                "session {}: the journal ends at seq {}, but its witnesses disagree: {}: {}",
                sjournal::escape::text(id),
                report.last_seq,
                listed(&against),
                meaning(&report)
            ),
            repair(
                id,
                if report.rolled_back {
                    "it records what the witnesses name, and keeps the journal as it was beside it"
                } else {
                    "it writes the mark again, and keeps the journal as it was beside it"
                },
            ),
        );
        true
    }

    /// Journals that are gone while their witnesses still name their records.
    pub(super) fn gone(&mut self, root: &Root) -> usize {
        let gone = witness::orphans(&root.sessions_dir());
        for path in &gone {
            let report = witness::missing_journal_report(path);
            let against: Vec<&Witness> = report
                .witnesses
                .iter()
                .filter(|w| w.verdict.disagrees())
                .collect();
            let fix = match id_of(path) {
                Some(id) => repair(
                    &id,
                    "it starts the journal again, recording what the witnesses name",
                ),
                None => "sjournal verify --all (it names the session to repair)".into(),
            };
            self.fail(
                "witnesses",
                None,
                format!(
                    "{} is gone, but its witnesses name records it held: {}: it was deleted; \
                     the next event goes to the rescue journal",
                    shown(path),
                    listed(&against)
                ),
                fix,
            );
        }
        gone.len()
    }
}
