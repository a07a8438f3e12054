//! Checkpoints: small statements that pin a journal's head, for auditors to keep elsewhere.
//! A later `verify --checkpoint` proves the journal still extends it: the record at the
//! checkpoint's seq has exactly the pinned hash, and the chain verifies through it (and on
//! to the end). Since each hash covers the previous one back to the header, this catches
//! truncation below the checkpoint and any rewrite of the records it covers.
//!
//! The text follows the C2SP `tlog-checkpoint` format, signed as a C2SP `signed-note` (the
//! format of Go's `golang.org/x/mod/sumdb/note`; the `signed_note` crate does the note and
//! key handling, so Go tools can check our signatures and we theirs):
//!
//! ```text
//! sjournal/<session id>          origin
//! 42                             record count (= the last seq)
//! <base64 of the 32-byte hash>   the chain hash of record 42 (the genesis hash if 0)
//!
//! — <key name> <base64 of 4-byte key id || 64-byte ed25519 signature>
//! ```
//!
//! The blank line and signature lines are present only when signed; several signatures may
//! follow. The origin uses the session id as given when it is printable ASCII without
//! spaces, else the session's file stem (`h-` and 32 hex digits).
//!
//! Key files are the note key formats, one line each:
//! - signer (private, 0600): `PRIVATE+KEY+<name>+<key id, 8 hex>+<base64(0x01 || 32-byte seed)>`
//! - verifier (public):      `<name>+<key id, 8 hex>+<base64(0x01 || 32-byte public key)>`
//!
//! where the key id is the first 4 bytes of SHA-256(name || "\n" || 0x01 || public key) and
//! 0x01 names the algorithm (ed25519).

use base64::engine::general_purpose::STANDARD as B64;
use base64::Engine;
use signed_note::{NoteError, StandardSigner, StandardVerifier, VerifierList};

use crate::format::Hash;
use crate::journal::paths::file_stem;

/// Why a checkpoint or a key could not be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CheckpointError {
    #[error("not a signer key ({0}); make one with `sjournal checkpoint keygen`")]
    NotASignerKey(String),
    #[error("this is a private signer key; pass the verifier key (KEYFILE.pub)")]
    PrivateKeyGiven,
    #[error("not a verifier key: {0}")]
    NotAVerifierKey(String),
    #[error("invalid key name {0:?}: no spaces or '+'")]
    BadKeyName(String),
    #[error("cannot sign the checkpoint: {0}")]
    Signing(String),
    #[error("malformed signed note: {0}")]
    MalformedNote(String),
    #[error("the checkpoint text must end with a newline")]
    NoFinalNewline,
    #[error("missing {0} line")]
    MissingLine(&'static str),
    #[error("record count {0:?} is not a number")]
    BadCount(String),
    #[error("hash {0:?} is not 32 bytes of base64")]
    BadHash(String),
}

/// What reading a checkpoint or a key fails with: the file is not one (naming the file and
/// why), or the library could not read it or the journal. The auditor's own family: the
/// library's [`crate::Error`] converts into it, never the other way, so the ground floor's
/// error type knows nothing of checkpoints.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("checkpoint {path}: {reason}")]
    Checkpoint {
        path: std::path::PathBuf,
        reason: CheckpointError,
    },

    #[error("key file {path}: {reason}")]
    Key {
        path: std::path::PathBuf,
        reason: CheckpointError,
    },

    #[error(transparent)]
    Journal(#[from] crate::Error),
}

/// What a checkpoint pins.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Checkpoint {
    pub origin: String,
    /// Records covered: the last seq.
    pub size: u64,
    /// Chain hash of record `size` (the genesis hash when `size` is 0).
    pub hash: Hash,
}

/// A checkpoint as read from a file.
#[derive(Debug)]
pub struct Parsed {
    pub checkpoint: Checkpoint,
    /// The signed note, if the file carries signatures.
    pub note: Option<signed_note::Note>,
}

