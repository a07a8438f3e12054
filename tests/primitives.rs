//! Hook-author primitives under contention: racing callers never exceed a fire maximum,
//! exactly one of them wins a once key, and of writers racing to compare-and-set one slot
//! exactly one wins each round while the others get a conflict naming the current seq. Lists
//! stay bounded; bad input is refused before anything is appended; a record forged around
//! the checks changes nothing when folded.

use crate::support;

use std::sync::{Arc, Barrier};

use sjournal::error::Error;
use sjournal::format::payload::{self as p, encode_system};
use sjournal::journal::{Root, Writer, WriterOptions};
use sjournal::primitives;
use support::{replay, temp_root};

const S: &str = "prim";

fn race<T: Send + 'static>(
    root: &Root,
    n: usize,
    f: impl Fn(&Root, usize) -> T + Send + Sync + 'static,
) -> Vec<T> {
    let barrier = Arc::new(Barrier::new(n));
    let f = Arc::new(f);
    let handles: Vec<_> = (0..n)
        .map(|i| {
            let (root, barrier, f) = (root.clone(), barrier.clone(), f.clone());
            std::thread::spawn(move || {
                barrier.wait();
                f(&root, i)
            })
        })
        .collect();
    handles.into_iter().map(|h| h.join().unwrap()).collect()
}

#[test]
fn racing_fires_never_exceed_the_maximum() {
    let (_d, root) = temp_root();
    let opts = WriterOptions::default();
    let fired = race(&root, 8, |r, _| {
        primitives::fire(r, S, "lint", Some(3), &WriterOptions::default()).unwrap()
    });
    assert_eq!(fired.iter().filter(|f| f.fired).count(), 3);
    let mut counts: Vec<u64> = fired.iter().filter(|f| f.fired).map(|f| f.count).collect();
    counts.sort();
    assert_eq!(counts, [1, 2, 3]);
    let s = replay(&root, S);
    assert_eq!(s.primitives.fires["lint"].count, 3);
    assert_eq!(s.seq, 3, "refused fires append nothing");
    let f = primitives::fire(&root, S, "lint", None, &opts).unwrap();
    assert!(f.fired && f.count == 4, "no maximum: always fires");
}

#[test]
fn exactly_one_racer_gets_a_once_key() {
    let (_d, root) = temp_root();
    let opts = WriterOptions::default();
    let got = race(&root, 8, |r, i| {
        let keys = ["intro".to_owned(), format!("own-{i}")];
        primitives::once(r, S, &keys, &WriterOptions::default()).unwrap()
    });
    assert_eq!(
        got.iter()
            .filter(|k| k.contains(&"intro".to_owned()))
            .count(),
        1
    );
    assert!(got
        .iter()
        .enumerate()
        .all(|(i, k)| k.contains(&format!("own-{i}"))));
    let s = replay(&root, S);
    assert_eq!(s.primitives.once.len(), 9);
    assert!(primitives::once(&root, S, &["intro".to_owned()], &opts)
        .unwrap()
        .is_empty());
    let keys = ["intro".to_owned(), "new".to_owned(), "new".to_owned()];
    assert_eq!(primitives::unseen(&s, &keys), ["new"]);
}

#[test]
fn compare_and_set_lets_one_racer_win_each_round() {
    let (_d, root) = temp_root();
    let opts = WriterOptions::default();
    let mut expect = 0;
    for round in 0..5 {
        let results = race(&root, 6, move |r, i| {
            primitives::slot_set(
                r,
                S,
                "plan",
                &format!(r#"{{"round":{round},"by":{i}}}"#),
                Some(expect),
                Some("object"),
                &WriterOptions::default(),
            )
        });
        let wins: Vec<_> = results.iter().filter_map(|r| r.as_ref().ok()).collect();
        assert_eq!(wins.len(), 1, "round {round}");
        let won = wins[0].first_seq().unwrap();
        for r in &results {
            match r {
                Ok(_) => {}
                Err(Error::Conflict {
                    expected,
                    found,
                    slot,
                    ..
                }) => {
                    assert_eq!((*expected, *found, slot.as_str()), (expect, won, "plan"));
                }
                Err(e) => panic!("unexpected error {e}"),
            }
        }
        expect = won;
    }
    let s = replay(&root, S);
    let slot = &s.primitives.slots["plan"];
    assert_eq!((slot.seq, slot.json_type.as_str()), (expect, "object"));
    assert!(slot.value.contains("\"round\":4"));
    assert_eq!(s.seq, 5, "losers append nothing");

    let wrong_type = primitives::slot_set(&root, S, "plan", "3", None, Some("object"), &opts);
    assert!(matches!(wrong_type, Err(Error::InvalidInput { .. })));
    let retyped = primitives::slot_set(&root, S, "plan", "[1]", None, Some("array"), &opts);
    assert!(
        matches!(retyped, Err(Error::InvalidInput { .. })),
        "the slot holds an object"
    );
    let not_json = primitives::slot_set(&root, S, "other", "{x", None, None, &opts);
    assert!(matches!(not_json, Err(Error::InvalidInput { .. })));
    assert_eq!(replay(&root, S).seq, 5);
}

#[test]
fn lists_keep_their_last_items() {
    let (_d, root) = temp_root();
    let opts = WriterOptions::default();
    for i in 0..7 {
        primitives::list_push(&root, S, "notes", &format!("\"n{i}\""), Some(3), &opts).unwrap();
    }
    let s = replay(&root, S);
    let l = &s.primitives.lists["notes"];
    let items: Vec<&str> = l.items.iter().map(|i| i.value.as_str()).collect();
    assert_eq!(
        (items, l.pushed, l.max),
        (vec!["\"n4\"", "\"n5\"", "\"n6\""], 7, 3)
    );
    assert!(primitives::list_push(&root, S, "notes", "1", Some(0), &opts).is_err());
    primitives::list_clear(&root, S, "notes", &opts).unwrap();
    assert!(replay(&root, S).primitives.lists.is_empty());
}

#[test]
fn forged_records_are_rejected_by_the_fold() {
    let (_d, root) = temp_root();
    let opts = WriterOptions::default();
    let a = primitives::slot_set(&root, S, "plan", "1", None, None, &opts).unwrap();
    let mut w = Writer::open(&root, S, &opts).unwrap();
    let forged = [
        (
            p::KIND_SLOT_SET,
            encode_system(&p::SlotSet {
                name: "plan".into(),
                value: "2".into(),
                expect_seq: Some(a.first_seq().unwrap() + 7),
            }),
        ),
        (
            p::KIND_FIRE,
            encode_system(&p::Fire {
                name: "x".into(),
                max: Some(0),
            }),
        ),
        (
            p::KIND_ONCE,
            encode_system(&p::Once {
                keys: vec![String::new()],
            }),
        ),
        (
            p::KIND_LIST_PUSH,
            encode_system(&p::ListPush {
                name: "l".into(),
                value: "x".repeat(20_000),
                max: None,
            }),
        ),
    ];
    for (k, pl) in &forged {
        w.append(k, pl).unwrap();
    }
    drop(w);
    let s = replay(&root, S);
    assert_eq!(s.primitives.slots["plan"].value, "1");
    assert_eq!(s.primitives.rejected, 4);
    assert!(
        s.primitives.fires.is_empty()
            && s.primitives.once.is_empty()
            && s.primitives.lists.is_empty()
    );
}
