//! Hook-author primitives: fire counts with a maximum,
//! once / unseen keys, typed JSON slots with compare-and-set, bounded lists; and the writes of
//! context entries. Each is a system record appended through the journal's writer and folded
//! into `State::primitives` / `State::context`.
//!
//! Every write that depends on the state (a fire under its maximum, a key not seen yet, a
//! slot's expected seq) is decided under the session's lock: the session is opened (taking
//! its lock, merging its spool), its state is loaded (snapshot + tail), checked, and the
//! record written by the session's policy before the lock is released. Two processes racing on one slot therefore cannot both win,
//! as with EventStoreDB's expected version. The fold applies the same checks again, so a
//! record written around this module changes nothing it should not.

use crate::context::Channel;
use crate::error::{Error, Result};
use crate::fold::{json_type, valid_name, State};
use crate::format::payload::{self as p, encode_system};
use crate::journal::{Root, WriterOptions};
use crate::limits::{
    CONTEXT_ENTRIES_MAX, CONTEXT_TEXT_MAX_BYTES, LIST_ITEMS_MAX, LIST_ITEM_MAX_BYTES,
    NAME_MAX_BYTES, PRIMITIVE_KEYS_MAX, SLOT_VALUE_MAX_BYTES,
};
use crate::session::{self, Batch, Landed, Session};

fn invalid<T>(reason: impl Into<String>) -> Result<T> {
    Err(Error::InvalidInput {
        reason: reason.into(),
    })
}

fn check_name(what: &str, name: &str) -> Result<()> {
    if valid_name(name) {
        Ok(())
    } else {
        invalid(format!(
            "{what} must be 1 to {NAME_MAX_BYTES} bytes long (got {})",
            name.len()
        ))
    }
}

/// Checks that `text` is one JSON value; returns it trimmed.
fn check_json<'a>(what: &str, text: &'a str, max: usize) -> Result<&'a str> {
    let text = text.trim();
    if let Err(e) = serde_json::from_str::<serde::de::IgnoredAny>(text) {
        return invalid(format!("{what} is not valid JSON: {e}"));
    }
    if text.len() > max {
        return invalid(format!(
            "{what} is {} bytes; the limit is {max}",
            text.len()
        ));
    }
    Ok(text)
}

/// Runs `decide` on the session's current state under the session's lock and writes the
/// record it returns, if any, by the session's policy (journal, else rescue journal, else
/// spool). Returns the state after the write (as decided on, with the record folded in) and
/// where the record landed.
pub fn locked<T>(
    root: &Root,
    session_id: &str,
    opts: &WriterOptions,
    decide: impl FnOnce(&State) -> Result<(T, Option<(&'static str, Vec<u8>)>)>,
) -> Result<(T, State, Option<Landed>)> {
    let mut s = Session::open(root, session_id, opts)?;
    let (out, record) = decide(s.state()?)?;
    let Some((kind, payload)) = record else {
        return Ok((out, s.state()?.clone(), None));
    };
    let batch = Batch::one(kind, payload);
    let after = s.preview(&batch)?;
    let mut c = s.commit(&batch)?;
    // After the lock is released; a failed snapshot costs only a longer load next time.
    let _ = c.write_snapshot();
    Ok((out, c.state.take().unwrap_or(after), Some(c.landed)))
}

/// Outcome of [`fire`].
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Fired {
    /// The hook may run: its count was below the maximum and is now one more.
    pub fired: bool,
    pub count: u64,
    pub max: Option<u64>,
}

/// Counts one firing of hook `name` unless it already fired `max` times.
pub fn fire(
    root: &Root,
    session_id: &str,
    name: &str,
    max: Option<u64>,
    opts: &WriterOptions,
) -> Result<Fired> {
    check_name("a hook name", name)?;
    let (out, _, _) = locked(root, session_id, opts, |s| {
        let f = &s.primitives.fires;
        let count = f.get(name).map_or(0, |c| c.count);
        if max.is_some_and(|m| count >= m) {
            return Ok((
                Fired {
                    fired: false,
                    count,
                    max,
                },
                None,
            ));
        }
        if !f.contains_key(name) && f.len() >= PRIMITIVE_KEYS_MAX {
            return invalid(format!(
                "the session already counts {PRIMITIVE_KEYS_MAX} hook names"
            ));
        }
        let rec = p::Fire {
            name: name.to_owned(),
            max,
        };
        let fired = Fired {
            fired: true,
            count: count + 1,
            max,
        };
        Ok((fired, Some((p::KIND_FIRE, encode_system(&rec)))))
    })?;
    Ok(out)
}

/// The keys of `keys` this session has not seen (read only).
pub fn unseen<'k>(state: &State, keys: &'k [String]) -> Vec<&'k str> {
    let mut out: Vec<&str> = Vec::new();
    for k in keys {
        if !state.primitives.once.contains_key(k) && !out.contains(&k.as_str()) {
            out.push(k);
        }
    }
    out
}

/// Marks `keys` seen; returns those that were not seen before (the caller's "once" fires
/// for them). Appends nothing when every key was seen.
pub fn once(
    root: &Root,
    session_id: &str,
    keys: &[String],
    opts: &WriterOptions,
) -> Result<Vec<String>> {
    for k in keys {
        check_name("a once key", k)?;
    }
    let (out, _, _) = locked(root, session_id, opts, |s| {
        let new: Vec<String> = unseen(s, keys).into_iter().map(str::to_owned).collect();
        if new.is_empty() {
            return Ok((new, None));
        }
        if s.primitives.once.len() + new.len() > PRIMITIVE_KEYS_MAX {
            return invalid(format!(
                "the session already holds {PRIMITIVE_KEYS_MAX} once keys"
            ));
        }
        let rec = p::Once { keys: new.clone() };
        Ok((new, Some((p::KIND_ONCE, encode_system(&rec)))))
    })?;
    Ok(out)
}

