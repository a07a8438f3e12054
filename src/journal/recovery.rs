//! The recovery rule, written once: what the bytes after a journal's last valid record are,
//! and so whether a writer may cut them. The writer (`Writer::recover`) acts on the verdict;
//! `verify` reports it. Each branch names its row of the case table in journal-format.md
//! ("## Recovery case table"), and the unit tests below are labelled the same way.
//!
//! A tail is cut only if it is **provably torn**: damage an interrupted write leaves (an
//! incomplete frame, an impossible length, a CRC mismatch; rows 7, 8, 16, 18, 20), no longer
//! than one write (`BATCH_MAX_BYTES`; row 12), with no CRC-valid record that could follow the
//! last valid one anywhere inside it (row 9), and holding no record the high-water mark says
//! was acknowledged (row 22; see `journal::hwm`). A CRC-valid record out of place is an edit
//! or a bug, never a torn write (rows 10, 11). Anything else is refused, and the file is left
//! byte for byte as it was.

use std::fmt;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::format::hash::content_hash;
use crate::format::header::{self, Header, HeaderError};
use crate::format::Hash;
use crate::journal::paths;
use crate::journal::scan::{self, Problem, Stop};
use crate::journal::verify::witness::WitnessKind;
use crate::limits::{BATCH_MAX_BYTES, QUARANTINE_NAMES_MAX};
use crate::storage::Fs;

/// What the bytes after the last valid record are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict<T> {
    /// Nothing follows the last valid record (row 6; an append in flight, row 21, is not seen
    /// by a writer, which holds the lock).
    Clean,
    /// A provably torn tail from `offset` to the end of the file: quarantine `tail`, cut it,
    /// and name the cut in a `sjournal.recovered` record (rows 7, 8, 16, 18, 20).
    TornTail {
        offset: u64,
        tail: T,
        reason: String,
    },
    /// Not a torn tail: refuse, change nothing (rows 9-12, 22).
    Corrupt { offset: u64, reason: Corruption },
}

/// Why a journal refuses appends: its damage is not a torn tail recovery may cut, or it lost
/// records that were acknowledged. Each names what was found and why nothing was cut.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Corruption {
    /// Row 9: damaged bytes with a valid record after them, at `follows`.
    ValidRecordFollows { problem: Problem, follows: u64 },
    /// Rows 10, 11 (and a CRC-valid frame with a bad field): a record that is whole but does
    /// not belong where it is. Only an edit or a bug makes one.
    OutOfPlace { problem: Problem },
    /// Row 12: more damaged bytes than one write can leave torn.
    TooLong { problem: Problem, len: u64 },
    /// Row 22: the damage holds record seq `seq`, which the high-water mark says was
    /// acknowledged (synced) up to seq `acknowledged`: bit rot or an edit, not a torn write.
    Acknowledged {
        problem: Problem,
        seq: u64,
        acknowledged: u64,
    },
    /// Row 23: the journal ends at `last_seq`, before the record `seq` that witness `by` (the
    /// high-water mark, its copy, the tail hint, the snapshot) names (an older copy restored,
    /// a truncation at a record boundary, a deleted journal).
    RolledBack {
        seq: u64,
        hash: Hash,
        last_seq: u64,
        by: WitnessKind,
    },
    /// Row 24: the journal's record `seq` is not the one witness `by` names (hash `hash`): its
    /// history was replaced from there on.
    Replaced {
        seq: u64,
        hash: Hash,
        found: Hash,
        by: WitnessKind,
    },
}

impl Corruption {
    /// True for the two findings of the high-water mark (rows 23, 24).
    pub fn is_rollback(&self) -> bool {
        matches!(
            self,
            Corruption::RolledBack { .. } | Corruption::Replaced { .. }
        )
    }
}

impl fmt::Display for Corruption {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Corruption::ValidRecordFollows { problem, follows } => write!(
                f,
                "{problem}; a valid record follows at offset {follows}, so the damage is not a \
                 torn write and nothing was cut"
            ),
            Corruption::OutOfPlace { problem } => write!(
                f,
                "{problem}; a whole record out of place is an edit or a bug, never a torn \
                 write, so nothing was cut"
            ),
            Corruption::TooLong { problem, len } => write!(
                f,
                "{problem}; the {len} bytes from here to the end are more than one write can \
                 leave torn ({BATCH_MAX_BYTES}), so nothing was cut"
            ),
            Corruption::Acknowledged {
                problem,
                seq,
                acknowledged,
            } => write!(
                f,
                "{problem}; record seq {seq} was acknowledged (the high-water mark is seq \
                 {acknowledged}), so its damage is not a torn write and nothing was cut"
            ),
            Corruption::RolledBack {
                seq,
                hash,
                last_seq,
                by,
            } => write!(
                f,
                "rolled back: seq {seq} (hash {}) was {}, but the journal ends at seq \
                 {last_seq} (an older copy restored, records cut off, or the journal deleted); \
                 witness: {}",
                hash.to_hex(),
                by.what_it_proves(),
                by.describe()
            ),
            Corruption::Replaced {
                seq,
                hash,
                found,
                by,
            } => write!(
                f,
                "rolled back: seq {seq} (hash {}) was {}, but the journal's seq {seq} has hash \
                 {} (its history was replaced); witness: {}",
                hash.to_hex(),
                by.what_it_proves(),
                found.to_hex(),
                by.describe()
            ),
        }
    }
}

