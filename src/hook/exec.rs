//! Exec handlers: commands from the configuration run for an event, concurrently, with the
//! event JSON on stdin. A tokio runtime is started only when a handler matches, so the common
//! hook path pays nothing for it.
//!
//! Each handler runs in its own process group; at its timeout the whole group gets SIGKILL,
//! so a handler that forked (a shell pipeline) cannot hold the hook past its deadline. The
//! result is an [`Exec`] record whatever happened: exit status, duration, stdout (cut at
//! [`EXEC_OUTPUT_MAX_BYTES`]) and the end of stderr.

use std::process::Stdio;
use std::time::{Duration, Instant};

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};

use crate::config::ExecHandler;
use crate::format::payload::{Exec, ExecOutcome};
use crate::limits::EXEC_OUTPUT_MAX_BYTES;

/// Runs `handlers` for one event and returns one record per handler, in the same order.
/// Every handler is done (or killed) by `deadline`. `event_seq` in the records is 0: the
/// caller sets it once the event's seq is known.
pub fn run_handlers(
    handlers: &[&ExecHandler],
    event_json: &[u8],
    session_id: &str,
    deadline: Instant,
) -> Vec<Exec> {
    if handlers.is_empty() {
        return Vec::new();
    }
    let rt = match tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .enable_time()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            return handlers
                .iter()
                .map(|h| failed(h, format!("could not start the exec runtime: {e}"), 0))
                .collect()
        }
    };
    rt.block_on(async {
        let runs = handlers
            .iter()
            .map(|h| run_one(h, event_json, session_id, deadline));
        join_all(runs).await
    })
}

async fn join_all<F: std::future::Future>(futs: impl Iterator<Item = F>) -> Vec<F::Output> {
    // Polled together on the one runtime thread; order is kept.
    let futs: Vec<_> = futs.map(Box::pin).collect();
    let mut out: Vec<Option<F::Output>> = futs.iter().map(|_| None).collect();
    let mut futs: Vec<_> = futs.into_iter().map(Some).collect();
    std::future::poll_fn(|cx| {
        let mut pending = false;
        for (i, slot) in futs.iter_mut().enumerate() {
            if let Some(f) = slot {
                match f.as_mut().poll(cx) {
                    std::task::Poll::Ready(v) => {
                        out[i] = Some(v);
                        *slot = None;
                    }
                    std::task::Poll::Pending => pending = true,
                }
            }
        }
        if pending {
            std::task::Poll::Pending
        } else {
            std::task::Poll::Ready(())
        }
    })
    .await;
    out.into_iter()
        .map(|v| v.expect("every future finished"))
        .collect()
}

fn failed(h: &ExecHandler, error: String, duration_ms: u64) -> Exec {
    Exec {
        event_seq: 0,
        name: h.name.clone(),
        command: h.command.clone(),
        outcome: ExecOutcome::SpawnFailed,
        exit_code: None,
        signal: None,
        duration_ms,
        stdout: String::new(),
        stdout_truncated: false,
        stderr: String::new(),
        context: h.context,
        error: Some(error),
    }
}

async fn run_one(h: &ExecHandler, input: &[u8], session_id: &str, deadline: Instant) -> Exec {
    let start = Instant::now();
    let limit = Duration::from_millis(h.timeout_ms).min(deadline.saturating_duration_since(start));
    let mut cmd = tokio::process::Command::new(&h.command[0]);
    cmd.args(&h.command[1..])
        .env("SJOURNAL_SESSION_ID", session_id)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true);
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => {
            return failed(
                h,
                format!("could not start {:?}: {e}", h.command[0]),
                ms(start),
            )
        }
    };
    let pid = child.id();
    let mut stdin = child.stdin.take();
    let mut stdout = child.stdout.take();
    let mut stderr = child.stderr.take();
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let (mut out_cut, mut err_cut) = (false, false);
    let waited = tokio::time::timeout(limit, async {
        let feed = async {
            if let Some(mut s) = stdin.take() {
                // A handler that does not read its stdin is fine.
                let _ = s.write_all(input).await;
            }
        };
        tokio::join!(
            feed,
            drain(stdout.as_mut(), &mut out, &mut out_cut, false),
            drain(stderr.as_mut(), &mut err, &mut err_cut, true),
        );
        child.wait().await
    })
    .await;
    let mut rec = Exec {
        event_seq: 0,
        name: h.name.clone(),
        command: h.command.clone(),
        outcome: ExecOutcome::Exited,
        exit_code: None,
        signal: None,
        duration_ms: 0,
        stdout: String::new(),
        stdout_truncated: false,
        stderr: String::new(),
        context: h.context,
        error: None,
    };
    match waited {
        Ok(Ok(status)) => {
            use std::os::unix::process::ExitStatusExt;
            rec.exit_code = status.code();
            rec.signal = status.signal();
            if status.signal().is_some() {
                rec.outcome = ExecOutcome::Signaled;
            }
        }
        Ok(Err(e)) => {
            rec.outcome = ExecOutcome::SpawnFailed;
            rec.error = Some(format!("waiting for it failed: {e}"));
        }
        Err(_) => {
            if let Some(pid) = pid.and_then(|p| rustix::process::Pid::from_raw(p as i32)) {
                // The handler leads its own group (`process_group(0)`): this reaches whatever
                // it started, and nothing else.
                let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
            }
            let _ = child.start_kill();
            rec.outcome = ExecOutcome::Timeout;
            rec.error = Some(format!("killed after {} ms", limit.as_millis()));
        }
    }
    rec.duration_ms = ms(start);
    rec.stdout = String::from_utf8_lossy(&out).into_owned();
    rec.stdout_truncated = out_cut;
    rec.stderr = String::from_utf8_lossy(&err).into_owned();
    rec
}

/// Reads a pipe to its end, keeping the first (or, with `tail`, the last) bytes up to the
/// limit; reading on past the limit keeps the handler from blocking on a full pipe.
async fn drain<R: AsyncRead + Unpin>(
    r: Option<&mut R>,
    buf: &mut Vec<u8>,
    cut: &mut bool,
    tail: bool,
) {
    let Some(r) = r else { return };
    let mut chunk = [0u8; 8192];
    loop {
        match r.read(&mut chunk).await {
            Ok(0) | Err(_) => return,
            Ok(n) => {
                buf.extend_from_slice(&chunk[..n]);
                if buf.len() > EXEC_OUTPUT_MAX_BYTES {
                    *cut = true;
                    if tail {
                        let drop = buf.len() - EXEC_OUTPUT_MAX_BYTES;
                        buf.drain(..drop);
                    } else {
                        buf.truncate(EXEC_OUTPUT_MAX_BYTES);
                    }
                }
            }
        }
    }
}

fn ms(since: Instant) -> u64 {
    since.elapsed().as_millis() as u64
}
