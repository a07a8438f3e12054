//! Progress bars for long runs over many journals (`verify --all`, snapshot rebuilds): drawn
//! on stderr only when stderr is a terminal and the output is not `--json`, so piped output
//! and machine-read output never carry one.

use std::io::IsTerminal;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// A bar over `len` items, or a hidden one (every call on it does nothing) when it should
/// not be shown. Print lines through [`ProgressBar::suspend`] so they do not tear the bar.
pub fn bar(len: u64, json: bool, what: &str) -> ProgressBar {
    if json || len < 2 || !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::with_draw_target(Some(len), ProgressDrawTarget::stderr());
    bar.set_style(
        ProgressStyle::with_template("{msg} [{bar:30}] {pos}/{len} ({eta})")
            .expect("valid template")
            .progress_chars("=> "),
    );
    bar.set_message(what.to_owned());
    bar
}
