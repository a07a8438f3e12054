//! `ship` killed at every step, and shippers racing: exactly once by construction. A test
//! seam (`ship::Seam`) stops a run at each step in turn — before the header PUT, after the
//! LIST, before a quarantine PUT, before a segment PUT, after a segment was created but before
//! the cursor was written, after adopting an existing segment, before each cursor write — then
//! a clean run finishes the job. Afterwards the remote reassembles byte for byte to the local
//! journal and no seq is in two objects. Two (and four) shippers on one session at once: all
//! succeed, one object per seq. On every backend, the real S3 server included in CI.
#![cfg(feature = "remote")]

use crate::support;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use sjournal::journal::Root;
use sjournal::remote::error::RemoteError;
use sjournal::remote::ship::{ship_journal, NoFaults, Seam, Step};
use sjournal::remote::{cursor, Remote};
use support::remote::*;

/// Crashes at the n-th step (counting from 0), and records every step seen.
struct CrashAt {
    n: usize,
    seen: AtomicUsize,
    steps: std::sync::Mutex<Vec<Step>>,
}

impl Seam for CrashAt {
    fn at(&self, step: &Step) -> Result<(), RemoteError> {
        self.steps.lock().unwrap().push(step.clone());
        if self.seen.fetch_add(1, Ordering::SeqCst) == self.n {
            return Err(RemoteError::Injected(format!("{step:?}")));
        }
        Ok(())
    }
}

fn crash_at(n: usize) -> CrashAt {
    CrashAt {
        n,
        seen: AtomicUsize::new(0),
        steps: Default::default(),
    }
}

#[tokio::test]
async fn a_crash_at_every_step_then_a_clean_run() {
    let d = tempfile::tempdir().unwrap();
    for (name, _) in backends("probe", d.path()).await {
        // Count the steps of the whole scenario once, then crash at each in turn.
        let mut n = 0;
        loop {
            let dir = d.path().join(format!("{name}-{n}"));
            std::fs::create_dir_all(&dir).unwrap();
            let remote = match name {
                "memory" => {
                    Remote::with_store(Arc::new(object_store::memory::InMemory::new()), "p")
                }
                "dir" => Remote::open(&format!("file://{}", dir.join("bucket").display())).unwrap(),
                _ => s3_remote("crash").await.unwrap(),
            };
            let root = Root::new(dir.join("root"));
            let id = identity(&dir);
            // A journal with a quarantine file (a torn tail cut by the next append) and enough
            // records for several segments.
            append(&root, "s", 0, 10, 300);
            let j = journal(&root, "s");
            let mut f = std::fs::OpenOptions::new().append(true).open(&j).unwrap();
            std::io::Write::write_all(&mut f, &[0xAA; 30]).unwrap();
            drop(f);
            append(&root, "s", 10, 120, 70_000);
            let seam = crash_at(n);
            let cursors = cursor::dir_for(&root, remote.url());
            let first = ship_journal(&remote, &j, &id, &cursors, &seam).await;
            let crashed = first
                .as_ref()
                .is_err_and(|e| e.to_string().contains("injected"));
            // What the other shipper (or a retry) saw: a second crash-free run completes it.
            let r = ship_journal(
                &remote,
                &j,
                &id,
                &cursor::dir_for(&root, remote.url()),
                &NoFaults,
            )
            .await
            .unwrap();
            assert!(r.ok(), "{name} crash at {n}: {}", r.summary());
            assert_eq!(r.last_seq, 121, "{name} crash at {n}");
            assert_exactly_once(&remote, &main_loc("s"), &j, true).await;
            let keys = remote.list("v1/").await.unwrap();
            assert!(
                keys.iter().any(|k| k.contains("/quarantine/")),
                "{name}: {keys:?}"
            );
            if !crashed {
                let steps = seam.steps.lock().unwrap().clone();
                for want in ["Header", "Quarantine", "Segment", "Created", "Cursor"] {
                    assert!(
                        steps.iter().any(|s| format!("{s:?}").starts_with(want)),
                        "{name}: step {want} never happened: {steps:?}"
                    );
                }
                eprintln!("{name}: crashed at each of {n} steps");
                break;
            }
            n += 1;
        }
        assert!(n >= 8, "{name}: only {n} steps");
        if name == "s3" {
            // The real server is slow to churn through buckets: one full pass is enough.
            break;
        }
    }
}

