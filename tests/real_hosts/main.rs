//! The seven real agent hosts (Claude Code, Codex, Gemini CLI, OpenCode, Pi, OpenClaw, Cline),
//! each at its pinned version (tools/hosts/<host>/package-lock.json), installed by
//! `tools/hosts/install.sh` into a cache outside the clone, run headless against a scripted
//! model API on 127.0.0.1 (`mock`), with sjournal wired in by its own installer into a
//! temporary HOME. Each test plays a session — prompts, a tool call, a failing command, a file
//! write, resume, and a compaction where the host compacts headless (the Cline CLI resumes
//! only in its UI and runs no hook at compaction) — then checks what the host sent to the model
//! (sjournal's context where it belongs, nowhere else), what the journal holds (every event,
//! the right session, host and counts) and `sjournal verify`.
//!
//! A host that cannot be installed (no npm, no registry) makes its test skip, saying so; with
//! SJOURNAL_REQUIRE_HOSTS=1 (CI) that is a failure. SJOURNAL_REFRESH_FIXTURES=1 rewrites
//! tests/fixtures/<host>/ from the payloads a run captured.

mod claude;
mod claude_recovery;
mod cline;
mod codex;
mod gemini;
mod injections;
#[cfg(feature = "search")]
mod mcp_search;
mod mock;
mod openclaw;
mod opencode;
mod pi;
#[path = "../support/skip.rs"]
mod skip;
mod support;
