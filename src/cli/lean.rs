//! The hook's command line read without clap. Agent hosts spawn `sjournal hook` on every
//! event, so its start-up is on their path; building clap's command tree is about a tenth of
//! the hook's instructions and a dozen pages of code to fault in (BENCHMARKS.md, "Speed
//! mechanisms": hook line without clap). The lines hosts are configured with are read here;
//! anything else — help, errors, any other command, an unusual hook line — goes straight to
//! the full command line (`sjournal`'s clap `Cli`; `sjournal-hook` execs `sjournal` for it),
//! so output, errors and exit codes are the full CLI's. The tests check that whatever this
//! accepts, the full CLI parses to the same. Both binaries read their hook lines here.

use std::ffi::OsString;
use std::path::PathBuf;

use crate::cli::commands::hook::Args;

/// A hook's command line: `--root` and the hook's own arguments.
#[derive(Debug)]
pub struct Line {
    pub root: Option<PathBuf>,
    pub args: Args,
}

/// The command line of this process as a hook invocation, if it is one of the lines hosts
/// are configured with.
#[cfg_attr(test, allow(dead_code))]
pub fn hook() -> Option<Line> {
    common(&std::env::args_os().collect::<Vec<_>>())
}

/// The command lines hosts are configured with — `[--root DIR] hook [--host HOST]
/// [--deadline-ms MS] [HOST]`, each option at most once, `--opt value` or `--opt=value` —
/// read without clap; None for anything else (a value that is empty or starts with `-`,
/// a repeated option, a second word, `--`, help, ...), which then goes to clap.
fn common(args: &[OsString]) -> Option<Line> {
    let (mut root, mut host, mut deadline_ms) = (None, None, None);
    let mut rest: Vec<String> = Vec::new();
    let mut in_hook = false;
    let mut words = args.iter().skip(1).map(|a| a.to_str());
    while let Some(word) = words.next() {
        let word = word?;
        if !rest.is_empty() {
            return None;
        }
        if word == "hook" && !in_hook {
            in_hook = true;
            continue;
        }
        if in_hook && !word.starts_with('-') {
            rest.push(word.to_owned());
            continue;
        }
        let (name, inline) = match word.split_once('=') {
            Some((name, value)) => (name, Some(value)),
            None => (word, None),
        };
        let slot = match name {
            "--root" => &mut root,
            "--host" if in_hook => &mut host,
            "--deadline-ms" if in_hook => &mut deadline_ms,
            _ => return None,
        };
        let value = match inline {
            Some(v) => v,
            None => words.next()??,
        };
        if slot.is_some() || value.is_empty() || value.starts_with('-') {
            return None;
        }
        *slot = Some(value.to_owned());
    }
    in_hook.then(|| Line {
        root: root.map(PathBuf::from),
        args: Args {
            host: host.unwrap_or_else(|| "auto".to_owned()),
            deadline_ms,
            rest,
        },
    })
}

#[cfg(test)]
mod tests {
    //! The clap-free reader against the full CLI: for every form of the hook's command line
    //! a host or a user might write, it either declines (and the full CLI answers) or yields
    //! exactly what the full parser yields; and the lines hosts are configured with take the
    //! fast path.
    use super::*;
    use crate::cli::{Cli, Command};
    use clap::Parser;

    /// What the full CLI would hold for `line`.
    fn as_cli(line: Line) -> Cli {
        Cli {
            root: line.root,
            command: Command::Hook(line.args),
        }
    }

    fn os(args: &[&str]) -> Vec<OsString> {
        std::iter::once("sjournal")
            .chain(args.iter().copied())
            .map(OsString::from)
            .collect()
    }

