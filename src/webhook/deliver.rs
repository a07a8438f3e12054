//! The deliverer: `sjournal webhook deliver`, which the hook starts detached when an event
//! matches a webhook, and which a person or cron may run too.
//!
//! One deliverer per session at a time (the session's delivery lock). Holding it, for each
//! webhook (in parallel, one thread each) it scans the journal from the webhook's cursor for
//! owed events and POSTs them in seq order. After every attempt it journals a
//! `sjournal.webhook` record (attempt number, outcome, status, redacted error); only after a
//! `delivered` record is durable does the cursor move past the event. A failed attempt is
//! retried after an exponential backoff; when the run's attempts for an event are spent the
//! webhook stops for this run and the event stays owed (nothing is dropped), behind it the
//! later events wait (delivery is ordered).
//!
//! At-least-once: the record follows the POST, so a deliverer killed between the two sends the
//! event again on its next run, with the same `Idempotency-Key`.
//!
//! Nothing stranded: a hook commits its event, then finds the lock free and starts a
//! deliverer, or finds it held and relies on the holder. So the holder, after it releases the
//! lock, scans once more; if anything is owed (committed while it held the lock) it takes the
//! lock again, or leaves it to whoever took it meanwhile (who scans after taking it).

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use serde::Serialize;

use crate::config::webhook::WebhookHandler;
use crate::config::Config;
use crate::error::{Error, Result};
use crate::format::payload::{self, Webhook, WebhookOutcome, KIND_WEBHOOK};
use crate::journal::{Root, SessionPaths, Writer, WriterOptions};
use crate::limits::WEBHOOK_LOCK_WAIT_MS;
use crate::webhook::http::{Endpoint, Meta, Sent};
use crate::webhook::outbox::{self, LastAttempt, Pending};

/// Where `${VAR}`s come from.
pub type Env = Arc<dyn Fn(&str) -> Option<String> + Send + Sync>;

/// The process environment.
pub(crate) fn process_env() -> Env {
    Arc::new(|k: &str| std::env::var(k).ok())
}

#[derive(Clone)]
pub struct DeliverOptions {
    /// Overrides every webhook's `retry.attempts` for this run.
    pub attempts: Option<u32>,
    pub env: Env,
    /// Test seam: called while the deliverer still holds the lock, right before it lets go
    /// (where an event committed by a hook that finds the lock held would be stranded but for
    /// the scan that follows). None in production.
    pub before_release: Option<Arc<dyn Fn() + Send + Sync>>,
}

impl Default for DeliverOptions {
    fn default() -> Self {
        DeliverOptions {
            attempts: None,
            env: process_env(),
            before_release: None,
        }
    }
}

/// What one run did for one webhook of one session.
#[derive(Debug, Clone, Default, Serialize)]
pub struct WebhookRun {
    pub webhook: String,
    /// Events delivered by this run.
    pub delivered: u64,
    /// Failed attempts in this run.
    pub failed_attempts: u64,
    /// Events still owed when the run ended.
    pub pending: u64,
    /// The run stopped retrying this webhook with events owed (attempts spent, or a failure a
    /// retry cannot fix).
    pub stopped: bool,
    /// The last error of this run, redacted.
    pub error: Option<String>,
}

#[derive(Debug)]
pub enum SessionRun {
    /// Another deliverer holds the session's lock; it delivers.
    Busy,
    Ran(Vec<WebhookRun>),
}