/// Classifies the bytes after the last valid record.
///
/// `stop` is where the scan of valid records stopped (None: at the end of the file, row 6);
/// `file_len` the file's length; `last_seq` the seq of the last valid record;
/// `acknowledged` the seq of the high-water mark, if one was read. `read_tail(offset, len)`
/// is called only when the bytes are needed (damage no longer than one write), and the bytes
/// are handed back in the verdict for the quarantine copy.
pub fn classify<T: AsRef<[u8]>, E>(
    stop: Option<&Stop>,
    file_len: u64,
    last_seq: u64,
    acknowledged: Option<u64>,
    read_tail: impl FnOnce(u64, u64) -> Result<T, E>,
) -> Result<Verdict<T>, E> {
    let Some(Stop { offset, problem }) = stop else {
        return Ok(Verdict::Clean);
    };
    let (offset, problem) = (*offset, problem.clone());
    let corrupt = |reason| Ok(Verdict::Corrupt { offset, reason });
    // Rows 10, 11: whole records out of place.
    if !problem.is_damage() {
        return corrupt(Corruption::OutOfPlace { problem });
    }
    // Row 12: more than one write.
    let len = file_len.saturating_sub(offset);
    if len > BATCH_MAX_BYTES {
        return corrupt(Corruption::TooLong { problem, len });
    }
    // Row 9: a valid record after the damage.
    let tail = read_tail(offset, len)?;
    if let Some(rel) = scan::find_valid_frame_after(tail.as_ref(), last_seq) {
        return corrupt(Corruption::ValidRecordFollows {
            problem,
            follows: offset + rel as u64,
        });
    }
    // Row 22: the damaged bytes start with a record that was acknowledged.
    let seq = last_seq + 1;
    if let Some(acknowledged) = acknowledged.filter(|&a| a >= seq) {
        return corrupt(Corruption::Acknowledged {
            problem,
            seq,
            acknowledged,
        });
    }
    // Rows 7, 8, 16, 18, 20.
    let reason = match &problem {
        Problem::Frame(e) => format!("torn tail: {e}"),
        p => p.to_string(),
    };
    Ok(Verdict::TornTail {
        offset,
        tail,
        reason,
    })
}

/// Rows 1 and 2: true if a file whose header does not decode is an interrupted creation, which
/// recovery may quarantine and start afresh. The header is written and synced alone before any
/// record, so a file no longer than a header, with no valid frame in it, holds no record.
/// `head` is the first `min(file_len, header::MAX_LEN)` bytes. Rows 3 and 4 (a damaged header
/// followed by records, a header of another version) are refused.
pub fn is_torn_header(head: &[u8], file_len: u64) -> bool {
    match Header::decode(head) {
        Ok(_) => false,
        Err(HeaderError::Incomplete { .. } | HeaderError::Invalid(_)) => {
            file_len <= header::MAX_LEN as u64 && scan::find_valid_frame_after(head, 0).is_none()
        }
        Err(_) => false,
    }
}

/// Rows 22-24, checked after the tail is settled: whether the journal, ending at `last_seq`
/// with hash `head`, still holds the acknowledged record (`mark_seq`, `mark_hash`). A journal
/// longer than the mark is not checked here (the writer does not index its records; `verify`
/// walks them and checks the hash at the mark's seq).
pub fn check_mark(
    last_seq: u64,
    head: Hash,
    mark_seq: u64,
    mark_hash: Hash,
) -> Result<(), Corruption> {
    check_claim(last_seq, head, mark_seq, mark_hash, WitnessKind::Mark)
}