/// The origin line for a session.
pub fn origin_for(session_id: &str) -> String {
    if session_id.bytes().all(|b| b.is_ascii_graphic()) {
        return format!("sjournal/{session_id}");
    }
    format!(
        "sjournal/{}",
        file_stem(session_id).unwrap_or_else(|_| "-".into())
    )
}

impl Checkpoint {
    /// The note text: origin, size, base64 hash, each on its own line.
    pub fn body(&self) -> String {
        format!(
            "{}\n{}\n{}\n",
            self.origin,
            self.size,
            B64.encode(self.hash.0)
        )
    }

    /// The body followed by a signature by `key` (a signer key file's contents).
    pub fn signed(&self, key: &str) -> Result<String, CheckpointError> {
        sign_text(&self.body(), key)
    }
}

/// `text` (a note body, ending with a newline) followed by a signature by `key` (a signer key
/// file's contents): a C2SP signed note.
pub fn sign_text(text: &str, key: &str) -> Result<String, CheckpointError> {
    let signer = StandardSigner::new(key.trim())
        .map_err(|e| CheckpointError::NotASignerKey(e.to_string()))?;
    let mut note = signed_note::Note::new(text.as_bytes(), &[])
        .map_err(|e| CheckpointError::Signing(e.to_string()))?;
    note.add_sigs(&[&signer])
        .map_err(|e| CheckpointError::Signing(e.to_string()))?;
    String::from_utf8(note.to_bytes()).map_err(|e| CheckpointError::Signing(e.to_string()))
}

/// Reads a checkpoint file: the body and, if present, its signatures. Extension lines after
/// the hash are allowed and ignored (signatures cover them all the same).
pub fn parse(text: &str) -> Result<Parsed, CheckpointError> {
    let (body, note) = if text.contains("\n\n") {
        let note = signed_note::Note::from_bytes(text.as_bytes())
            .map_err(|e| CheckpointError::MalformedNote(e.to_string()))?;
        let body = String::from_utf8(note.text().to_vec())
            .map_err(|e| CheckpointError::MalformedNote(e.to_string()))?;
        (body, Some(note))
    } else {
        (text.to_owned(), None)
    };
    if !body.ends_with('\n') {
        return Err(CheckpointError::NoFinalNewline);
    }
    let mut lines = body.lines();
    let mut next = |what: &'static str| {
        lines
            .next()
            .filter(|l| !l.is_empty())
            .ok_or(CheckpointError::MissingLine(what))
    };
    let origin = next("origin")?.to_owned();
    let size = next("record count")?;
    let size: u64 = size
        .parse()
        .map_err(|_| CheckpointError::BadCount(size.to_owned()))?;
    let hash = next("hash")?;
    let hash = B64
        .decode(hash)
        .ok()
        .and_then(|b| <[u8; 32]>::try_from(b).ok())
        .ok_or_else(|| CheckpointError::BadHash(hash.to_owned()))?;
    Ok(Parsed {
        checkpoint: Checkpoint {
            origin,
            size,
            hash: Hash(hash),
        },
        note,
    })
}

/// A new key pair named `name`: (signer key, verifier key), in the note key formats.
pub fn generate_keys(name: &str) -> Result<(String, String), CheckpointError> {
    if !signed_note::is_key_name_valid(name) {
        return Err(CheckpointError::BadKeyName(name.to_owned()));
    }
    Ok(signed_note::generate_key(&mut rand_core::OsRng, name))
}

/// Checks that a verifier key file's contents are a verifier key.
pub fn verifier(key: &str) -> Result<StandardVerifier, CheckpointError> {
    if key.starts_with("PRIVATE+KEY+") {
        return Err(CheckpointError::PrivateKeyGiven);
    }
    StandardVerifier::new(key.trim()).map_err(|e| CheckpointError::NotAVerifierKey(e.to_string()))
}

