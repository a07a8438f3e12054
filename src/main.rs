mod cli;

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    match cli::Cli::try_parse() {
        Ok(cli) => cli::run(cli),
        Err(e) => cli::parse_error(e),
    }
}
