//! `sjournal mcp [--project DIR | --all]`: the journal as a stdio MCP server (the library's
//! `mcp`), for the agent itself to search its project's earlier sessions. Hosts start it from
//! their MCP configuration (`sjournal install` registers it). Stdout carries the protocol
//! alone; problems go to stderr.

use std::path::PathBuf;

use crate::cli::Outcome;
use sjournal::error::Result;
use sjournal::journal::Root;

/// Serve the journal to an agent over MCP (stdio)
#[derive(Debug, clap::Args)]
#[command(after_help = crate::cli::EXIT_CODES)]
pub struct Args {
    /// The project whose sessions it answers for [default: $CLAUDE_PROJECT_DIR, else the
    /// current directory's project (its git root)]
    #[arg(long, value_name = "DIR", conflicts_with = "all")]
    pub project: Option<PathBuf>,
    /// Answer for every session under the root, whatever its project
    #[arg(long)]
    pub all: bool,
}

pub fn run(root: &Root, args: Args) -> Result<Outcome> {
    let project = match (args.all, &args.project) {
        (true, _) => super::search::project(None).ok(),
        (false, p) => Some(super::search::project(p.as_deref())?),
    };
    let config = sjournal::config::Config::load(root).unwrap_or_default();
    let budget = sjournal::context::Policy::from_config(&config).budget_chars;
    sjournal::mcp::serve_stdio(sjournal::mcp::Config {
        root: root.clone(),
        project,
        all: args.all,
        writer: config.writer_options(),
        budget_chars: budget,
        index: Default::default(),
    })?;
    Ok(Outcome::Ok)
}