#[tokio::test]
async fn a_crash_after_create_is_adopted_by_the_next_run() {
    let d = tempfile::tempdir().unwrap();
    for (name, remote) in backends("adopt", d.path()).await {
        let root = Root::new(d.path().join(format!("r-{name}")));
        let id = identity(d.path());
        let cursors = cursor::dir_for(&root, remote.url());
        append(&root, "s", 0, 10, 300);
        let j = journal(&root, "s");
        struct AfterCreate;
        impl Seam for AfterCreate {
            fn at(&self, s: &Step) -> Result<(), RemoteError> {
                match s {
                    Step::Created(_) => Err(RemoteError::Injected("after create".into())),
                    _ => Ok(()),
                }
            }
        }
        assert!(ship_journal(&remote, &j, &id, &cursors, &AfterCreate)
            .await
            .is_err());
        let r = ship_journal(&remote, &j, &id, &cursors, &NoFaults)
            .await
            .unwrap();
        assert_eq!(
            (r.adopted, r.created, r.last_seq),
            (1, 0, 10),
            "{name}: {}",
            r.summary()
        );
        assert_exactly_once(&remote, &main_loc("s"), &j, true).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn shippers_racing_on_one_session() {
    let d = tempfile::tempdir().unwrap();
    for (name, remote) in backends("race", d.path()).await {
        let root = Root::new(d.path().join(format!("r-{name}")));
        let id = identity(d.path());
        append(&root, "s", 0, 50, 60_000);
        let j = journal(&root, "s");
        for round in 0..3 {
            // Each shipper has its own cursor directory (as two machines' views would), or
            // shares one (two processes on one machine): both must hold.
            let mut tasks = Vec::new();
            for k in 0..4 {
                let (remote, j, id) = (remote.clone(), j.clone(), id.clone());
                let cursors = if k % 2 == 0 {
                    cursor::dir_for(&root, remote.url())
                } else {
                    d.path().join(format!("cursors-{name}-{k}"))
                };
                tasks.push(tokio::spawn(async move {
                    ship_journal(&remote, &j, &id, &cursors, &NoFaults).await
                }));
            }
            for t in tasks {
                let r = t.await.unwrap().unwrap();
                assert!(r.ok(), "{name} round {round}: {}", r.summary());
            }
            assert_exactly_once(&remote, &main_loc("s"), &j, true).await;
            append(&root, "s", 50 + round * 30, 80 + round * 30, 50_000);
        }
    }
}

#[tokio::test]
async fn a_crash_at_every_step_of_a_walk_over_the_listed_segments() {
    // The cursor is lost after several segments were shipped: the next run LISTs the remote
    // and walks it, adopting each segment after comparing its bytes ("mid-list"), then ships
    // the rest. Crash at each step of that run, then finish cleanly.
    let d = tempfile::tempdir().unwrap();
    let mut n = 0;
    loop {
        let dir = d.path().join(format!("walk-{n}"));
        std::fs::create_dir_all(&dir).unwrap();
        let remote = Remote::with_store(Arc::new(object_store::memory::InMemory::new()), "p");
        let root = Root::new(dir.join("root"));
        let id = identity(&dir);
        let j = journal(&root, "s");
        let cursors = cursor::dir_for(&root, remote.url());
        for k in 0..4 {
            append(&root, "s", k * 10, k * 10 + 10, 300);
            ship_journal(&remote, &j, &id, &cursors, &NoFaults)
                .await
                .unwrap();
        }
        std::fs::remove_dir_all(&cursors).unwrap();
        append(&root, "s", 40, 45, 300);
        let seam = crash_at(n);
        let crashed = ship_journal(&remote, &j, &id, &cursors, &seam)
            .await
            .is_err_and(|e| e.to_string().contains("injected"));
        let r = ship_journal(&remote, &j, &id, &cursors, &NoFaults)
            .await
            .unwrap();
        assert!(r.ok(), "crash at {n}: {}", r.summary());
        assert_eq!(r.last_seq, 45);
        assert_exactly_once(&remote, &main_loc("s"), &j, true).await;
        if !crashed {
            let steps = seam.steps.lock().unwrap().clone();
            let adopted = steps
                .iter()
                .filter(|s| matches!(s, Step::Adopted(_)))
                .count();
            assert_eq!(adopted, 4, "{steps:?}");
            assert!(steps.contains(&Step::Listed), "{steps:?}");
            break;
        }
        n += 1;
    }
    assert!(n >= 12, "only {n} steps");
}
