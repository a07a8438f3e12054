//! `sjournal checkpoint --session ID [--sign KEYFILE] [--json]`: prints a checkpoint of the
//! session's journal (C2SP tlog-checkpoint: origin, record count, chain head hash),
//! optionally signed with an ed25519 key. `sjournal checkpoint keygen OUT [--name NAME]`
//! writes a new key pair: OUT (the signer key) and OUT.pub (the verifier key), both 0600,
//! never overwriting. The formats are described in [`sjournal::audit::checkpoint`].
//!
//! `sjournal verify --session ID --checkpoint FILE [--pubkey KEYFILE]` checks one later
//! ([`sjournal::audit::checkpoint::verify`]).
//!
//! A journal with a problem gets no checkpoint: exit 1, the problem on stderr.

use std::io::Write;
use std::path::{Path, PathBuf};

use crate::cli::error::Result;
use crate::cli::{output, Outcome};
use sjournal::audit::checkpoint::{generate_keys, origin_for, Checkpoint, Error};
use sjournal::format::Hash;
use sjournal::journal::{paths, verify_file, Root};

/// Print a checkpoint (origin, record count, chain head), optionally signed; or make keys
#[derive(Debug, clap::Args)]
#[command(
    after_help = crate::cli::EXIT_CODES,
    args_conflicts_with_subcommands = true,
    subcommand_negates_reqs = true
)]
pub struct Args {
    #[command(subcommand)]
    pub command: Option<Sub>,
    /// The session: its id, as the host gave it
    #[arg(long, required = true)]
    pub session: Option<String>,
    /// Sign with this signer key (from `sjournal checkpoint keygen`)
    #[arg(long, value_name = "KEYFILE")]
    pub sign: Option<PathBuf>,
    /// Print a JSON object (with the note text in `note`)
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, clap::Subcommand)]
pub enum Sub {
    /// Make an ed25519 key pair: OUT (signer, keep it private) and OUT.pub (verifier)
    Keygen(KeygenArgs),
}

#[derive(Debug, clap::Args)]
#[command(after_help = "\
Key files (the C2SP signed-note key formats, one line each; Go's sumdb/note reads them):
  OUT      PRIVATE+KEY+<name>+<key id>+<base64(0x01 || 32-byte ed25519 seed)>
  OUT.pub  <name>+<key id>+<base64(0x01 || 32-byte ed25519 public key)>
The key id is 8 hex digits: the first 4 bytes of SHA-256(name || \"\\n\" || 0x01 || public key).
Both files are created 0600; existing files are never overwritten.")]
pub struct KeygenArgs {
    /// Where to write the signer key (the verifier key goes to OUT.pub)
    pub out: PathBuf,
    /// Key name, written into signatures (no spaces or '+')
    #[arg(long, default_value = "sjournal")]
    pub name: String,
}

pub fn run(root: &Root, args: Args) -> Result<Outcome> {
    if let Some(Sub::Keygen(k)) = args.command {
        return keygen(k);
    }
    let session = args.session.expect("clap requires --session");
    // A checkpoint signs the head: never one that leaves acknowledged events out.
    let pending = crate::cli::pending::settle(root, &session)?;
    if !pending.waiting.is_empty() {
        eprintln!(
            "sjournal: no checkpoint made: {} spooled event file(s) of session {session:?} are not \
             yet in the journal, and a checkpoint of its head would leave them out. Run `sjournal \
             flush --session {session}` once the journal can take them, then checkpoint again",
            pending.waiting.len()
        );
        return Ok(Outcome::Findings);
    }
    let p = root.existing_session(&session)?;
    let report = verify_file(&p.journal, None)?;
    if let Some(f) = &report.problem {
        output::warn(&format!(
            "sjournal: {}: no checkpoint made: the journal has a problem at offset {}: {} \
             (run `sjournal inspect` on it)",
            p.journal.display(),
            f.offset,
            f.what
        ));
        return Ok(Outcome::Findings);
    }
    let head = report
        .head
        .as_deref()
        .and_then(Hash::from_hex)
        .expect("verify reports the head of an intact journal");
    let cp = Checkpoint {
        origin: origin_for(&session),
        size: report.last_seq,
        hash: head,
    };
    let note = match &args.sign {
        None => cp.body(),
        Some(keyfile) => cp
            .signed(&read_key(keyfile)?)
            .map_err(|reason| Error::Key {
                path: keyfile.clone(),
                reason,
            })?,
    };
    let mut out = output::stdout();
    if args.json {
        let line = sjournal::report::CheckpointLine {
            origin: &cp.origin,
            size: cp.size,
            hash: cp.hash.to_hex(),
            signed: args.sign.is_some(),
            note: &note,
        };
        output::json_line(&mut out, &sjournal::report::line(&line))?;
    } else {
        out.write_all(note.as_bytes()).map_err(output::write_err)?;
    }
    out.flush().map_err(output::write_err)?;
    Ok(Outcome::Ok)
}

fn read_key(path: &Path) -> Result<String> {
    Ok(sjournal::storage::read_regular_text(
        path,
        sjournal::storage::Owner::Anyone,
        1 << 20,
    )?)
}

fn keygen(args: KeygenArgs) -> Result<Outcome> {
    let (signer, verifier) = generate_keys(&args.name).map_err(|reason| Error::Key {
        path: args.out.clone(),
        reason,
    })?;
    let mut pub_path = args.out.clone().into_os_string();
    pub_path.push(".pub");
    let pub_path = PathBuf::from(pub_path);
    for (path, text) in [(&args.out, &signer), (&pub_path, &verifier)] {
        // create_new: never overwrite a key; 0600, no symlink followed.
        let mut f = paths::create_new(path)?;
        f.write_all(format!("{text}\n").as_bytes())
            .and_then(|()| f.sync_all())
            .map_err(|e| sjournal::Error::io("write", path, e))?;
    }
    let mut out = output::stdout();
    output::line(
        &mut out,
        &format!(
            "signer key (keep private): {}\nverifier key: {}\n{}",
            args.out.display(),
            pub_path.display(),
            verifier
        ),
    )?;
    Ok(Outcome::Ok)
}