/// Delivers what `session_id` owes its webhooks.
pub fn deliver_session(
    root: &Root,
    hooks: &[WebhookHandler],
    session_id: &str,
    opts: &DeliverOptions,
) -> Result<SessionRun> {
    let paths = root.session(session_id)?;
    if !paths.journal.exists() {
        return Err(Error::NoSuchSession {
            session: session_id.to_owned(),
            root: root.dir().to_owned(),
        });
    }
    let dir = outbox::ensure_state_dir(root, &paths)?;
    let mut runs: Vec<WebhookRun> = hooks
        .iter()
        .map(|h| WebhookRun {
            webhook: h.name.clone(),
            ..WebhookRun::default()
        })
        .collect();
    let mut stopped: BTreeSet<usize> = BTreeSet::new();
    let mut ran = false;
    loop {
        let wait = Duration::from_millis(WEBHOOK_LOCK_WAIT_MS);
        let Some(lock) = outbox::acquire(&dir, wait)? else {
            if ran {
                break;
            }
            return Ok(SessionRun::Busy);
        };
        ran = true;
        merge_spool(root, session_id)?;
        let active: Vec<usize> = (0..hooks.len()).filter(|i| !stopped.contains(i)).collect();
        let results: Vec<(usize, Result<Progress>)> = std::thread::scope(|s| {
            let handles: Vec<_> = active
                .iter()
                .map(|&i| {
                    let (paths, dir, hook) = (&paths, &dir, &hooks[i]);
                    let ctx = Ctx {
                        root,
                        paths,
                        dir,
                        opts,
                    };
                    (i, s.spawn(move || deliver_webhook(&ctx, hook)))
                })
                .collect();
            handles
                .into_iter()
                .map(|(i, h)| (i, h.join().expect("a delivery thread panicked")))
                .collect()
        });
        for (i, r) in results {
            let run = &mut runs[i];
            match r {
                Ok(p) => {
                    run.delivered += p.delivered;
                    run.failed_attempts += p.failed;
                    if p.error.is_some() {
                        run.error = p.error;
                    }
                    if p.stopped {
                        run.stopped = true;
                        stopped.insert(i);
                    }
                }
                Err(e) => {
                    run.error = Some(e.to_string());
                    run.stopped = true;
                    stopped.insert(i);
                }
            }
        }
        if let Some(f) = &opts.before_release {
            f();
        }
        drop(lock);
        // The re-check (module docs): owed events of webhooks still going mean another round.
        let mut more = false;
        for (i, hook) in hooks.iter().enumerate() {
            let owed = pending_now(&paths, &dir, hook)?;
            runs[i].pending = owed;
            more |= owed > 0 && !stopped.contains(&i);
        }
        if !more {
            break;
        }
    }
    Ok(SessionRun::Ran(runs))
}

fn pending_now(paths: &SessionPaths, dir: &std::path::Path, hook: &WebhookHandler) -> Result<u64> {
    let cursor = outbox::read_cursor(dir, &hook.name);
    Ok(outbox::scan(paths, hook, cursor.as_ref())?.pending_total)
}

/// Spooled events join the outbox when merged into the journal (the root's spool and the
/// fallback spool configured in config.toml, waiting for the session's lock). What cannot be
/// merged now waits for the next deliverer; the journal's events are delivered meanwhile.
fn merge_spool(root: &Root, session_id: &str) -> Result<()> {
    let opts = Config::load(root)
        .map(|c| c.writer_options())
        .unwrap_or_default();
    crate::session::flush(root, session_id, &opts)?;
    Ok(())
}

struct Ctx<'a> {
    root: &'a Root,
    paths: &'a SessionPaths,
    dir: &'a std::path::Path,
    opts: &'a DeliverOptions,
}

#[derive(Default)]
struct Progress {
    delivered: u64,
    failed: u64,
    stopped: bool,
    error: Option<String>,
}

