//! Folding system records (`sjournal.*`): journal facts, context channels, hook-author
//! primitives and injections. Each record is checked against the same rules the writing side
//! checks under the writer's lock; a record that breaks them (written around the CLI) is
//! counted as rejected and changes nothing else.

use std::collections::VecDeque;

use serde::de::DeserializeOwned;

use super::bounded::{bump, cut, cut_str, key};
use super::Channel;
use super::{
    Entry, JournalFacts, LastInjection, List, ListItem, RecordView, RecoveredFact, Slot, State,
    REDACTED_OTHER,
};
use crate::format::payload::{self as p, decode_system};
use crate::limits::{
    CONTEXT_ENTRIES_MAX, CONTEXT_TEXT_MAX_BYTES, LIST_ITEMS_DEFAULT, LIST_ITEMS_MAX,
    LIST_ITEM_MAX_BYTES, NAME_MAX_BYTES, PRIMITIVE_KEYS_MAX, REDACTION_RULES_MAX,
    SLOT_VALUE_MAX_BYTES,
};

/// The JSON type of a JSON text, by its first character.
pub fn json_type(value: &str) -> &'static str {
    match value.trim_start().as_bytes().first() {
        Some(b'{') => "object",
        Some(b'[') => "array",
        Some(b'"') => "string",
        Some(b't' | b'f') => "boolean",
        Some(b'n') => "null",
        _ => "number",
    }
}

/// True if `name` is a usable key for a context entry or primitive.
pub fn valid_name(name: &str) -> bool {
    !name.is_empty() && name.len() <= NAME_MAX_BYTES
}

impl State {
    /// The event just folded was `h.host`'s, though its payload reads as `h.detected`'s.
    fn host_override(&mut self, h: p::HostOverride) {
        let by_host = &mut self.counts.by_host;
        by_host.take_one(&h.detected);
        by_host.bump(&h.host);
        self.identity.host = Some(key(&h.host));
    }

    pub(super) fn apply_system(&mut self, rec: &RecordView<'_>) {
        self.counts.system += 1;
        let Some(slot) = super::tally::system_slot(rec.kind) else {
            self.journal.unknown_system += 1;
            return;
        };
        self.counts.by_kind.bump_slot(slot);
        let ok = match rec.kind {
            p::KIND_RECOVERED => self.decoded(rec, |s, r: p::Recovered| {
                s.journal.recovered += 1;
                s.journal.last_recovered = Some(RecoveredFact {
                    seq: rec.seq,
                    offset: r.offset,
                    length: r.length,
                    reason: cut(&r.reason, NAME_MAX_BYTES).0,
                });
            }),
            p::KIND_UNPARSED => {
                self.journal.unparsed += 1;
                true
            }
            p::KIND_CONTEXT_SET => self.decoded(rec, |s, c: p::ContextSet| s.context_set(c, rec)),
            p::KIND_CONTEXT_CLEAR => self.decoded(rec, State::context_clear),
            p::KIND_FIRE => self.decoded(rec, |s, f: p::Fire| s.fire(f, rec)),
            p::KIND_ONCE => self.decoded(rec, |s, o: p::Once| s.once(o, rec)),
            p::KIND_SLOT_SET => self.decoded(rec, |s, v: p::SlotSet| s.slot_set(v, rec)),
            p::KIND_LIST_PUSH => self.decoded(rec, |s, v: p::ListPush| s.list_push(v, rec)),
            p::KIND_MEMORY => self.decoded(rec, |s, m: p::MemoryOp| s.memory.apply(m, rec.seq)),
            p::KIND_EXTRAS => self.decoded(rec, |s, x: p::ExtrasRecord| s.extras = Some(x)),
            p::KIND_REDACTED => self.decoded(rec, State::redacted),
            p::KIND_LIST_CLEAR => self.decoded(rec, |s, v: p::ListClear| {
                s.primitives.lists.remove(&v.name);
            }),
            p::KIND_INJECTED => self.decoded(rec, |s, i: p::Injected| {
                s.note_injected(&i, rec);
                s.injected.insert(
                    key(&i.event_kind),
                    LastInjection {
                        seq: rec.seq,
                        event_seq: i.event_seq,
                        text_blake3: key(&i.text_blake3),
                        len: i.len,
                        truncated: i.truncated,
                        mode: i.mode.as_deref().map(key),
                    },
                );
            }),
            // An exec handler's output becomes a context entry of its own channel, keyed by
            // the handler, when it succeeded and printed something.
            p::KIND_EXEC => self.decoded(rec, |s, e: p::Exec| {
                let channel = match e.context {
                    p::ExecContext::Persistent => "persistent",
                    p::ExecContext::Ephemeral => "ephemeral",
                    p::ExecContext::None => return,
                };
                let text = e.stdout.trim();
                if e.succeeded() && !text.is_empty() {
                    let set = p::ContextSet {
                        channel: channel.to_owned(),
                        key: format!("exec:{}", e.name),
                        text: text.to_owned(),
                    };
                    s.context_set(set, rec);
                }
            }),
            // The merged events follow as ordinary records; the merge itself is counted.
            p::KIND_SPOOL_MERGE => true,
            p::KIND_HOST => self.decoded(rec, |s, h: p::HostOverride| s.host_override(h)),
            p::KIND_ERASED => self.decoded(rec, |s, _: p::Erased| s.journal.erased += 1),
            _ => true,
        };
        if !ok {
            self.journal.undecodable += 1;
        }
    }

