//! Crash loop: a process appending in a loop is SIGKILLed at random moments, many times, on a
//! real disk. Two kinds of appender: a shell loop running the real `sjournal append` once per
//! event (as hosts run hooks: the kill lands anywhere in a process's life, from startup and
//! recovery to the write and the fsync), and one long-lived process appending through the
//! library, mixing small records with large batches so that kills also land inside writes.
//! A record counts as durable once the appender has printed its seq and hash (the appender
//! prints only after the fsync returned). After every kill: every durable record is in the
//! journal with the same seq and hash, the next open recovers whatever the kill left, and the
//! journal then verifies. The random delays come from a seed printed with every failure.

use crate::support;

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use sjournal::format::Hash;
use sjournal::journal::{verify_file, JournalReader, Root, Writer};

const SESSION: &str = "crash-session";
const KILLS: usize = 30;
const CHILD_ENV: &str = "SJOURNAL_CRASH_CHILD_ROOT";

/// Kills the child's whole process group (the shell and the `sjournal` it is running) and
/// returns everything it printed.
fn kill_and_collect(mut child: Child) -> String {
    let pid = child.id() as libc::pid_t;
    // SAFETY: plain syscall; the group was created for this child (`process_group(0)`).
    let r = unsafe { libc::kill(-pid, libc::SIGKILL) };
    assert_eq!(r, 0, "kill: {}", std::io::Error::last_os_error());
    let mut out = String::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut out)
        .unwrap();
    let status = child.wait().unwrap();
    assert_eq!(
        status.signal(),
        Some(libc::SIGKILL),
        "the appender exited by itself: {status:?}"
    );
    out
}

/// Complete lines only: the kill may cut the last one.
fn complete_lines(out: &str) -> impl Iterator<Item = &str> {
    let end = out.rfind('\n').map_or(0, |i| i + 1);
    out[..end].lines()
}

/// After a kill: every durable record is present; the next open recovers; verify passes.
fn check_round(root: &Root, durable: &BTreeMap<u64, Hash>, what: &str) {
    let path = root.session(SESSION).unwrap().journal;
    if !path.exists() {
        // Killed before the first append created the journal.
        assert!(durable.is_empty(), "{what}: durable records but no journal");
        return;
    }
    {
        let reader = JournalReader::open(&path, None).unwrap();
        let present: BTreeMap<u64, Hash> = match reader.records() {
            Ok(records) => records
                .map_while(Result::ok)
                .map(|r| (r.seq, r.hash))
                .collect(),
            // Killed between creating the file and syncing its header: no record yet.
            Err(e) => {
                assert!(durable.is_empty(), "{what}: {e}");
                BTreeMap::new()
            }
        };
        for (seq, hash) in durable {
            assert_eq!(
                present.get(seq),
                Some(hash),
                "{what}: durable seq {seq} missing or changed"
            );
        }
    }
    let w = Writer::open(root, SESSION, &support::opts())
        .unwrap_or_else(|e| panic!("{what}: reopen after the kill: {e}"));
    let recovered = w.recovery().is_some();
    drop(w);
    let report = verify_file(&path, None).unwrap();
    assert!(report.ok, "{what} (recovered: {recovered}): {report:?}");
    assert!(report.last_seq >= durable.keys().last().copied().unwrap_or(0));
}

fn random_delay(rng: &mut fastrand::Rng) {
    std::thread::sleep(Duration::from_millis(rng.u64(5..150)));
}

fn seed() -> u64 {
    let s = fastrand::u64(..);
    eprintln!("crash loop seed {s}");
    s
}

