//! The memory of a scope journal, as folded from its `sjournal.memory` records: items with
//! their status and provenance, the hashes of rejected text, and (project journals) the
//! project's recent sessions. Ordered maps and bounded lists, like the rest of `State`.
//!
//! Each op is checked by [`Memory::check`], the same function the writing side
//! (`memory::ops`) calls under the scope journal's lock; a record that fails it (written
//! around the CLI) changes nothing and is counted in `refused`.

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use serde::{Deserialize, Serialize};

use crate::format::hash::content_hash;
use crate::format::payload::MemoryOp;
use crate::limits::{
    MEMORY_ITEMS_MAX, MEMORY_PROVENANCE_MAX, MEMORY_REJECTED_MAX, MEMORY_SEEN_SESSIONS_MAX,
    MEMORY_SESSIONS_KEPT, MEMORY_TEXT_MAX_BYTES,
};

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Memory {
    /// Items by id.
    pub items: BTreeMap<String, Item>,
    /// [`text_key`]s of rejected and forgotten text: never proposed again.
    pub rejected: BTreeSet<String>,
    /// Sessions of the project, oldest first (`limits::MEMORY_SESSIONS_KEPT`): the seq of the
    /// `session` op that last named each.
    pub sessions: VecDeque<SeenSession>,
    /// Ops refused by the fold's checks.
    pub refused: u64,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Item {
    pub id: String,
    /// proposed, accepted, rejected, forgotten or stale.
    pub status: String,
    pub text: String,
    /// The text as first proposed, when it was edited since.
    pub original: Option<String>,
    /// rule, remember, relayed, explicit, verify.
    pub source: String,
    /// Where it was said, oldest first (`limits::MEMORY_PROVENANCE_MAX`); more than one
    /// session: the same instruction came again (higher confidence).
    pub provenance: Vec<Provenance>,
    /// Every session that gave it (`limits::MEMORY_SEEN_SESSIONS_MAX`; past that, more
    /// sessions are not counted): its confidence, "seen in N sessions".
    pub seen_in: BTreeSet<String>,
    /// Seq (in the scope journal) of the proposal, and of the last change.
    pub proposed_seq: u64,
    pub seq: u64,
    /// Why it was rejected, forgotten or marked stale.
    pub reason: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Provenance {
    pub session: Option<String>,
    pub seq: Option<u64>,
    pub quote: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SeenSession {
    pub session: String,
    pub seq: u64,
}

/// The dedupe key of a text: 32 hex digits of the blake3 of its words, lowercased, joined
/// by single spaces (so re-wrapping or re-casing a rejected instruction does not bring it
/// back).
pub fn text_key(text: &str) -> String {
    let norm = text
        .split_whitespace()
        .map(str::to_lowercase)
        .collect::<Vec<_>>()
        .join(" ");
    content_hash(norm.as_bytes()).to_hex()[..32].to_owned()
}

/// The id an item proposed with `text` gets: `m` and 12 hex digits of its [`text_key`].
pub fn item_id(text: &str) -> String {
    format!("m{}", &text_key(text)[..12])
}

impl Item {
    /// In how many sessions it was given (at least 1).
    pub fn sessions(&self) -> usize {
        self.seen_in.len().max(1)
    }
}

/// What an op does to the memory, once checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Effect {
    /// A new item.
    New,
    /// Another session gave an item already known: its provenance grows.
    Again,
    /// Nothing changes (already so); not written.
    Nothing,
    /// The item's status or text changes.
    Change,
}

impl Memory {
    pub fn is_empty(&self) -> bool {
        self.items.is_empty() && self.rejected.is_empty() && self.sessions.is_empty()
    }

    pub fn pending(&self) -> usize {
        self.items
            .values()
            .filter(|i| matches!(i.status.as_str(), "proposed" | "stale"))
            .count()
    }

    /// Accepted items, newest change first.
    pub fn accepted(&self) -> Vec<&Item> {
        let mut v: Vec<&Item> = self
            .items
            .values()
            .filter(|i| i.status == "accepted")
            .collect();
        v.sort_by(|a, b| b.seq.cmp(&a.seq).then(a.id.cmp(&b.id)));
        v
    }

    /// Checks `op` against the memory as it is: what it would do, or why it is refused.
    pub fn check(&self, op: &MemoryOp) -> Result<Effect, String> {
        let item = self.items.get(&op.id);
        let status = item.map(|i| i.status.as_str());
        let missing = || format!("no memory item {:?} (see `sjournal memory list`)", op.id);
        match op.op.as_str() {
            "propose" => {
                let text = op.text.as_deref().unwrap_or("").trim();
                if text.is_empty() {
                    return Err("a memory item needs some text".into());
                }
                if text.len() > MEMORY_TEXT_MAX_BYTES {
                    return Err(format!(
                        "the text is {} bytes; the limit is {MEMORY_TEXT_MAX_BYTES}",
                        text.len()
                    ));
                }
                if op.id != item_id(text) {
                    return Err(format!("id {:?} is not the id of its text", op.id));
                }
                if self.rejected.contains(&text_key(text)) {
                    return Err("this text was rejected or forgotten before; it is not \
                                proposed again (edit an item to change it)"
                        .into());
                }
                match status {
                    None if self.items.len() >= MEMORY_ITEMS_MAX => Err(format!(
                        "the scope already keeps {MEMORY_ITEMS_MAX} items; forget some first"
                    )),
                    None => Ok(Effect::New),
                    Some("rejected" | "forgotten") => {
                        Err("this item was rejected or forgotten; it is not proposed again".into())
                    }
                    Some(_) => {
                        let i = item.expect("status from an item");
                        let new_session = op.session.as_deref().is_some_and(|s| {
                            !i.seen_in.contains(s) && i.seen_in.len() < MEMORY_SEEN_SESSIONS_MAX
                        });
                        if new_session {
                            Ok(Effect::Again)
                        } else if op.source.as_deref() == Some("remember") && i.status != "accepted"
                        {
                            Ok(Effect::Change)
                        } else {
                            Ok(Effect::Nothing)
                        }
                    }
                }
            }
            "accept" => match status {
                None => Err(missing()),
                Some("accepted") => Ok(Effect::Nothing),
                Some("proposed" | "stale") => Ok(Effect::Change),
                Some(s) => Err(format!("item {:?} is {s}; it cannot be accepted", op.id)),
            },
            "reject" => match status {
                None => Err(missing()),
                Some("rejected") => Ok(Effect::Nothing),
                Some("forgotten") => Err(format!("item {:?} is forgotten", op.id)),
                Some(_) => Ok(Effect::Change),
            },
            "forget" => match status {
                None => Err(missing()),
                Some("forgotten") => Ok(Effect::Nothing),
                Some(_) => Ok(Effect::Change),
            },
            "edit" => {
                let text = op.text.as_deref().unwrap_or("").trim();
                if text.is_empty() || text.len() > MEMORY_TEXT_MAX_BYTES {
                    return Err(format!(
                        "the new text must be 1 to {MEMORY_TEXT_MAX_BYTES} bytes"
                    ));
                }
                match status {
                    None => Err(missing()),
                    Some(s @ ("rejected" | "forgotten")) => Err(format!(
                        "item {:?} is {s}; propose the new text instead",
                        op.id
                    )),
                    Some(_) => Ok(Effect::Change),
                }
            }
            "stale" => match status {
                None => Err(missing()),
                Some("accepted") => Ok(Effect::Change),
                Some(_) => Ok(Effect::Nothing),
            },
            "session" => match op.session.as_deref() {
                Some(s) if !s.is_empty() => Ok(Effect::Change),
                _ => Err("a session op needs the session id".into()),
            },
            other => Err(format!("unknown memory op {other:?}")),
        }
    }

    /// Folds one `sjournal.memory` record (seq `seq`).
    pub fn apply(&mut self, op: MemoryOp, seq: u64) {
        let effect = match self.check(&op) {
            Ok(e) => e,
            Err(_) => {
                self.refused += 1;
                return;
            }
        };
        if op.op == "session" {
            let s = op.session.unwrap_or_default();
            self.sessions.retain(|x| x.session != s);
            self.sessions.push_back(SeenSession { session: s, seq });
            while self.sessions.len() > MEMORY_SESSIONS_KEPT {
                self.sessions.pop_front();
            }
            return;
        }
        if effect == Effect::Nothing {
            return;
        }
        let prov = Provenance {
            session: op.session.clone(),
            seq: op.seq,
            quote: op.quote.clone(),
        };
        let mut reject_key = None;
        match (op.op.as_str(), effect) {
            ("propose", Effect::New) => {
                let accepted = op.source.as_deref() == Some("remember");
                self.items.insert(
                    op.id.clone(),
                    Item {
                        id: op.id.clone(),
                        status: if accepted { "accepted" } else { "proposed" }.into(),
                        text: op.text.unwrap_or_default().trim().to_owned(),
                        original: None,
                        source: op.source.unwrap_or_else(|| "explicit".into()),
                        provenance: vec![prov],
                        seen_in: op.session.iter().cloned().collect(),
                        proposed_seq: seq,
                        seq,
                        reason: None,
                    },
                );
            }
            ("propose", _) => {
                let i = self.items.get_mut(&op.id).expect("checked");
                if let Some(s) = &op.session {
                    if i.seen_in.len() < MEMORY_SEEN_SESSIONS_MAX {
                        i.seen_in.insert(s.clone());
                    }
                }
                if i.provenance.len() < MEMORY_PROVENANCE_MAX
                    && i.provenance.iter().all(|p| p.session != prov.session)
                {
                    i.provenance.push(prov);
                }
                if op.source.as_deref() == Some("remember") {
                    i.status = "accepted".into();
                    i.seq = seq;
                }
            }
            (kind, _) => {
                let i = self.items.get_mut(&op.id).expect("checked");
                i.seq = seq;
                match kind {
                    "accept" => i.status = "accepted".into(),
                    "reject" | "forget" => {
                        i.status = if kind == "reject" {
                            "rejected"
                        } else {
                            "forgotten"
                        }
                        .into();
                        i.reason = op.reason;
                        reject_key = Some((text_key(&i.text), i.original.as_deref().map(text_key)));
                    }
                    "edit" => {
                        let new = op.text.unwrap_or_default().trim().to_owned();
                        if i.original.is_none() {
                            i.original = Some(std::mem::replace(&mut i.text, new));
                        } else {
                            i.text = new;
                        }
                        i.status = "accepted".into();
                    }
                    "stale" => {
                        i.status = "stale".into();
                        i.reason = op.reason;
                    }
                    _ => {}
                }
            }
        }
        if let Some((a, b)) = reject_key {
            for k in std::iter::once(a).chain(b) {
                if self.rejected.len() < MEMORY_REJECTED_MAX {
                    self.rejected.insert(k);
                }
            }
        }
    }
}
