//! `sjournal tail --session ID [-n N] [--follow] [--json]`: the last N records (default 10),
//! printed as `log` prints them (`--json`: the same objects, one per line). With `--follow`
//! it keeps polling and prints records as other processes append them, until interrupted
//! (SIGINT) or its output is closed; a session that does not exist yet is waited for.
//!
//! Without `--follow`, a journal that ends in a problem exits 1 after the valid records.
//! With it, bytes that are not a valid record yet are waited on (a write may be in progress);
//! if they stay unchanged for a while, the problem is reported once on stderr.

use std::collections::VecDeque;
use std::io::Write;
use std::time::Duration;

use crate::cli::shared::render;
use crate::cli::{output, Outcome};
use sjournal::audit::follow::Follower;
use sjournal::error::Result;
use sjournal::journal::scan::Stop;
use sjournal::journal::Root;

/// Polls an unchanged problem must last before it is reported.
const PATIENCE_POLLS: u32 = 10;

/// Print a session's last records; with --follow, new ones as they are appended
#[derive(Debug, clap::Args)]
#[command(after_help = crate::cli::EXIT_CODES)]
pub struct Args {
    /// The session: its id, as the host gave it
    #[arg(long)]
    pub session: String,
    /// How many of the existing records to print first
    #[arg(short = 'n', long = "lines", default_value_t = 10, value_name = "N")]
    pub lines: usize,
    /// Keep printing records as they are appended (until interrupted)
    #[arg(short, long)]
    pub follow: bool,
    /// One JSON object per line, as `log --json`
    #[arg(long)]
    pub json: bool,
    /// How often to look for new records, in milliseconds
    #[arg(long, default_value_t = 200, value_name = "MS")]
    pub interval_ms: u64,
}

pub fn run(root: &Root, args: Args) -> Result<Outcome> {
    let pending = crate::cli::pending::settle(root, &args.session)?;
    // A session that does not exist yet is waited for with --follow.
    let paths = match args.follow {
        true => root.session(&args.session)?,
        false => root.existing_session(&args.session)?,
    };
    let mut follower = Follower::new(&paths.journal);
    let mut out = output::stdout();

    // The existing records: only the last N are printed.
    let mut last = VecDeque::with_capacity(args.lines.min(4096));
    let first = follower.poll(|rec| {
        if args.lines > 0 {
            if last.len() == args.lines {
                last.pop_front();
            }
            last.push_back(render(rec, args.json)?);
        }
        Ok(())
    })?;
    for line in &last {
        output::emit(&mut out, line, args.json)?;
    }
    for line in crate::cli::pending::lines(&pending.waiting, args.json)? {
        output::emit(&mut out, &line, args.json)?;
    }
    out.flush().map_err(output::write_err)?;
    if !args.follow {
        return Ok(match first.pending {
            None => Outcome::Ok,
            Some(stop) => {
                warn(&paths.journal, &stop);
                Outcome::Findings
            }
        });
    }

    let interval = Duration::from_millis(args.interval_ms.max(1));
    let mut pending = first.pending.map(|s| (s, first.len, 0u32, false));
    loop {
        if stdout_closed() {
            return Ok(Outcome::Ok);
        }
        std::thread::sleep(interval);
        let poll =
            follower.poll(|rec| output::emit(&mut out, &render(rec, args.json)?, args.json))?;
        if poll.records > 0 {
            out.flush().map_err(output::write_err)?;
        }
        // Report a problem only once it has stayed, unchanged, for a while.
        pending = match (poll.pending, pending) {
            (None, _) => None,
            (Some(stop), Some((prev, len, n, told)))
                if stop == prev && len == poll.len && poll.records == 0 =>
            {
                if n + 1 >= PATIENCE_POLLS && !told {
                    warn(&paths.journal, &stop);
                    Some((stop, len, n + 1, true))
                } else {
                    Some((stop, len, n + 1, told))
                }
            }
            (Some(stop), _) => Some((stop, poll.len, 0, false)),
        };
    }
}

fn warn(path: &std::path::Path, stop: &Stop) {
    output::warn(&format!(
        "sjournal: {}: no valid record at offset {}: {} (run `sjournal inspect` on it)",
        path.display(),
        stop.offset,
        stop.problem
    ));
}

/// True if stdout is a pipe whose reading end was closed (`tail -f | head` after head
/// exits), so a follower with nothing new to print still stops.
fn stdout_closed() -> bool {
    use rustix::event::{poll, PollFd, PollFlags};
    let stdout = rustix::stdio::stdout();
    let mut fds = [PollFd::new(&stdout, PollFlags::empty())];
    let zero = rustix::event::Timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    matches!(poll(&mut fds, Some(&zero)), Ok(n) if n > 0)
        && fds[0].revents().intersects(PollFlags::ERR | PollFlags::HUP)
}