/// The real binary, one process per event, killed at random moments.
#[test]
fn sigkill_the_real_binary_in_a_loop() {
    let dir = support::disk_dir();
    let root = Root::new(dir.path());
    let seed = seed();
    let mut rng = fastrand::Rng::with_seed(seed);
    let script = r#"i=0; while :; do i=$((i+1)); printf '{"round":%s,"i":%s,"pad":"%0200d"}' "$R" "$i" 0 | "$BIN" --root "$ROOT" append --session "$S" --kind Ev || exit 3; done"#;
    let mut durable = BTreeMap::new();
    for round in 0..KILLS {
        let child = Command::new("sh")
            .args(["-c", script])
            .env("BIN", support::bin())
            .env("ROOT", dir.path())
            .env("S", SESSION)
            .env("R", round.to_string())
            .stdout(Stdio::piped())
            .process_group(0)
            .spawn()
            .unwrap();
        random_delay(&mut rng);
        let out = kill_and_collect(child);
        for line in complete_lines(&out) {
            let v: serde_json::Value = serde_json::from_str(line)
                .unwrap_or_else(|e| panic!("seed {seed}: bad line {line:?}: {e}"));
            let seq = v["seq"].as_u64().unwrap();
            let hash = Hash::from_hex(v["hash"].as_str().unwrap()).unwrap();
            assert_eq!(v.get("rescued"), None, "seed {seed}: an append was rescued");
            assert!(
                durable.insert(seq, hash).is_none(),
                "seed {seed}: seq {seq} twice"
            );
        }
        check_round(&root, &durable, &format!("seed {seed}, round {round}"));
    }
    // Not a rate (the machine may be slow), only proof that the loop did append.
    assert!(
        !durable.is_empty(),
        "seed {seed}: no record was acknowledged"
    );
}

/// A long-lived appender, killed at random moments, often inside a write or an fsync.
#[test]
fn sigkill_a_long_lived_appender() {
    let dir = support::disk_dir();
    let root = Root::new(dir.path());
    let seed = seed();
    let mut rng = fastrand::Rng::with_seed(seed);
    let mut durable = BTreeMap::new();
    for round in 0..KILLS {
        let child = Command::new(std::env::current_exe().unwrap())
            .args([&support::test_name(module_path!(), "child_appender")])
            .args(["--exact", "--ignored", "--nocapture"])
            .args(["--test-threads=1", "-q"])
            .env(CHILD_ENV, dir.path())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .process_group(0)
            .spawn()
            .unwrap();
        random_delay(&mut rng);
        let out = kill_and_collect(child);
        for line in complete_lines(&out) {
            let Some(rest) = line.strip_prefix("DURABLE ") else {
                continue;
            };
            let (seq, hash) = rest.split_once(' ').unwrap();
            let seq: u64 = seq.parse().unwrap();
            let hash = Hash::from_hex(hash).unwrap();
            assert!(
                durable.insert(seq, hash).is_none(),
                "seed {seed}: seq {seq} twice"
            );
        }
        check_round(&root, &durable, &format!("seed {seed}, round {round}"));
    }
    // Not a rate (the machine may be slow), only proof that the loop did append.
    assert!(
        !durable.is_empty(),
        "seed {seed}: no record was acknowledged"
    );
}

/// The long-lived appender: appends until killed, printing each record once it is durable.
/// Small single records alternate with batches of large ones (64 KiB in one write).
#[test]
#[ignore = "the child process of sigkill_a_long_lived_appender, not a test by itself"]
fn child_appender() {
    let Some(dir) = std::env::var_os(CHILD_ENV) else {
        return;
    };
    let root = Root::new(Path::new(&dir));
    let mut w = Writer::open(&root, SESSION, &support::opts()).unwrap();
    let big = sjournal::format::payload::encode_event_json(&support::event_json(0, 16 * 1024));
    let mut out = std::io::stdout().lock();
    for i in 0.. {
        let acked = if i % 8 == 7 {
            let items = vec![("Big", big.as_slice()); 4];
            w.append_batch(&items).unwrap()
        } else {
            vec![w
                .append(
                    "Ev",
                    &sjournal::fold::digest::encode_event("Ev", &support::event_json(i, 100)),
                )
                .unwrap()]
        };
        for a in acked {
            writeln!(out, "DURABLE {} {}", a.seq, a.hash).unwrap();
        }
        out.flush().unwrap();
    }
}
