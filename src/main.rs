use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    sjournal::cli::run(sjournal::cli::Cli::parse())
}