    fn decoded<T: DeserializeOwned>(
        &mut self,
        rec: &RecordView<'_>,
        f: impl FnOnce(&mut State, T),
    ) -> bool {
        match decode_system::<T>(rec.seq, rec.payload) {
            Ok(v) => {
                f(self, v);
                true
            }
            Err(_) => false,
        }
    }

    fn redacted(&mut self, r: p::RedactedRules) {
        self.journal.redacted = self.journal.redacted.saturating_add(1);
        self.journal.count_redactions(&r);
    }

    fn context_set(&mut self, c: p::ContextSet, rec: &RecordView<'_>) {
        let ctx = &mut self.context;
        let map = match Channel::from_name(&c.channel) {
            Some(Channel::Persistent) => &mut ctx.persistent,
            Some(Channel::Ephemeral) => &mut ctx.ephemeral,
            Some(Channel::AtStop) => &mut ctx.at_stop,
            None => {
                ctx.rejected += 1;
                return;
            }
        };
        if !valid_name(&c.key) || (map.len() >= CONTEXT_ENTRIES_MAX && !map.contains_key(&c.key)) {
            ctx.rejected += 1;
            return;
        }
        let text = cut(&c.text, CONTEXT_TEXT_MAX_BYTES).0;
        map.insert(c.key, Entry { text, seq: rec.seq });
    }

    fn context_clear(&mut self, c: p::ContextClear) {
        let ctx = &mut self.context;
        let channels: Vec<Channel> = match c.channel.as_deref().map(Channel::from_name) {
            None => Channel::ALL.to_vec(),
            Some(Some(ch)) => vec![ch],
            Some(None) => {
                ctx.rejected += 1;
                return;
            }
        };
        for ch in channels {
            let map = match ch {
                Channel::Persistent => &mut ctx.persistent,
                Channel::Ephemeral => &mut ctx.ephemeral,
                Channel::AtStop => &mut ctx.at_stop,
            };
            match c.key.as_deref() {
                Some(k) => {
                    map.remove(k);
                }
                None => map.clear(),
            }
        }
    }

    fn fire(&mut self, f: p::Fire, rec: &RecordView<'_>) {
        let pr = &mut self.primitives;
        let current = pr.fires.get(&f.name).map_or(0, |c| c.count);
        let full = pr.fires.len() >= PRIMITIVE_KEYS_MAX && !pr.fires.contains_key(&f.name);
        if !valid_name(&f.name) || full || f.max.is_some_and(|m| current >= m) {
            pr.rejected += 1;
            return;
        }
        let c = pr.fires.entry(f.name).or_default();
        c.count += 1;
        c.max = f.max;
        c.last_seq = rec.seq;
    }

    fn once(&mut self, o: p::Once, rec: &RecordView<'_>) {
        let pr = &mut self.primitives;
        for k in o.keys {
            if pr.once.contains_key(&k) {
                continue;
            }
            if !valid_name(&k) || pr.once.len() >= PRIMITIVE_KEYS_MAX {
                pr.rejected += 1;
                continue;
            }
            pr.once.insert(k, rec.seq);
        }
    }

    fn slot_set(&mut self, v: p::SlotSet, rec: &RecordView<'_>) {
        let pr = &mut self.primitives;
        let current = pr.slots.get(&v.name).map_or(0, |s| s.seq);
        let full = pr.slots.len() >= PRIMITIVE_KEYS_MAX && !pr.slots.contains_key(&v.name);
        if !valid_name(&v.name)
            || full
            || v.value.len() > SLOT_VALUE_MAX_BYTES
            || v.expect_seq.is_some_and(|e| e != current)
        {
            pr.rejected += 1;
            return;
        }
        let json_type = json_type(&v.value).to_owned();
        pr.slots.insert(
            v.name,
            Slot {
                value: v.value,
                json_type,
                seq: rec.seq,
            },
        );
    }

    fn list_push(&mut self, v: p::ListPush, rec: &RecordView<'_>) {
        let pr = &mut self.primitives;
        let full = pr.lists.len() >= PRIMITIVE_KEYS_MAX && !pr.lists.contains_key(&v.name);
        if !valid_name(&v.name) || full || v.value.len() > LIST_ITEM_MAX_BYTES {
            pr.rejected += 1;
            return;
        }
        let list = pr.lists.entry(v.name).or_insert_with(|| List {
            max: LIST_ITEMS_DEFAULT,
            pushed: 0,
            items: VecDeque::new(),
        });
        if let Some(m) = v.max {
            list.max = m.clamp(1, LIST_ITEMS_MAX);
        }
        list.pushed += 1;
        list.items.push_back(ListItem {
            seq: rec.seq,
            value: v.value,
        });
        while list.items.len() > list.max as usize {
            list.items.pop_front();
        }
    }
}

impl JournalFacts {
    /// Counts the secrets of one `sjournal.redacted` record by rule, as the fold does: at most
    /// `REDACTION_RULES_MAX` rules by name, the others and the record's `more` under
    /// [`REDACTED_OTHER`], saturating.
    pub fn count_redactions(&mut self, r: &p::RedactedRules) {
        let map = &mut self.redactions;
        for f in &r.found {
            let known = map.contains_key(cut_str(&f.rule, NAME_MAX_BYTES).0);
            if known || map.len() < REDACTION_RULES_MAX {
                bump(map, &f.rule);
            } else {
                let n = map.entry(REDACTED_OTHER.to_owned()).or_default();
                *n = n.saturating_add(1);
            }
        }
        if r.more > 0 {
            let n = map.entry(REDACTED_OTHER.to_owned()).or_default();
            *n = n.saturating_add(r.more);
        }
    }
}