    #[test]
    fn every_hook_command_line_parses_the_same_through_both_paths() {
        let lines: &[&[&str]] = &[
            &["hook"],
            &["--root", "r", "hook"],
            &["--root=r", "hook"],
            &["hook", "--root", "r"],
            &["hook", "--root=r", "--host", "codex"],
            &["hook", "--host", "claude"],
            &["hook", "--host=gemini"],
            &["hook", "--host", "nonsense"],
            &["hook", "--deadline-ms", "900"],
            &["hook", "--deadline-ms=900"],
            &["hook", "--deadline-ms", "zero"],
            &["hook", "--deadline-ms", "-5"],
            &[
                "--root",
                "r",
                "hook",
                "--host",
                "cursor",
                "--deadline-ms",
                "10",
            ],
            &["hook", "claude"],
            &["hook", "cline", "extra", "words"],
            &["hook", "claude", "--unknown", "x"],
            &["hook", "--bogus"],
            &["hook", "--host", "auto", "openclaw"],
            &["hook", "--", "claude"],
            &["hook", "hook"],
            &["--root", "hook", "hook"],
        ];
        for line in lines {
            let full = Cli::try_parse_from(os(line))
                .unwrap_or_else(|e| panic!("the full CLI rejects {line:?}: {e}"));
            assert!(matches!(full.command, Command::Hook(_)), "{line:?}");
            if let Some(fast) = common(&os(line)).map(as_cli) {
                assert_eq!(format!("{fast:?}"), format!("{full:?}"), "{line:?}");
            }
        }
    }

    #[test]
    fn the_command_lines_hosts_are_configured_with_are_read_without_clap() {
        let lines: &[&[&str]] = &[
            &["hook"],
            &["hook", "--host", "claude"],
            &["hook", "--host=gemini"],
            &[
                "--root",
                "r",
                "hook",
                "--host",
                "codex",
                "--deadline-ms",
                "900",
            ],
            &["--root=r", "hook", "--deadline-ms=900"],
            &["hook", "--root", "r", "--host", "cline"],
            &["hook", "claude"],
            &["hook", "--host", "openclaw", "pi"],
            &["--root", "hook", "hook"],
            &["hook", "hook"],
        ];
        for line in lines {
            let fast = common(&os(line))
                .map(as_cli)
                .unwrap_or_else(|| panic!("declines {line:?}"));
            let full = Cli::try_parse_from(os(line)).unwrap();
            assert_eq!(format!("{fast:?}"), format!("{full:?}"), "{line:?}");
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(4096))]
        /// Any line of these words (most of them valid, so that many lines are accepted):
        /// what the clap-free reader accepts, the full CLI parses to the same.
        #[test]
        fn what_is_read_without_clap_is_what_clap_reads(
            words in proptest::collection::vec(proptest::sample::select(vec![
                "hook", "hook", "hook", "--root", "--root=r", "r", "--host", "--host",
                "--host=codex", "claude", "--deadline-ms", "--deadline-ms=5", "900", "-5",
                "--", "-h", "--bogus", "", "--host=", "x=y", "log", "=", "--root=",
            ]), 0..7)
        ) {
            if let Some(fast) = common(&os(&words)).map(as_cli) {
                let full = Cli::try_parse_from(os(&words));
                proptest::prop_assert!(full.is_ok(), "{words:?}: {:?}", full.err());
                proptest::prop_assert_eq!(format!("{fast:?}"), format!("{:?}", full.unwrap()));
            }
        }
    }

    #[test]
    fn what_the_full_cli_rejects_or_answers_itself_the_lean_parser_declines() {
        let lines: &[&[&str]] = &[
            &["hook", "--help"],
            &["hook", "-h"],
            &["help", "hook"],
            &["--help", "hook"],
            &["--version", "hook"],
            &["hook", "--deadline-ms"],
            &["hook", "--host"],
            &["hook", "--root"],
            &["log", "hook"],
            &["append", "--session", "hook"],
            &["hooks"],
            &[],
        ];
        for line in lines {
            assert!(common(&os(line)).is_none(), "{line:?}");
            let full = Cli::try_parse_from(os(line));
            assert!(
                !matches!(
                    &full,
                    Ok(Cli {
                        command: Command::Hook(_),
                        ..
                    })
                ),
                "the full CLI runs the hook for {line:?}"
            );
        }
    }
}
