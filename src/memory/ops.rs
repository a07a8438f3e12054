//! Writing to a scope journal: memory ops checked and written under the journal's lock (the
//! same check the fold applies, `Memory::check`), so that concurrent writers cannot both
//! propose the same item or accept a rejected one.

use super::state::Effect;
use super::Scope;
use crate::error::{Error, Result};
use crate::fold::State;
use crate::format::payload::{encode_system, MemoryOp, KIND_MEMORY};
use crate::journal::{Root, WriterOptions};
use crate::session::{Batch, Landed, Session};
use crate::snapshot::{load_state, LoadOptions};

/// What happened to each op of [`apply`], in order.
#[derive(Debug)]
pub struct Applied {
    /// Per op: what it did (an `Effect::Nothing` op is not written), or why it was refused.
    pub results: Vec<std::result::Result<Effect, String>>,
    /// Where the written records landed (None: nothing to write).
    pub landed: Option<Landed>,
    /// The scope's state after the write.
    pub state: State,
}

/// Checks `ops` in order against the scope's memory (each against the memory with the ones
/// before it folded in) and writes those that change something, as one batch, under the
/// scope journal's lock. With a deadline in `opts` (the hook's write after its reply), a lock
/// still held at the deadline does not hold the write: the ops are spooled instead (see
/// `spool`).
pub fn apply(
    root: &Root,
    scope: &Scope,
    ops: &[MemoryOp],
    opts: &WriterOptions,
) -> Result<Applied> {
    let mut s = match Session::open(root, &scope.journal_id(), opts) {
        Ok(s) => s,
        Err(e @ Error::LockTimeout { .. }) => return spool(root, scope, ops, opts, &e),
        Err(e) => return Err(e),
    };
    let mut state = s.state()?.clone();
    let mut next = s.next_state_seq()?;
    let mut batch = Batch::new();
    let mut results = Vec::with_capacity(ops.len());
    for op in ops {
        let r = state.memory.check(op);
        if let Ok(Effect::New | Effect::Again | Effect::Change) = r {
            batch.push(KIND_MEMORY, encode_system(op));
            state.memory.apply(op.clone(), next);
            next += 1;
        }
        results.push(r);
    }
    if batch.items().is_empty() {
        return Ok(Applied {
            results,
            landed: None,
            state,
        });
    }
    let after = s.preview(&batch)?;
    let mut c = s.commit(&batch)?;
    let _ = c.write_snapshot();
    Ok(Applied {
        results,
        state: c.state.take().unwrap_or(after),
        landed: Some(c.landed),
    })
}

/// The ops that change something, checked against the scope as it can be read now (without
/// its lock; nothing at all if it cannot be read by the deadline either), kept in the scope
/// journal's spool: the merge puts them in the journal, where the fold checks each again
/// (`Memory::apply`), so one that a writer under the lock made moot meanwhile changes nothing.
fn spool(
    root: &Root,
    scope: &Scope,
    ops: &[MemoryOp],
    opts: &WriterOptions,
    why: &Error,
) -> Result<Applied> {
    let read = LoadOptions {
        deadline: opts.deadline,
        ..LoadOptions::latest()
    };
    let mut state = load(root, scope, &read).unwrap_or_default();
    let mut results = Vec::with_capacity(ops.len());
    let mut payloads = Vec::new();
    let mut next = state.seq + 1;
    for op in ops {
        let r = state.memory.check(op);
        if let Ok(Effect::New | Effect::Again | Effect::Change) = r {
            payloads.push(encode_system(op));
            state.memory.apply(op.clone(), next);
            next += 1;
        }
        results.push(r);
    }
    if payloads.is_empty() {
        return Ok(Applied {
            results,
            landed: None,
            state,
        });
    }
    let records: Vec<(&str, &[u8])> = payloads.iter().map(|p| (KIND_MEMORY, &p[..])).collect();
    let landed = crate::session::keep_elsewhere(
        root,
        &scope.journal_id(),
        &records,
        &[],
        &why.to_string(),
        None,
        opts,
    )?;
    Ok(Applied {
        results,
        landed: Some(landed),
        state,
    })
}

/// One op; a refusal is an `InvalidInput` error with the reason.
pub fn apply_one(
    root: &Root,
    scope: &Scope,
    op: MemoryOp,
    opts: &WriterOptions,
) -> Result<Applied> {
    let a = apply(root, scope, std::slice::from_ref(&op), opts)?;
    if let Some(Err(reason)) = a.results.first() {
        return Err(Error::InvalidInput {
            reason: reason.clone(),
        });
    }
    Ok(a)
}

/// The scope's state (empty if its journal does not exist yet).
pub fn load(root: &Root, scope: &Scope, opts: &LoadOptions) -> Result<State> {
    match load_state(root, &scope.journal_id(), opts) {
        Ok((s, _)) => Ok(s),
        Err(Error::NoSuchSession { .. }) => Ok(State::new()),
        Err(e) => Err(e),
    }
}

/// A proposal op for `text` (its id derived from the text).
pub fn propose(
    text: &str,
    source: &str,
    session: Option<&str>,
    seq: Option<u64>,
    quote: Option<&str>,
) -> MemoryOp {
    MemoryOp {
        op: "propose".into(),
        id: super::item_id(text.trim()),
        text: Some(text.trim().to_owned()),
        source: Some(source.to_owned()),
        session: session.map(str::to_owned),
        seq,
        quote: quote.map(str::to_owned),
        reason: None,
    }
}

/// An op on an existing item (accept, reject, forget, stale; edit with `text`).
pub fn on_item(op: &str, id: &str, text: Option<&str>, reason: Option<&str>) -> MemoryOp {
    MemoryOp {
        op: op.into(),
        id: id.to_owned(),
        text: text.map(str::to_owned),
        reason: reason.map(str::to_owned),
        ..Default::default()
    }
}
