//! What the model already has at compact: the instruction files the host loaded
//! (`InstructionsLoaded.file_path`, kept in the session's state), read here — in the hook,
//! never in the fold — so that memory does not inject a line such a file already says. What
//! was read goes into the `sjournal.extras` record (`FileRead`: path, bytes, blake3, what it
//! left out), so a replay re-derives the same injection without reading the file again.
//!
//! The file is opened with care: an absolute path only, a regular file once opened (not a
//! FIFO or a device: opened non-blocking and without becoming a controlling terminal, checked
//! with `fstat` before a byte is read), at most `limits::INSTRUCTION_FILE_MAX_BYTES`. A file
//! that fails any of these is not read; the record says why, and nothing is left out because
//! of it. Symlinks are followed: these are the user's own files, which the host itself read
//! (`CLAUDE.md -> AGENTS.md` is common), the bytes are only compared, never injected, and
//! sjournal's own root, where no symlink is followed, is not involved.

use std::io::Read;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

use crate::format::hash::content_hash;
use crate::format::payload::FileRead;
use crate::limits::INSTRUCTION_FILE_MAX_BYTES;

/// Whitespace runs collapsed to one space: how a line is looked for in a file (a file may wrap
/// or indent what an item says on one line).
pub fn squash(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Reads the instruction file at `path`: what to journal, and its text squashed (empty when it
/// was not read).
pub fn read(path: &str) -> (FileRead, String) {
    let mut r = FileRead {
        path: path.to_owned(),
        ..Default::default()
    };
    match read_bounded(Path::new(path)) {
        Ok(bytes) => {
            r.bytes = bytes.len() as u64;
            r.blake3 = Some(content_hash(&bytes).to_hex().to_string());
            (r, squash(&String::from_utf8_lossy(&bytes)))
        }
        Err(e) => {
            r.error = Some(e);
            (r, String::new())
        }
    }
}

fn read_bounded(path: &Path) -> Result<Vec<u8>, String> {
    if !path.is_absolute() {
        return Err("not an absolute path".into());
    }
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_CLOEXEC | libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)
        .map_err(|e| e.to_string())?;
    let meta = file.metadata().map_err(|e| e.to_string())?;
    if !meta.is_file() {
        return Err("not a regular file".into());
    }
    if meta.len() > INSTRUCTION_FILE_MAX_BYTES {
        return Err(format!(
            "{} bytes, larger than {INSTRUCTION_FILE_MAX_BYTES}",
            meta.len()
        ));
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    file.take(INSTRUCTION_FILE_MAX_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| e.to_string())?;
    if bytes.len() as u64 > INSTRUCTION_FILE_MAX_BYTES {
        return Err(format!("grew past {INSTRUCTION_FILE_MAX_BYTES} bytes"));
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fifo_a_relative_path_and_a_large_file_are_not_read_and_a_symlink_is_followed() {
        let d = tempfile::tempdir().unwrap();
        let real = d.path().join("CLAUDE.md");
        std::fs::write(&real, "Never   touch\n vendor/.").unwrap();
        let (r, text) = read(real.to_str().unwrap());
        assert_eq!(text, "Never touch vendor/.");
        assert_eq!(r.bytes, 23);
        assert!(r.blake3.is_some() && r.error.is_none());

        let link = d.path().join("LINK.md");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        let (r, text) = read(link.to_str().unwrap());
        assert_eq!(text, "Never touch vendor/.");
        assert!(r.error.is_none() && r.bytes == 23);

        let dev = d.path().join("DEV.md");
        std::os::unix::fs::symlink("/dev/zero", &dev).unwrap();
        let (r, _) = read(dev.to_str().unwrap());
        assert_eq!(r.error.as_deref(), Some("not a regular file"));

        let fifo = d.path().join("FIFO.md");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        assert!(made.unwrap().success());
        let (r, _) = read(fifo.to_str().unwrap());
        assert_eq!(r.error.as_deref(), Some("not a regular file"));

        let (r, _) = read("CLAUDE.md");
        assert_eq!(r.error.as_deref(), Some("not an absolute path"));

        let big = d.path().join("BIG.md");
        std::fs::write(&big, vec![b'a'; INSTRUCTION_FILE_MAX_BYTES as usize + 1]).unwrap();
        let (r, text) = read(big.to_str().unwrap());
        assert!(text.is_empty() && r.error.unwrap().contains("larger than"));
    }
}
