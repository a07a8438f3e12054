//! `sjournal serve [--port N] [--open]`: the local viewer (`sjournal::serve`). Listens on
//! 127.0.0.1, prints the URL to open (it holds the access token) and serves until stopped
//! (Ctrl-C). With `--open`, the URL is also handed to the desktop's opener (`xdg-open`;
//! `open` on macOS); without one, the URL printed is the way in.

use std::io::Write;
use std::sync::Arc;

use crate::cli::{output, Outcome};
use sjournal::error::Result;
use sjournal::journal::Root;

/// Serve the live viewer on 127.0.0.1: sessions, replay, search, memory review, verify
#[derive(Debug, clap::Args)]
#[command(after_help = "\
The URL printed holds a random access token: open it in a browser of this machine. The viewer
answers only 127.0.0.1 and localhost, only pages of its own origin, and only with the token.
It reads the journals as `sjournal log` does (a hook never waits on it); the one thing it
writes is a memory review decision, as `sjournal memory accept|reject|edit|forget` writes it.
Exit codes: 2 when it cannot listen (the port is taken) or cannot watch the root.")]
pub struct Args {
    /// The port to listen on [default: any free port]
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub port: u16,
    /// Open the URL in the desktop's browser too
    #[arg(long)]
    pub open: bool,
}

pub fn run(root: &Root, args: Args) -> Result<Outcome> {
    let doctor_root = root.clone();
    let project = std::env::current_dir().unwrap_or_else(|_| root.dir().to_owned());
    let doctor: sjournal::serve::Doctor = Arc::new(move || {
        let r = super::doctor::report(&doctor_root, project.clone(), false);
        serde_json::to_value(&r).unwrap_or_default()
    });
    let opts = sjournal::serve::Options {
        port: args.port,
        policy: crate::cli::shared::load_policy(root),
        writer: crate::cli::shared::writer_options(root),
        search: search_engine(root),
        doctor: Some(doctor),
    };
    let open = args.open;
    sjournal::serve::serve(root.clone(), opts, |s| {
        let mut out = output::stdout();
        let _ = output::line(&mut out, &format!("sjournal serve: {}", s.url));
        let _ = output::line(
            &mut out,
            &format!(
                "serving {} on {} (Ctrl-C stops)",
                sjournal::escape::path(root.dir()),
                s.addr
            ),
        );
        let _ = out.flush();
        if open {
            launch(&s.url);
        }
    })?;
    Ok(Outcome::Ok)
}

#[cfg(feature = "search")]
fn search_engine(root: &Root) -> Arc<dyn sjournal::serve::Search> {
    Arc::new(sjournal::serve::SearchEngine {
        root: root.clone(),
        writer: crate::cli::shared::writer_options(root),
    })
}

#[cfg(not(feature = "search"))]
fn search_engine(_: &Root) -> Arc<dyn sjournal::serve::Search> {
    Arc::new(sjournal::serve::NotBuilt)
}

/// Hands the URL to the desktop's opener; a machine without one keeps the printed URL.
fn launch(url: &str) {
    let opener = if cfg!(target_os = "macos") {
        "open"
    } else {
        "xdg-open"
    };
    let spawned = std::process::Command::new(opener)
        .arg(url)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn();
    if let Err(e) = spawned {
        output::warn(&format!(
            "sjournal serve: could not run {opener} ({e}); open the URL above yourself"
        ));
    }
}
