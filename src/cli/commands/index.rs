//! `sjournal index --from URL --pg CONNINFO [--schema NAME] [--rebuild] [--pubkey KEYFILE]`:
//! verifies new segments and inserts them, with the facts the fold extracts, into PostgreSQL
//! (see [`sjournal::remote::index`]). Exit 1 if a segment failed verification (it and the rest of
//! its stream are not indexed).

use std::path::PathBuf;

use crate::cli::error::Result;
use crate::cli::shared::remote_err;
use crate::cli::{output, Outcome};
use sjournal::error::Error;
use sjournal::remote::{self, index};

/// Index shipped journals into PostgreSQL (records, sessions, files, commands, prompts)
#[derive(Debug, clap::Args)]
#[command(after_help = "\
Idempotent: run it any number of times; --rebuild drops the schema and indexes everything again
(the rows come out identical). Example queries are in the README.")]
pub struct Args {
    /// Shipped journals: s3://BUCKET/PREFIX[/v1/...] or file:///DIR
    #[arg(long, value_name = "URL")]
    pub from: String,
    /// PostgreSQL connection string, e.g. postgres://user@127.0.0.1:5432/db
    #[arg(long, value_name = "CONNINFO")]
    pub pg: String,
    /// Schema for the tables
    #[arg(long, default_value = "sjournal")]
    pub schema: String,
    /// Drop the schema and index everything again
    #[arg(long)]
    pub rebuild: bool,
    /// Require valid checkpoint signatures by these verifier keys (one per line)
    #[arg(long, value_name = "KEYFILE")]
    pub pubkey: Vec<PathBuf>,
    /// Print JSON (one object per line) instead of text
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: Args) -> Result<Outcome> {
    let remote = remote::Remote::open(&args.from).map_err(remote_err)?;
    let opts = index::Options {
        schema: args.schema.clone(),
        rebuild: args.rebuild,
        keys: crate::cli::shared::load_keys(&args.pubkey)?,
    };
    let rt = remote::runtime().map_err(|e| Error::io("start runtime", ".", e))?;
    let r = rt
        .block_on(index::index(&remote, &args.pg, &opts))
        .map_err(remote_err)?;
    let mut out = output::stdout();
    let line = if args.json {
        serde_json::to_string(&r).expect("serializable")
    } else {
        let mut s = format!(
            "{} stream(s): {} segment(s) indexed ({} records), {} already indexed",
            r.streams, r.segments_indexed, r.records, r.segments_already
        );
        for f in &r.findings {
            s.push_str(&format!("\nBAD {f}"));
        }
        s
    };
    output::emit(&mut out, &line, args.json)?;
    Ok(if r.findings.is_empty() {
        Outcome::Ok
    } else {
        Outcome::Findings
    })
}
