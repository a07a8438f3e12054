//! Pi: no exec hooks; its extension (`tools/pi-extension`) runs `sjournal hook` with Claude
//! Code's payloads and reads Claude Code's replies, so the detector, normalizer and reply are
//! Claude Code's. What is Pi's own is where `install` registers it.

pub(super) mod install;
