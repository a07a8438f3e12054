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
    pub fn signed(&self, key: &str) -> Result<String, String> {
        let signer = StandardSigner::new(key.trim()).map_err(|e| {
            format!("not a signer key ({e}); make one with `sjournal checkpoint keygen`")
        })?;
        let mut note = signed_note::Note::new(self.body().as_bytes(), &[])
            .map_err(|e| format!("cannot make a note of the checkpoint: {e}"))?;
        note.add_sigs(&[&signer])
            .map_err(|e| format!("signing failed: {e}"))?;
        String::from_utf8(note.to_bytes()).map_err(|e| e.to_string())
    }
}

/// Reads a checkpoint file: the body and, if present, its signatures. Extension lines after
/// the hash are allowed and ignored (signatures cover them all the same).
pub fn parse(text: &str) -> Result<Parsed, String> {
    let (body, note) = if text.contains("\n\n") {
        let note = signed_note::Note::from_bytes(text.as_bytes())
            .map_err(|e| format!("malformed signed note: {e}"))?;
        let body = String::from_utf8(note.text().to_vec()).map_err(|e| e.to_string())?;
        (body, Some(note))
    } else {
        (text.to_owned(), None)
    };
    if !body.ends_with('\n') {
        return Err("the checkpoint text must end with a newline".into());
    }
    let mut lines = body.lines();
    let mut next = |what: &str| {
        lines
            .next()
            .filter(|l| !l.is_empty())
            .ok_or(format!("missing {what} line"))
    };
    let origin = next("origin")?.to_owned();
    let size = next("record count")?;
    let size: u64 = size
        .parse()
        .map_err(|_| format!("record count {size:?} is not a number"))?;
    let hash = next("hash")?;
    let hash = B64
        .decode(hash)
        .ok()
        .and_then(|b| <[u8; 32]>::try_from(b).ok())
        .ok_or(format!("hash {hash:?} is not 32 bytes of base64"))?;
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
pub fn generate_keys(name: &str) -> Result<(String, String), String> {
    if !signed_note::is_key_name_valid(name) {
        return Err(format!("invalid key name {name:?}: no spaces or '+'"));
    }
    Ok(signed_note::generate_key(&mut rand_core::OsRng, name))
}

/// Checks that a verifier key file's contents are a verifier key.
pub fn verifier(key: &str) -> Result<StandardVerifier, String> {
    if key.starts_with("PRIVATE+KEY+") {
        return Err("this is a private signer key; pass the verifier key (KEYFILE.pub)".into());
    }
    StandardVerifier::new(key.trim()).map_err(|e| format!("not a verifier key: {e}"))
}

/// What the signatures of a checkpoint say for one verifier key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SignatureCheck {
    /// A signature by this key verifies.
    Valid,
    /// The checkpoint carries no signature by this key.
    Missing,
    /// A signature by this key is there and does not verify.
    Invalid,
}

pub fn check_signature(parsed: &Parsed, key: StandardVerifier) -> SignatureCheck {
    let Some(note) = &parsed.note else {
        return SignatureCheck::Missing;
    };
    match note.verify(&VerifierList::new(vec![Box::new(key)])) {
        Ok(_) => SignatureCheck::Valid,
        Err(NoteError::UnverifiedNote) => SignatureCheck::Missing,
        Err(_) => SignatureCheck::Invalid,
    }
}

/// Whether a journal extends a checkpoint. The JSON form is part of `verify --json`.
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
pub fn check_extends(
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
        assert!(verifier(skey).is_err_and(|e| e.contains("private")));
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
