//! Typed errors. Every message says what failed, on which file, where, and what to do.

use std::io;
use std::path::PathBuf;

pub type Result<T, E = Error> = std::result::Result<T, E>;

/// What the library fails with. New variants may come (`#[non_exhaustive]`): match the ones
/// you handle and keep a catch-all.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    #[error("{op} {path}: {source}")]
    Io {
        op: &'static str,
        path: PathBuf,
        #[source]
        source: io::Error,
    },

    /// The journal refuses appends: damage recovery may not cut, or acknowledged records
    /// missing. It holds a `journal::Corrupt` (path, offset, seq and the reason), the journal
    /// family's error: read it back with `journal::Corrupt::of`. The base error knows no type
    /// of the floors above it, so the family arrives boxed.
    #[error("{0}")]
    Corrupt(Box<dyn std::error::Error + Send + Sync + 'static>),

    #[error("journal header of {path} is invalid: {reason}")]
    BadHeader { path: PathBuf, reason: String },

    #[error(
        "journal {path} belongs to session {found:?}, not {expected:?} \
         (two session ids map to one file name; please report this)"
    )]
    SessionMismatch {
        path: PathBuf,
        expected: String,
        found: String,
    },

    #[error(
        "the writer for {path} is poisoned: an earlier {op} failed, so whether its bytes are on disk \
         is unknown; reopen the journal (recovery will check the tail)"
    )]
    Poisoned { path: PathBuf, op: &'static str },

    #[error("timed out after {waited_ms} ms waiting for the lock on {path} (another sjournal process holds it)")]
    LockTimeout { path: PathBuf, waited_ms: u64 },

    #[error(
        "refusing to follow a symlink at {path}: sjournal never follows links inside its root"
    )]
    Symlink { path: PathBuf },

    #[error(
        "refusing the directory {path}: {reason}; another user could read or replace what is \
         kept there (set [hook] fallback_spool_dir in the root's config.toml to a private directory)"
    )]
    UnsafeDir { path: PathBuf, reason: String },

    /// A directory of the root that another user could write: journals planted or altered
    /// there would be folded, and what the hook injects from them would reach the model.
    #[error(
        "refusing the directory {path}: {reason}; another user could plant or alter journals          there, and what sjournal reads from them reaches the model (make it yours and not          writable by others, e.g. `chmod go-w {path}`, or use another root with --root)"
    )]
    UntrustedDir { path: PathBuf, reason: String },

    /// A file sjournal reads is not a regular file (a FIFO, socket, device or directory
    /// planted in its place). It was opened without waiting and nothing was read from it.
    #[error(
        "{path} is a {found}, not a regular file: sjournal reads only regular files there \
         (a FIFO or device could block it or feed it anything); move it away"
    )]
    NotRegular { path: PathBuf, found: &'static str },

    /// A file whose content sjournal would trust as this user's own belongs to another user.
    #[error(
        "{path} belongs to uid {uid}, not to this user (uid {me}): sjournal does not trust \
         what another user wrote there; nothing was read from it"
    )]
    ForeignOwner { path: PathBuf, uid: u32, me: u32 },

    #[error("{path} is not a {expected}")]
    WrongFileType {
        path: PathBuf,
        expected: &'static str,
    },

    #[error("invalid session id: {reason}")]
    InvalidSessionId { reason: String },

    #[error(
        "invalid record kind {kind:?}: use 1 to 64 characters of A-Z a-z 0-9 . _ - \
         (names starting with \"sjournal.\" are reserved)"
    )]
    InvalidKind { kind: String },

    #[error("record of {len} bytes exceeds the limit of {max} bytes")]
    TooLarge { len: u64, max: u64 },

    #[error("no journal for session {session:?} under {root}")]
    NoSuchSession { session: String, root: PathBuf },

    #[error("cannot determine the sjournal root: pass --root DIR or set SJOURNAL_HOME")]
    NoRoot,

    #[error("could not decode payload of record seq {seq}: {reason}")]
    Payload { seq: u64, reason: String },

    #[error("{input}, line {line}: {reason}; nothing was appended (fix or remove that line and import again)")]
    ImportLine {
        input: String,
        line: usize,
        reason: String,
    },

    #[error("replay failed at record seq {seq}: {reason}")]
    Fold { seq: u64, reason: String },

    #[error("{path} changed in a way a journal never does: {reason}")]
    Changed { path: PathBuf, reason: String },
    #[error(
        "slot {slot:?} of session {session:?} was last set by record seq {found}, not seq {expected}: \
         another writer changed it first; read it again (`sjournal slot get`) and retry with \
         --expect-seq {found}"
    )]
    Conflict {
        session: String,
        slot: String,
        expected: u64,
        found: u64,
    },

    #[error("{reason}; nothing was appended")]
    InvalidInput { reason: String },

    #[error(
        "configuration {path}: {message}; fix it and run the command again (until then hooks \
         use the default configuration, without webhooks)"
    )]
    InvalidConfig { path: PathBuf, message: String },
    /// Shipping, fetching, remote verification or indexing could not run (see `remote`).
    #[error("{reason}")]
    Remote { reason: String },

    #[error("{cause}; and the session's rescue journal refused the event too: {error}")]
    RescueRefused {
        cause: Box<Error>,
        error: Box<Error>,
    },

    #[error(
        "the event could be kept nowhere: {reason}. Free space in (or fix the permissions of) \
         the sjournal root, or set [hook] fallback_spool_dir in its config.toml"
    )]
    Unkept { reason: String },
    /// The search index could not be read or written, or a query is malformed (see `search`).
    #[error("{reason}")]
    Search { reason: String },
}

impl Error {
    /// An I/O error: what was being done (`op`, e.g. "read"), on which file, and why.
    pub fn io(op: &'static str, path: impl Into<PathBuf>, source: io::Error) -> Self {
        Error::Io {
            op,
            path: path.into(),
            source,
        }
    }
}
