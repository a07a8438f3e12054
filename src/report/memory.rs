//! What `memory` and `webhook` print with `--json`, besides the library's own types
//! (`memory edit` prints a [`memory::Item`](crate::memory::Item) as it is).

use serde::Serialize;

use crate::memory::Item;

/// `memory propose --json`: the proposal's item.
///
/// `{"id", "status": "proposed"|..|null, "written": bool, "scope": "project"|..}`:
/// `written` is false when the item was already known (nothing was appended).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct MemoryProposed<'a> {
    pub id: &'a str,
    pub status: Option<&'a str>,
    pub written: bool,
    pub scope: &'a str,
}

/// One item as `memory list|show|review --json` print it: the fields of a
/// [`memory::Item`](crate::memory::Item), then `seen_in_sessions`, the number of sessions
/// that gave it (the confidence `review` orders by).
#[derive(Debug, Clone, Serialize)]
pub struct MemoryItem<'a> {
    #[serde(flatten)]
    pub item: &'a Item,
    pub seen_in_sessions: usize,
}

impl<'a> From<&'a Item> for MemoryItem<'a> {
    fn from(item: &'a Item) -> Self {
        MemoryItem {
            item,
            seen_in_sessions: item.sessions(),
        }
    }
}

/// `memory list --json`: a scope's items.
///
/// `{"scope", "journal", "pending", "items": [<MemoryItem>..]}`: `journal` is the
/// scope's journal id, `pending` the number of items awaiting review.
#[derive(Debug, Clone, Serialize)]
pub struct MemoryList<'a> {
    pub scope: &'a str,
    pub journal: String,
    pub pending: usize,
    pub items: Vec<MemoryItem<'a>>,
}

/// `memory accept|reject|forget --json`: one line per item.
///
/// `{"id", "status": "accepted"|"rejected"|"forgotten"|..|null}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct MemoryStatus<'a> {
    pub id: &'a str,
    pub status: Option<&'a str>,
}

/// `memory review --json`: the proposals awaiting review.
///
/// `{"scope", "pending": [<MemoryItem>..]}`, the most confident first.
#[derive(Debug, Clone, Serialize)]
pub struct MemoryReview<'a> {
    pub scope: &'a str,
    pub pending: Vec<MemoryItem<'a>>,
}

/// `webhook deliver --json`: a session another deliverer is already delivering.
///
/// `{"session_id", "busy": true}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct WebhookBusy<'a> {
    pub session_id: &'a str,
    /// Always true.
    pub busy: bool,
}
