//! The hook's worker thread, started before the configuration is read: it reads
//! `config.toml` first (so that a read that blocks, on a hung network mount, costs the hook at
//! most the wait the caller allows, as [`Config::load_within`] does), then waits for the
//! hook's work ([`super::run_on`]). One thread start instead of two: on this path a thread
//! start (a stack mapping, its guard page, the signal stack, the exit) is a measurable share
//! of the whole hook (BENCHMARKS.md, "Lean hook path").

use std::sync::mpsc::{self, Receiver, Sender};
use std::time::Duration;

use crate::hook::config::{Config, ConfigError};
use crate::journal::Root;

pub(super) type Job = Box<dyn FnOnce() + Send + 'static>;

/// A started worker thread: [`WorkerThread::config`] waits for the configuration it reads,
/// then [`super::run_on`] hands it the hook's work.
pub struct WorkerThread {
    config: Option<Receiver<Result<Config, ConfigError>>>,
    jobs: Option<Sender<Job>>,
    root: Root,
    thread: Option<std::thread::Thread>,
    /// The configuration did not arrive in time: the thread may still be blocked reading it,
    /// so the hook's work must not wait behind it.
    stuck: bool,
}

impl WorkerThread {
    /// Starts the thread, which begins reading `<root>/config.toml` at once. If no thread can
    /// be started, [`WorkerThread::config`] reads the file on the calling thread.
    pub fn start(root: &Root) -> WorkerThread {
        let (config_tx, config_rx) = mpsc::channel();
        let (job_tx, job_rx) = mpsc::channel::<Job>();
        let r = root.clone();
        let spawned = std::thread::Builder::new()
            .name("sjournal-hook".into())
            .spawn(move || {
                if config_tx.send(Config::load(&r)).is_err() {
                    return;
                }
                // One job, if the caller sends one; none once it has dropped its handle.
                if let Ok(job) = job_rx.recv() {
                    job();
                }
            });
        let thread = spawned.ok().map(|h| h.thread().clone());
        let started = thread.is_some();
        WorkerThread {
            config: started.then_some(config_rx),
            jobs: started.then_some(job_tx),
            root: root.clone(),
            thread,
            stuck: false,
        }
    }

    /// The configuration, waited for at most `within` (then an error saying so, and the
    /// thread is not given the hook's work).
    pub fn config(&mut self, within: Duration) -> Result<Config, ConfigError> {
        let Some(rx) = self.config.take() else {
            return Config::load(&self.root);
        };
        match rx.recv_timeout(within) {
            Ok(c) => c,
            Err(_) => {
                // Timed out, or the reader died: the same answer as `Config::load_within`.
                self.stuck = true;
                Err(ConfigError {
                    path: Config::path(&self.root),
                    message: format!("could not be read within {} ms", within.as_millis()),
                })
            }
        }
    }

    /// The started thread's id (None if none could be started): the thread that will do the
    /// hook's work if it can take it.
    pub fn id(&self) -> Option<std::thread::ThreadId> {
        self.thread.as_ref().map(|t| t.id())
    }

    /// Hands `job` to the thread; gives it back if the thread cannot take it (never started,
    /// still reading the configuration, or gone).
    pub(super) fn run(mut self, job: Job) -> Result<(), Job> {
        match (self.stuck || self.config.is_some(), self.jobs.take()) {
            (false, Some(tx)) => tx.send(job).map_err(|e| e.0),
            _ => Err(job),
        }
    }
}

impl std::fmt::Debug for WorkerThread {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WorkerThread")
            .field("started", &self.jobs.is_some())
            .field("stuck", &self.stuck)
            .finish()
    }
}