/// What the signatures of a checkpoint say for one verifier key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SignatureCheck {
    /// A signature by this key verifies.
    Valid,
    /// The checkpoint carries no signature by this key.
    Missing,
    /// A signature by this key is there and does not verify.
    Invalid,
}

pub(crate) fn check_signature(parsed: &Parsed, key: StandardVerifier) -> SignatureCheck {
    let Some(note) = &parsed.note else {
        return SignatureCheck::Missing;
    };
    match note.verify(&VerifierList::new(vec![Box::new(key)])) {
        Ok(_) => SignatureCheck::Valid,
        Err(NoteError::UnverifiedNote) => SignatureCheck::Missing,
        Err(_) => SignatureCheck::Invalid,
    }
}

/// Whether a journal extends a checkpoint (part of [`CheckpointReport`]).
#[derive(Debug, Clone, serde::Serialize)]
pub struct Extension {
    /// The record at the checkpoint's seq has the pinned hash, and the chain verifies up to
    /// it.
    pub extends: bool,
    pub checkpoint_size: u64,
    /// Valid records in the journal now.
    pub journal_records: u64,
    /// What breaks the extension, or damage after the checkpoint.
    pub problem: Option<String>,
}

/// Reads the journal in `reader` and checks it against `cp`.
pub(crate) fn check_extends(
    reader: &crate::journal::JournalReader,
    cp: &Checkpoint,
) -> crate::error::Result<Extension> {
    let mut ext = Extension {
        extends: false,
        checkpoint_size: cp.size,
        journal_records: 0,
        problem: None,
    };
    let (header, _, genesis) = match reader.header() {
        Ok(h) => h,
        Err(e) => {
            ext.problem = Some(format!("the journal header is damaged: {e}"));
            return Ok(ext);
        }
    };
    let origin = origin_for(&header.session_id);
    if origin != cp.origin {
        ext.problem = Some(format!(
            "the checkpoint is for {:?}, this journal is {origin:?}",
            cp.origin
        ));
        return Ok(ext);
    }
    if cp.size == 0 {
        ext.extends = genesis == cp.hash;
        if !ext.extends {
            ext.problem = Some(
                "the journal's header is not the one checkpointed (genesis hash differs): \
                 the journal was recreated or replaced"
                    .into(),
            );
        }
    }
    for r in reader.records()? {
        match r {
            Ok(rec) => {
                ext.journal_records = rec.seq;
                if rec.seq == cp.size {
                    if rec.hash != cp.hash {
                        ext.problem = Some(format!(
                            "REWRITTEN: record seq {} has hash {}, the checkpoint pins {}: \
                             the journal was rewritten at or before seq {}",
                            rec.seq, rec.hash, cp.hash, rec.seq
                        ));
                        return Ok(ext);
                    }
                    ext.extends = true;
                }
            }
            Err(stop) => {
                ext.problem = Some(if ext.extends {
                    format!(
                        "the journal extends the checkpoint, but is damaged after it at offset {}: {}",
                        stop.offset, stop.problem
                    )
                } else {
                    format!(
                        "damage at offset {} (after seq {}) before the checkpointed seq {}: {}",
                        stop.offset, ext.journal_records, cp.size, stop.problem
                    )
                });
                return Ok(ext);
            }
        }
    }
    if ext.journal_records < cp.size {
        ext.problem = Some(format!(
            "TRUNCATED: the journal ends at seq {}, the checkpoint pins seq {}",
            ext.journal_records, cp.size
        ));
    }
    Ok(ext)
}

/// What a signature check found, as `verify --json` names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SignatureStatus {
    /// No key was given (`--pubkey`).
    NotChecked,
    Valid,
    Missing,
    Invalid,
}