/// [`check_mark`] for any witness `by` that names record `seq` with hash `hash`.
pub fn check_claim(
    last_seq: u64,
    head: Hash,
    seq: u64,
    hash: Hash,
    by: WitnessKind,
) -> Result<(), Corruption> {
    if last_seq < seq {
        return Err(Corruption::RolledBack {
            seq,
            hash,
            last_seq,
            by,
        });
    }
    if last_seq == seq && head != hash {
        return Err(Corruption::Replaced {
            seq,
            hash,
            found: head,
            by,
        });
    }
    Ok(())
}

/// Copies bytes recovery is about to cut to a quarantine file beside the journal (0600,
/// synced, directory synced; never deleted) and returns its path. The name is
/// `<journal>.quarantine-<offset>-<blake3/16>.bin`, so a recovery interrupted after the copy
/// finds it again (row 18). An existing file is relied on only if it holds exactly these bytes
/// (its length and blake3 are checked): a copy left empty or short by a full disk, or any other
/// file put there, is left as it is and the bytes go to the next free name
/// (`…-<blake3/16>-1.bin`, `-2`, …). A symlink, FIFO or anything else that is not a regular
/// file at a name is passed over the same way: never followed, opened or deleted.
pub fn keep_in_quarantine(
    fs: &dyn Fs,
    journal: &Path,
    offset: u64,
    bytes: &[u8],
    digest: Hash,
) -> Result<PathBuf> {
    let dir = journal.parent().unwrap_or(Path::new("."));
    let base = format!(
        "{}.quarantine-{offset}-{}",
        journal
            .file_name()
            .map(|n| n.to_string_lossy())
            .unwrap_or_default(),
        &digest.to_hex()[..16]
    );
    for n in 0..QUARANTINE_NAMES_MAX {
        let qpath = match n {
            0 => dir.join(format!("{base}.bin")),
            n => dir.join(format!("{base}-{n}.bin")),
        };
        match std::fs::symlink_metadata(&qpath) {
            Ok(m) if m.is_file() && m.len() == bytes.len() as u64 => {
                // Read as every file is (no link followed, no FIFO waited on): a name whose
                // file changed since the look above is passed over too.
                let kept = crate::storage::read_regular(
                    &qpath,
                    crate::storage::Owner::Anyone,
                    bytes.len() as u64,
                );
                if kept.is_ok_and(|k| content_hash(&k) == digest) {
                    return Ok(qpath);
                }
            }
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                match fs.write_new(&qpath, bytes) {
                    Ok(()) => {}
                    // Something took the name since the look above: the next name.
                    Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                    Err(e) => return Err(Error::io("write", &qpath, e)),
                }
                paths::sync_dir_with(fs, dir)?;
                return Ok(qpath);
            }
            Err(e) => return Err(Error::io("inspect", &qpath, e)),
        }
    }
    Err(Error::io(
        "quarantine",
        dir.join(format!("{base}.bin")),
        std::io::Error::other(format!(
            "{QUARANTINE_NAMES_MAX} files by that name already hold other bytes"
        )),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::record::{self, FrameError};
    use std::convert::Infallible;

    fn frame(seq: u64) -> Vec<u8> {
        let mut b = Vec::new();
        record::encode(&mut b, seq, 1, "Stop", &Hash::ZERO, b"\xa2{}");
        b
    }

    fn stop(offset: u64, problem: Problem) -> Stop {
        Stop { offset, problem }
    }

    fn crc() -> Problem {
        Problem::Frame(FrameError::BadCrc {
            stored: 1,
            computed: 2,
        })
    }

    fn run(s: Option<&Stop>, tail: &[u8], last_seq: u64, ack: Option<u64>) -> Verdict<Vec<u8>> {
        let at = s.map_or(0, |s| s.offset);
        classify(s, at + tail.len() as u64, last_seq, ack, |_, _| {
            Ok::<_, Infallible>(tail.to_vec())
        })
        .unwrap()
    }

    #[test]
    fn row_6_clean() {
        assert_eq!(run(None, b"", 3, Some(3)), Verdict::Clean);
    }

    #[test]
    fn rows_7_8_torn_tail_is_cut() {
        let mut torn = frame(4);
        torn.truncate(30);
        let v = run(Some(&stop(100, crc())), &torn, 3, Some(3));
        assert!(
            matches!(v, Verdict::TornTail { offset: 100, ref tail, .. } if *tail == torn),
            "{v:?}"
        );
    }

    #[test]
    fn row_9_valid_record_after_damage_is_refused() {
        let mut tail = vec![0xffu8; 40];
        tail.extend(frame(5));
        let v = run(Some(&stop(100, crc())), &tail, 3, None);
        assert_eq!(
            v,
            Verdict::Corrupt {
                offset: 100,
                reason: Corruption::ValidRecordFollows {
                    problem: crc(),
                    follows: 140
                }
            }
        );
    }

    #[test]
    fn rows_10_11_out_of_place_is_refused() {
        for p in [
            Problem::SeqMismatch {
                expected: 4,
                found: 9,
            },
            Problem::ChainBroken { seq: 4 },
            Problem::Frame(FrameError::BadField("flags")),
        ] {
            let v = run(Some(&stop(100, p.clone())), &frame(9), 3, None);
            assert!(
                matches!(
                    v,
                    Verdict::Corrupt {
                        reason: Corruption::OutOfPlace { .. },
                        ..
                    }
                ),
                "{p:?}: {v:?}"
            );
        }
    }

    #[test]
    fn row_12_too_long_is_refused_without_reading() {
        let s = stop(100, crc());
        let v = classify(Some(&s), 100 + BATCH_MAX_BYTES + 1, 3, None, |_, _| {
            Err::<Vec<u8>, _>("must not read")
        })
        .unwrap();
        assert!(
            matches!(v, Verdict::Corrupt { reason: Corruption::TooLong { len, .. }, .. } if len == BATCH_MAX_BYTES + 1),
            "{v:?}"
        );
    }

    #[test]
    fn row_22_acknowledged_record_is_never_cut() {
        let mut torn = frame(4);
        torn.truncate(30);
        let v = run(Some(&stop(100, crc())), &torn, 3, Some(4));
        assert!(
            matches!(
                v,
                Verdict::Corrupt {
                    reason: Corruption::Acknowledged {
                        seq: 4,
                        acknowledged: 4,
                        ..
                    },
                    ..
                }
            ),
            "{v:?}"
        );
        // A mark behind the damage (the torn write was never acknowledged) still cuts.
        assert!(matches!(
            run(Some(&stop(100, crc())), &torn, 3, Some(2)),
            Verdict::TornTail { .. }
        ));
    }

    #[test]
    fn rows_23_24_rollback() {
        let h = Hash([7; 32]);
        assert_eq!(check_mark(5, Hash::ZERO, 5, Hash::ZERO), Ok(()));
        assert_eq!(check_mark(9, Hash::ZERO, 5, h), Ok(()));
        assert!(matches!(
            check_mark(4, Hash::ZERO, 5, h),
            Err(Corruption::RolledBack {
                seq: 5,
                last_seq: 4,
                ..
            })
        ));
        let e = check_mark(5, Hash::ZERO, 5, h).unwrap_err();
        assert!(matches!(e, Corruption::Replaced { seq: 5, .. }));
        assert!(e.to_string().starts_with("rolled back: seq 5 (hash 0707"));
    }

    /// The refusal says which rule failed: "valid records follow" only for row 9, not for
    /// every refusal.
    #[test]
    fn each_refusal_names_its_own_reason() {
        let crc = crc();
        let cases = [
            (
                Corruption::ValidRecordFollows {
                    problem: crc.clone(),
                    follows: 9,
                },
                "a valid record follows at offset 9",
            ),
            (
                Corruption::OutOfPlace {
                    problem: Problem::SeqMismatch {
                        expected: 2,
                        found: 5,
                    },
                },
                "a whole record out of place",
            ),
            (
                Corruption::TooLong {
                    problem: crc.clone(),
                    len: 1 << 30,
                },
                "more than one write",
            ),
            (
                Corruption::Acknowledged {
                    problem: crc,
                    seq: 3,
                    acknowledged: 4,
                },
                "was acknowledged",
            ),
        ];
        for (reason, says) in cases {
            let follows = matches!(reason, Corruption::ValidRecordFollows { .. });
            let e = crate::Error::from(crate::journal::Corrupt {
                path: "j.sjl".into(),
                offset: 1,
                seq: 2,
                reason,
            })
            .to_string();
            assert!(e.contains(says), "{e}");
            assert_eq!(e.contains("valid record follows"), follows, "{e}");
            assert!(e.contains("sjournal repair"), "{e}");
        }
    }

    #[test]
    fn rows_1_to_4_header() {
        let h = Header::new("s", 1).encode();
        assert!(is_torn_header(b"", 0), "row 1");
        assert!(is_torn_header(&h[..10], 10), "row 2");
        let mut bad = h.clone();
        bad[30] ^= 1;
        assert!(
            is_torn_header(&bad, bad.len() as u64),
            "row 2: damaged, nothing after"
        );
        let mut with_record = bad.clone();
        with_record.extend(frame(1));
        assert!(
            !is_torn_header(&with_record, with_record.len() as u64),
            "row 3"
        );
        assert!(!is_torn_header(&h, h.len() as u64), "a valid header");
    }
}
