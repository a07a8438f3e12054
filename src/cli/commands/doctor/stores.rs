//! What the root holds: spooled events waiting, the journals, webhook deliveries.

use std::collections::BTreeSet;

use sjournal::audit::sessions::SessionSummary;
use sjournal::config::Config;
use sjournal::journal::{spool, Root, WriterOptions};

use super::{shown, Doctor};

/// Damaged journals named one by one; the rest are counted.
const DAMAGED_SHOWN: usize = 20;

/// The spool files waiting to be merged, counted where they wait.
#[derive(Default)]
struct Waiting {
    in_root: usize,
    in_fallback: usize,
    damaged: usize,
    root_sessions: BTreeSet<String>,
    fallback_sessions: BTreeSet<String>,
}

impl Waiting {
    fn count(root: &Root, sessions: &[String], opts: &WriterOptions) -> Waiting {
        let mut w = Waiting::default();
        for id in sessions {
            let Ok(pending) = spool::pending_spool(root, id, opts) else {
                continue;
            };
            for p in &pending {
                if p.fallback {
                    w.in_fallback += 1;
                    w.fallback_sessions.insert(id.clone());
                } else {
                    w.in_root += 1;
                    w.root_sessions.insert(id.clone());
                }
                if p.damaged.is_some() {
                    w.damaged += 1;
                }
            }
        }
        w
    }
}

impl Doctor {
    pub(super) fn spools(&mut self, root: &Root, opts: &WriterOptions) {
        let sessions = match spool::sessions_with_pending(root, opts) {
            Ok(s) => s,
            Err(e) => {
                self.fail(
                    "spool",
                    None,
                    format!("the spools cannot be read: {e}"),
                    format!("fix the permissions under {}", shown(root.dir())),
                );
                return;
            }
        };
        let w = Waiting::count(root, &sessions, opts);
        self.root_spool(&w);
        self.fallback_spool(&w, opts);
    }

    fn root_spool(&mut self, w: &Waiting) {
        if w.in_root == 0 {
            self.ok("spool", None, "no spooled event waits to be merged".into());
            return;
        }
        let damaged = match w.damaged {
            0 => String::new(),
            n => format!(" ({n} damaged: set aside when merged)"),
        };
        self.warn(
            "spool",
            None,
            format!(
                "{} spooled event file(s) of {} session(s) wait to be merged into their \
                 journals{damaged}",
                w.in_root,
                w.root_sessions.len()
            ),
            "sjournal flush --all".into(),
        );
    }

    fn fallback_spool(&mut self, w: &Waiting, opts: &WriterOptions) {
        let fallback = spool::fallback::bases(opts.fallback_dir.as_deref());
        let base = fallback.first().cloned().unwrap_or_default();
        if w.in_fallback == 0 {
            self.ok(
                "fallback",
                None,
                format!(
                    "{}: nothing waits there (used only when the root cannot take an event)",
                    shown(&base)
                ),
            );
            return;
        }
        self.warn(
            "fallback",
            None,
            format!(
                "{} event file(s) of {} session(s) wait in the fallback spool under {}, outside \
                 the root (lost at a reboot if it is a tmpfs)",
                w.in_fallback,
                w.fallback_sessions.len(),
                shown(&base)
            ),
            "make the root writable again (see `root` and `space`), then `sjournal flush --all`"
                .into(),
        );
    }

    /// Spool files and fallback directories refused as untrusted, each with the commands to
    /// review and accept (or remove) it.
    pub(super) fn refused(&mut self, root: &Root, opts: &WriterOptions) {
        let refused = match spool::refused(root, opts) {
            Ok(r) => r,
            Err(e) => {
                self.fail(
                    "untrusted",
                    None,
                    format!("the spools cannot be checked for untrusted files: {e}"),
                    format!("fix the permissions under {}", shown(root.dir())),
                );
                return;
            }
        };
        if refused.is_empty() {
            self.ok(
                "untrusted",
                None,
                "no spool file or fallback directory is refused as untrusted".into(),
            );
        }
        for r in refused.iter().take(DAMAGED_SHOWN) {
            let what = match (r.directory, r.fallback) {
                (true, _) => "fallback spool directory",
                (false, true) => "spool file in the fallback spool",
                (false, false) => "spool file",
            };
            self.warn(
                "untrusted",
                None,
                format!(
                    "{what} {} refused as untrusted (never merged, nothing of it reaches the \
                     model): {}",
                    shown(&r.path),
                    sjournal::escape::text(&r.reason)
                ),
                sjournal::escape::text(&r.advice).into_owned(),
            );
        }
        if refused.len() > DAMAGED_SHOWN {
            self.warn(
                "untrusted",
                None,
                format!(
                    "and {} more refused spool file(s) or directories",
                    refused.len() - DAMAGED_SHOWN
                ),
                "sjournal verify --all (lists each, with its commands)".into(),
            );
        }
    }