/// The checkpoint line of `verify --checkpoint FILE`: its JSON form (`verify --json`) is this
/// struct, one object on its own line after the journals' reports.
#[derive(Debug, Clone, serde::Serialize)]
pub struct CheckpointReport {
    /// The checkpoint file.
    pub checkpoint: std::path::PathBuf,
    /// The journal extends the checkpoint, undamaged, with a valid signature if a key was given.
    pub ok: bool,
    pub origin: String,
    /// The seq and chain hash (hex) the checkpoint pins.
    pub size: u64,
    pub hash: String,
    #[serde(flatten)]
    pub extension: Extension,
    pub signature: SignatureStatus,
    /// True if the checkpoint carries a signed note (whether or not it was checked).
    pub signed: bool,
    /// Records the checkpoint covers that were erased after it (their `sjournal.erased`
    /// record comes after it): the chain still extends the checkpoint, but what those records
    /// hold is no longer what it pinned ([`CheckpointReport::note_erasures`]).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub erased_since: Vec<crate::journal::verify::Erasure>,
}

impl CheckpointReport {
    /// Checks the journal in `reader` against a parsed checkpoint (and its signature, if a
    /// verifier key was given).
    pub fn check(
        file: &std::path::Path,
        reader: &crate::journal::JournalReader,
        parsed: &Parsed,
        key: Option<StandardVerifier>,
    ) -> crate::error::Result<CheckpointReport> {
        let signature = match key {
            None => SignatureStatus::NotChecked,
            Some(k) => match check_signature(parsed, k) {
                SignatureCheck::Valid => SignatureStatus::Valid,
                SignatureCheck::Missing => SignatureStatus::Missing,
                SignatureCheck::Invalid => SignatureStatus::Invalid,
            },
        };
        let extension = check_extends(reader, &parsed.checkpoint)?;
        let sig_ok = matches!(
            signature,
            SignatureStatus::NotChecked | SignatureStatus::Valid
        );
        Ok(CheckpointReport {
            checkpoint: file.to_owned(),
            ok: extension.extends && extension.problem.is_none() && sig_ok,
            origin: parsed.checkpoint.origin.clone(),
            size: parsed.checkpoint.size,
            hash: parsed.checkpoint.hash.to_hex(),
            extension,
            signature,
            signed: parsed.note.is_some(),
            erased_since: Vec::new(),
        })
    }

    /// Notes the erasures (of the journal's verify) of records the checkpoint covers that
    /// were recorded after it.
    pub fn note_erasures(&mut self, erasures: &[crate::journal::verify::Erasure]) {
        self.erased_since = erasures
            .iter()
            .filter(|e| e.seq <= self.size && e.recorded_at > self.size)
            .cloned()
            .collect();
    }

    /// The one-line text form.
    pub fn summary(&self) -> String {
        let sig = match self.signature {
            SignatureStatus::NotChecked if !self.signed => "none",
            SignatureStatus::NotChecked => "not checked (no --pubkey)",
            SignatureStatus::Valid => "valid",
            SignatureStatus::Missing => "MISSING: no signature by that key",
            SignatureStatus::Invalid => "INVALID: the signature does not verify",
        };
        let e = &self.extension;
        let mut erased = String::new();
        for x in &self.erased_since {
            erased.push_str(&format!(
                "\n    erased since the checkpoint: seq {} ({}), recorded at seq {}, reason {:?}: \
                 what the checkpoint pinned of it is gone",
                x.seq,
                x.field
                    .as_deref()
                    .map_or("whole payload".into(), |f| format!("field {f}")),
                x.recorded_at,
                x.reason
            ));
        }
        format!(
            "{} checkpoint {} (seq {}, hash {}): {}; signature: {sig}{erased}",
            if self.ok { "ok " } else { "BAD" },
            self.checkpoint.display(),
            self.size,
            &self.hash[..16.min(self.hash.len())],
            match (&e.problem, e.extends) {
                (Some(p), _) => p.clone(),
                (None, true) =>
                    format!("the journal extends it ({} records now)", e.journal_records),
                (None, false) => "the journal does not extend it".into(),
            },
        )
    }
}