/// Sets slot `name` to the JSON `value`. With `expect_seq`, only if the slot was last set by
/// that record (0: the slot must be empty); otherwise [`Error::Conflict`]. With `json_type`,
/// the value must be of that type (and so must the slot's current value, if any).
pub fn slot_set(
    root: &Root,
    session_id: &str,
    name: &str,
    value: &str,
    expect_seq: Option<u64>,
    want_type: Option<&str>,
    opts: &WriterOptions,
) -> Result<Landed> {
    check_name("a slot name", name)?;
    let value = check_json("the slot value", value, SLOT_VALUE_MAX_BYTES)?;
    let ty = json_type(value);
    if let Some(w) = want_type {
        if w != ty {
            return invalid(format!("the value is a JSON {ty}, not a {w}"));
        }
    }
    let (_, _, a) = locked(root, session_id, opts, |s| {
        let current = s.primitives.slots.get(name);
        let found = current.map_or(0, |c| c.seq);
        if let Some(expected) = expect_seq {
            if expected != found {
                return Err(Error::Conflict {
                    session: session_id.to_owned(),
                    slot: name.to_owned(),
                    expected,
                    found,
                });
            }
        }
        if let (Some(w), Some(c)) = (want_type, current) {
            if c.json_type != w {
                return invalid(format!(
                    "slot {name:?} holds a JSON {}, not a {w}",
                    c.json_type
                ));
            }
        }
        if current.is_none() && s.primitives.slots.len() >= PRIMITIVE_KEYS_MAX {
            return invalid(format!(
                "the session already holds {PRIMITIVE_KEYS_MAX} slots"
            ));
        }
        let rec = p::SlotSet {
            name: name.to_owned(),
            value: value.to_owned(),
            expect_seq,
        };
        Ok(((), Some((p::KIND_SLOT_SET, encode_system(&rec)))))
    })?;
    Ok(a.expect("a slot write always writes"))
}

/// Pushes the JSON `value` onto list `name`, which keeps its last `max` items.
pub fn list_push(
    root: &Root,
    session_id: &str,
    name: &str,
    value: &str,
    max: Option<u32>,
    opts: &WriterOptions,
) -> Result<Landed> {
    check_name("a list name", name)?;
    let value = check_json("the list item", value, LIST_ITEM_MAX_BYTES)?;
    if max.is_some_and(|m| m == 0 || m > LIST_ITEMS_MAX) {
        return invalid(format!("a list keeps 1 to {LIST_ITEMS_MAX} items"));
    }
    let (_, _, a) = locked(root, session_id, opts, |s| {
        if !s.primitives.lists.contains_key(name) && s.primitives.lists.len() >= PRIMITIVE_KEYS_MAX
        {
            return invalid(format!(
                "the session already holds {PRIMITIVE_KEYS_MAX} lists"
            ));
        }
        let rec = p::ListPush {
            name: name.to_owned(),
            value: value.to_owned(),
            max,
        };
        Ok(((), Some((p::KIND_LIST_PUSH, encode_system(&rec)))))
    })?;
    Ok(a.expect("a push always writes"))
}

/// Empties list `name`.
pub fn list_clear(
    root: &Root,
    session_id: &str,
    name: &str,
    opts: &WriterOptions,
) -> Result<Landed> {
    check_name("a list name", name)?;
    let rec = p::ListClear {
        name: name.to_owned(),
    };
    let batch = Batch::one(p::KIND_LIST_CLEAR, encode_system(&rec));
    session::write(root, session_id, &batch, opts)
}

/// Sets a context entry.
pub fn context_set(
    root: &Root,
    session_id: &str,
    channel: Channel,
    key: &str,
    text: &str,
    opts: &WriterOptions,
) -> Result<Landed> {
    check_name("a context key", key)?;
    if text.len() > CONTEXT_TEXT_MAX_BYTES {
        return invalid(format!(
            "the context text is {} bytes; the limit is {CONTEXT_TEXT_MAX_BYTES}",
            text.len()
        ));
    }
    let (_, _, a) = locked(root, session_id, opts, |s| {
        let c = &s.context;
        let map = match channel {
            Channel::Persistent => &c.persistent,
            Channel::Ephemeral => &c.ephemeral,
            Channel::AtStop => &c.at_stop,
        };
        if !map.contains_key(key) && map.len() >= CONTEXT_ENTRIES_MAX {
            return invalid(format!(
                "the {} channel already holds {CONTEXT_ENTRIES_MAX} entries",
                channel.as_str()
            ));
        }
        let rec = p::ContextSet {
            channel: channel.as_str().to_owned(),
            key: key.to_owned(),
            text: text.to_owned(),
        };
        Ok(((), Some((p::KIND_CONTEXT_SET, encode_system(&rec)))))
    })?;
    Ok(a.expect("a set always writes"))
}

/// Clears context entries: `key` of `channel`, all of `channel`, `key` in every channel, or
/// (both None) everything.
pub fn context_clear(
    root: &Root,
    session_id: &str,
    channel: Option<Channel>,
    key: Option<&str>,
    opts: &WriterOptions,
) -> Result<Landed> {
    let rec = p::ContextClear {
        channel: channel.map(|c| c.as_str().to_owned()),
        key: key.map(str::to_owned),
    };
    let batch = Batch::one(p::KIND_CONTEXT_CLEAR, encode_system(&rec));
    session::write(root, session_id, &batch, opts)
}