    pub(super) fn journals(&mut self, root: &Root) -> Vec<SessionSummary> {
        let all = match sjournal::audit::sessions::list(root) {
            Ok(a) => a,
            Err(e) => {
                self.fail(
                    "journals",
                    None,
                    format!("the journals cannot be listed: {e}"),
                    format!("fix the permissions of {}", shown(&root.sessions_dir())),
                );
                return Vec::new();
            }
        };
        let bad: Vec<&SessionSummary> = all.iter().filter(|s| !s.ok).collect();
        let mut witnessed = 0;
        for s in bad.iter().take(DAMAGED_SHOWN) {
            if self.witnesses(s) {
                witnessed += 1;
            } else {
                self.damaged(s);
            }
        }
        if bad.len() > DAMAGED_SHOWN {
            self.fail(
                "journals",
                None,
                format!(
                    "and {} more journal(s) that do not verify",
                    bad.len() - DAMAGED_SHOWN
                ),
                "sjournal verify --all".into(),
            );
        }
        let gone = self.gone(root);
        self.journals_ok(all.len(), bad.len(), witnessed, gone);
        all
    }

    /// The `ok` lines of the journals and their witnesses, where no finding was made.
    fn journals_ok(&mut self, all: usize, bad: usize, witnessed: usize, gone: usize) {
        if bad == 0 {
            self.ok(
                "journals",
                None,
                format!("{all} journal(s), every one verifies"),
            );
        } else if witnessed == bad {
            self.ok(
                "journals",
                None,
                format!(
                    "{all} journal(s), the records of every one verify (see `witnesses` for \
                     the {witnessed} whose witnesses disagree)"
                ),
            );
        }
        if witnessed == 0 && gone == 0 && bad <= DAMAGED_SHOWN {
            self.ok(
                "witnesses",
                None,
                "every journal's witnesses (high-water mark, lock file, snapshot, ship cursors) \
                 agree with it, and none names a journal that is gone"
                    .into(),
            );
        }
    }

    /// One journal that does not verify, with the command that repairs it.
    fn damaged(&mut self, s: &SessionSummary) {
        let problem = s.problem.as_deref().unwrap_or("it does not verify");
        let (who, fix) = match &s.session_id {
            Some(id) => (
                format!("session {}", sjournal::escape::text(id)),
                format!(
                    "sjournal repair --session {} (the damaged file is kept beside it)",
                    sjournal::install::shell_quote(id)
                ),
            ),
            None => (
                shown(&s.journal),
                format!(
                    "sjournal inspect {} (its header is damaged: repair needs the session id)",
                    shown(&s.journal)
                ),
            ),
        };
        self.fail(
            "journals",
            None,
            format!(
                "{who}: the journal is damaged: {}",
                sjournal::escape::text(problem)
            ),
            fix,
        );
    }

    pub(super) fn webhooks(&mut self, root: &Root, config: &Config) {
        if config.webhook.is_empty() {
            self.ok("webhooks", None, "none configured".into());
            return;
        }
        let statuses = match sjournal::webhook::status::status(root, &config.webhook, None) {
            Ok(s) => s,
            Err(e) => {
                self.fail(
                    "webhooks",
                    None,
                    format!("their state cannot be read: {e}"),
                    "sjournal webhook status".into(),
                );
                return;
            }
        };
        let mut failing = 0;
        for st in &statuses {
            let Some(fail) = &st.last_failure else {
                continue;
            };
            if st.pending == 0 {
                continue;
            }
            failing += 1;
            let why = match (&fail.error, fail.status) {
                (Some(e), _) => sjournal::escape::text(e).into_owned(),
                (None, Some(code)) => format!("HTTP {code}"),
                (None, None) => "failed".into(),
            };
            self.warn(
                "webhooks",
                None,
                format!(
                    "webhook {}: {} event(s) of session {} not delivered; the last attempt \
                     failed: {why}",
                    sjournal::escape::text(&st.webhook),
                    st.pending,
                    sjournal::escape::text(&st.session_id)
                ),
                format!(
                    "check its url in {}, then `sjournal webhook deliver --all`",
                    shown(&Config::path(root))
                ),
            );
        }
        if failing == 0 {
            self.ok(
                "webhooks",
                None,
                format!("{} configured, no delivery failing", config.webhook.len()),
            );
        }
    }
}