/// `verify --checkpoint FILE [--pubkey KEYFILE]` for one session: reads the checkpoint file
/// and the verifier key, and checks that the session's journal extends the checkpoint,
/// undamaged, with a valid signature if a key was given ([`CheckpointReport::ok`]). An
/// unreadable or malformed checkpoint or key file is an error naming the file.
pub fn verify(
    root: &crate::journal::Root,
    session: &str,
    checkpoint: &std::path::Path,
    pubkey: Option<&std::path::Path>,
) -> Result<CheckpointReport, Error> {
    use crate::storage::{read_regular_text, Owner};
    let text = read_regular_text(checkpoint, Owner::Anyone, 1 << 20)?;
    let parsed = parse(&text).map_err(|reason| Error::Checkpoint {
        path: checkpoint.to_owned(),
        reason,
    })?;
    let key = match pubkey {
        None => None,
        Some(k) => {
            let text = read_regular_text(k, Owner::Anyone, 1 << 20)?;
            Some(verifier(&text).map_err(|reason| Error::Key {
                path: k.to_owned(),
                reason,
            })?)
        }
    };
    let paths = root.existing_session(session)?;
    let reader = crate::journal::JournalReader::open(&paths.journal, None)?;
    Ok(CheckpointReport::check(checkpoint, &reader, &parsed, key)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The example of Go's golang.org/x/mod/sumdb/note documentation: keys and signed note
    /// must be read and written byte for byte as Go does (ed25519 signatures are
    /// deterministic), so Go tools check our checkpoints and we theirs.
    #[test]
    fn go_note_reference_vector() {
        let skey = "PRIVATE+KEY+PeterNeumann+c74f20a3+AYEKFALVFGyNhPJEMzD1QIDr+Y7hfZx09iUvxdXHKDFz";
        let vkey = "PeterNeumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW";
        let text = "If you think cryptography is the answer to your problem,\n\
                    then you don't know what your problem is.\n";
        let signed = "If you think cryptography is the answer to your problem,\n\
            then you don't know what your problem is.\n\n\u{2014} PeterNeumann \
            x08go/ZJkuBS9UG/SffcvIAQxVBtiFupLLr8pAcElZInNIuGUgYN1FFYC2pZSNXgKvqfqdngotpRZb6KE6RyyBwJnAM=\n";
        let signer = StandardSigner::new(skey).unwrap();
        let mut note = signed_note::Note::new(text.as_bytes(), &[]).unwrap();
        note.add_sigs(&[&signer]).unwrap();
        assert_eq!(String::from_utf8(note.to_bytes()).unwrap(), signed);
        let v = verifier(vkey).unwrap();
        let parsed = signed_note::Note::from_bytes(signed.as_bytes()).unwrap();
        assert!(parsed.verify(&VerifierList::new(vec![Box::new(v)])).is_ok());
        assert_eq!(verifier(skey).err(), Some(CheckpointError::PrivateKeyGiven));
    }

    #[test]
    fn sign_parse_check() {
        let (skey, vkey) = generate_keys("auditor").unwrap();
        let cp = Checkpoint {
            origin: origin_for("s 1"),
            size: 7,
            hash: Hash([7; 32]),
        };
        assert!(cp.origin.starts_with("sjournal/h-"), "{}", cp.origin);
        let text = cp.signed(&skey).unwrap();
        let parsed = parse(&text).unwrap();
        assert_eq!(parsed.checkpoint, cp);
        assert_eq!(
            check_signature(&parsed, verifier(&vkey).unwrap()),
            SignatureCheck::Valid
        );
        let (_, other) = generate_keys("auditor").unwrap();
        assert_eq!(
            check_signature(&parsed, verifier(&other).unwrap()),
            SignatureCheck::Missing
        );
        let edited = parse(&text.replace("\n7\n", "\n8\n")).unwrap();
        assert_eq!(
            check_signature(&edited, verifier(&vkey).unwrap()),
            SignatureCheck::Invalid
        );
        assert_eq!(parse(&cp.body()).unwrap().checkpoint, cp);
        assert!(generate_keys("bad name").is_err());
    }
}