/// Delivers everything `hook` is owed, in order, until done or stopped.
fn deliver_webhook(ctx: &Ctx<'_>, hook: &WebhookHandler) -> Result<Progress> {
    let mut progress = Progress::default();
    let endpoint = Endpoint::new(hook, &*ctx.opts.env);
    let limit = ctx.opts.attempts.unwrap_or(hook.retry.attempts).max(1);
    loop {
        let cursor = outbox::read_cursor(ctx.dir, &hook.name);
        let mut scan = outbox::scan(ctx.paths, hook, cursor.as_ref())?;
        if let Some(p) = &scan.problem {
            progress.error = Some(p.clone());
        }
        let fresh = scan.cursor_after(None);
        if cursor.as_ref() != Some(&fresh) {
            outbox::write_cursor(ctx.dir, &hook.name, &fresh)?;
        }
        if scan.pending.is_empty() {
            if scan.unplanned.is_some() {
                // Every planned event was delivered before this scan; the cursor now stands
                // at the first one beyond the plan's bound: scan on from there.
                continue;
            }
            return Ok(progress);
        }
        let endpoint = match &endpoint {
            Ok(e) => e,
            Err(u) => {
                // Nothing can be sent until the configuration or environment is fixed.
                let p = scan.pending[0].clone();
                let attempt = scan.attempts.get(&p.seq).copied().unwrap_or(0) + 1;
                let sent = Sent {
                    delivered: false,
                    status: None,
                    error: Some(u.error.clone()),
                    response: None,
                    duration_ms: 0,
                };
                journal(ctx, hook, &p, attempt, &sent, None)?;
                progress.failed += 1;
                progress.error = sent.error;
                progress.stopped = true;
                return Ok(progress);
            }
        };
        for i in 0..scan.pending.len() {
            let p = scan.pending[i].clone();
            let body = match outbox::load(ctx.paths, &p) {
                Ok(b) => b,
                // The journal changed under the plan (recovered, replaced): scan again.
                Err(Error::Changed { .. }) => break,
                Err(e) => return Err(e),
            };
            let mut attempt = scan.attempts.get(&p.seq).copied().unwrap_or(0);
            let mut tries = 0;
            loop {
                attempt += 1;
                tries += 1;
                let key = idempotency_key(ctx.paths, &p);
                let meta = Meta {
                    key: &key,
                    webhook: &hook.name,
                    session_stem: &ctx.paths.stem,
                    seq: p.seq,
                    kind: &p.kind,
                    record_hash: &p.hash.to_hex(),
                    attempt,
                };
                let sent = endpoint.post(body.as_bytes(), &meta);
                let retry_in =
                    (!sent.delivered && tries < limit).then(|| hook.retry.backoff_ms(tries));
                let last = journal(ctx, hook, &p, attempt, &sent, retry_in)?;
                scan.last = Some(last.clone());
                if sent.delivered {
                    progress.delivered += 1;
                    let c = scan.cursor_after(Some(i));
                    outbox::write_cursor(ctx.dir, &hook.name, &c)?;
                    break;
                }
                scan.last_failure = Some(last);
                progress.failed += 1;
                progress.error = sent.error.clone();
                let Some(ms) = retry_in else {
                    progress.stopped = true;
                    // Keep the failure in the cursor for `status`.
                    let c = scan.cursor_after(i.checked_sub(1));
                    outbox::write_cursor(ctx.dir, &hook.name, &c)?;
                    return Ok(progress);
                };
                std::thread::sleep(Duration::from_millis(ms));
            }
        }
        // Everything planned went out: scan again for what came since (or past the plan).
    }
}

/// The `Idempotency-Key` of an event: the same for every attempt and every run.
pub(crate) fn idempotency_key(paths: &SessionPaths, p: &Pending) -> String {
    format!("{}:{}:{}", paths.stem, p.seq, &p.hash.to_hex()[..32])
}

/// Journals one attempt; returns it as `status` shows it.
fn journal(
    ctx: &Ctx<'_>,
    hook: &WebhookHandler,
    p: &Pending,
    attempt: u32,
    sent: &Sent,
    retry_in_ms: Option<u64>,
) -> Result<LastAttempt> {
    let rec = Webhook {
        webhook: hook.name.clone(),
        event_seq: p.seq,
        event_kind: p.kind.clone(),
        key: idempotency_key(ctx.paths, p),
        attempt,
        outcome: if sent.delivered {
            WebhookOutcome::Delivered
        } else {
            WebhookOutcome::Failed
        },
        status: sent.status,
        error: sent.error.clone(),
        response: sent.response.clone(),
        duration_ms: sent.duration_ms,
        url: hook.url.clone(),
        retry_in_ms,
    };
    let bytes = payload::encode_system(&rec);
    let w = Writer::open(ctx.root, &ctx.paths.session_id, &WriterOptions::default())?;
    // Group commit with the hooks of the session: the lock goes before the fsync.
    let a = w.append_batch_and_release(&[(KIND_WEBHOOK, &bytes)])?[0];
    Ok(LastAttempt {
        record_seq: a.seq,
        ts_unix_ns: a.ts_unix_ns,
        event_seq: p.seq,
        attempt,
        outcome: rec.outcome,
        status: rec.status,
        error: rec.error,
    })
}
