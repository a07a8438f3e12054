use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    match sjournal::cli::Cli::try_parse() {
        Ok(cli) => sjournal::cli::run(cli),
        Err(e) => sjournal::cli::parse_error(e),
    }
}
