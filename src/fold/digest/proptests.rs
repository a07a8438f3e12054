//! Generated events read back from their digests of every version as what a digest keeps of
//! them (a round trip; that a digest reads as the event's JSON parses is `tests/digests.rs`),
//! and hostile digests of version 3 (any byte changed, cut, added or dropped) read as some
//! event or as None: the second property fails only by panicking (a fuzz-style check).

use std::borrow::Cow;

use proptest::prelude::*;

use super::encode::{HOSTS, KINDS};
use super::*;
use crate::event::RawJson;

/// What a digest keeps of `e`: all but `turn_id`, `outcome_unknown` and a response no fold
/// reads (see [`encode`]).
fn kept<'a>(e: &Event<'a>) -> String {
    let mut k = e.clone();
    k.turn_id = None;
    k.origin = Default::default();
    if let Some(t) = &mut k.tool {
        t.response = t.read_response();
        t.outcome_unknown = false;
    }
    format!("{k:?}")
}

/// Picks field `n`'s str if bit `n` of `set` is set.
fn pick(set: u64, strs: &[String], n: usize) -> Option<&str> {
    (set >> n & 1 == 1).then(|| strs[n].as_str())
}

/// An event with the fields of `set` (one bit per field, 40 of them) taken from `strs`.
fn event<'a>(
    codes: (usize, usize),
    set: u64,
    strs: &'a [String],
    nums: (u64, i64, f64),
) -> Event<'a> {
    let s = |n| pick(set, strs, n).map(Cow::Borrowed);
    let r = |n| pick(set, strs, n).map(RawJson::kept);
    let mut e = Event::bare(HOSTS[codes.0], KINDS[codes.1], Cow::Borrowed(&strs[39]));
    e.parsed = set >> 35 & 1 == 1;
    (e.session_id, e.cwd, e.model, e.permission_mode) = (s(0), s(1), s(2), s(3));
    (e.prompt_id, e.agent_id, e.agent_type, e.turn_id) = (s(4), s(5), s(6), s(38));
    e.tool = pick(set, strs, 7).map(|name| Tool {
        name: name.into(),
        use_id: s(8),
        input: r(9),
        response: r(10),
        failed: set >> 36 & 1 == 1,
        outcome_unknown: set >> 37 & 1 == 1,
        duration_ms: s(11).map(|_| nums.0),
        detail: s(12),
        exit_code: s(13).map(|_| nums.1),
        interrupted: set >> 38 & 1 == 1,
    });
    (e.prompt, e.source, e.trigger, e.reason) = (s(14), s(15), s(16), s(17));
    (e.error, e.message, e.file_path) = (s(18), s(19), s(20));
    e.file_touch = s(21).map(|p| ([FileOp::Read, FileOp::Write, FileOp::Edit][p.len() % 3], p));
    (e.new_cwd, e.summary, e.custom_instructions) = (s(22), s(23), s(24));
    (e.session_kind, e.parent_session) = (s(25), s(26));
    e.session_duration_ms = s(27).map(|_| nums.0 / 3);
    e.context_usage_percent = s(28).map(|_| nums.2);
    e.message_count = s(29).map(|_| nums.0 >> 20);
    (e.turn_tool_calls, e.background_tasks) = (r(30), r(31));
    (e.task_id, e.task_subject) = (s(32), s(33));
    e.model_messages = pick(set, strs, 34).map(|m| m.split('|').map(RawJson::kept).collect());
    e
}

fn strs() -> impl Strategy<Value = Vec<String>> {
    // Short strs, with multi-byte characters and the model messages' separator; the tool
    // names of strs[7] include ones whose response the fold reads.
    let one = prop_oneof![
        "[a-z|é€😀 ]{0,6}",
        Just("Edit".to_owned()),
        Just("Read".into())
    ];
    proptest::collection::vec(one, 40)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// Each version's digest reads back as what the event keeps, three ways: built
    /// (`decode`), lent (`with_decoded`), and in place (`decode_into`) over a slot that held
    /// another event, every field of which it replaces.
    #[test]
    fn every_version_reads_back_what_it_keeps(
        codes in (0..HOSTS.len(), 0..KINDS.len()),
        set in any::<u64>(),
        strs in strs(),
        nums in (any::<u64>(), any::<i64>(), -1e9f64..1e9),
        before in (0..HOSTS.len(), 0..KINDS.len(), any::<u64>()),
    ) {
        let e = event(codes, set, &strs, nums);
        let want = kept(&e);
        let held = encode(&event((before.0, before.1), before.2, &strs, (7, -7, 0.5)));
        let bytes = encode(&e);
        prop_assert_eq!(super::version(&bytes), Some(CURRENT));
        let got = decode(&bytes).map(|d| format!("{d:?}"));
        prop_assert_eq!(got.as_deref(), Some(want.as_str()));
        let lent = with_decoded(&bytes, |d| format!("{d:?}"));
        prop_assert_eq!(lent.as_deref(), Some(want.as_str()));
        let mut slot = decode(&held).unwrap();
        prop_assert!(decode_into(&bytes, &mut slot));
        prop_assert_eq!(format!("{slot:?}"), want.as_str());
    }

    #[test]
    fn a_changed_version_3_digest_reads_as_an_event_or_none(
        set in any::<u64>(),
        strs in strs(),
        edits in proptest::collection::vec((any::<prop::sample::Index>(), 0u8..4, any::<u8>()), 1..4),
    ) {
        let e = event((1, 10), set, &strs, (70_000, -3, 42.5));
        let mut bytes = encode(&e);
        for (at, how, byte) in edits {
            let i = at.index(bytes.len() + 1);
            match how {
                0 if i < bytes.len() => bytes[i] = byte,
                1 if i < bytes.len() => bytes[i] ^= 1 << (byte % 8),
                2 => bytes.insert(i, byte),
                _ => bytes.truncate(i),
            }
        }
        // Whatever reads, reads as a whole event that this build encodes and reads again.
        if let Some(d) = decode(&bytes) {
            let again = encode(&d);
            prop_assert!(decode(&again).is_some());
        }
        let _ = with_decoded(&bytes, |d| d.name.len());
        // In place, it reads as `decode` does (and when it does not, says so).
        let mut slot = e.clone();
        let into = decode_into(&bytes, &mut slot);
        let built = decode(&bytes).map(|d| format!("{d:?}"));
        prop_assert_eq!(into, built.is_some());
        if into {
            prop_assert_eq!(Some(format!("{slot:?}")), built);
        }
    }
}
