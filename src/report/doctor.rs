//! `doctor --json`: one object, the whole check-up.

use serde::Serialize;

/// How a check came out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum CheckStatus {
    /// All is well.
    Ok,
    /// Worth knowing, nothing to do (a host not installed, where the fallback spool is).
    Info,
    /// A finding: something may not be working (a host installed but silent).
    Warn,
    /// A finding: something does not work (events lost or not recorded, a damaged journal).
    Fail,
}

impl CheckStatus {
    /// True for the statuses that are findings (exit 1).
    pub fn is_finding(self) -> bool {
        matches!(self, CheckStatus::Warn | CheckStatus::Fail)
    }
}

/// One check of `doctor`.
///
/// `{"check": "trust", "host": "codex", "status": "fail", "message": "...", "fix": "..."}`:
/// `check` is one of `binary`, `root`, `space`, `config`, `spool`, `fallback`, `untrusted`,
/// `journals`, `witnesses`, `webhooks`, `install`, `hook`, `trust`, `activity`; `host` names
/// the host for the last four (`claude-code`, `codex`, `gemini`, `opencode`, `pi`,
/// `openclaw`, `cline`, as `sjournal install` names them); `fix` is the command (or the step)
/// that fixes a finding.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DoctorCheck {
    pub check: &'static str,
    pub host: Option<&'static str>,
    pub status: CheckStatus,
    pub message: String,
    pub fix: Option<String>,
}

/// `doctor --json`: `{"ok": bool, "findings": N, "checks": [DoctorCheck, ...]}`; `ok` is true
/// when no check is a finding (exit 0), else `findings` counts them (exit 1).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DoctorReport {
    pub ok: bool,
    pub findings: u64,
    pub checks: Vec<DoctorCheck>,
}

impl DoctorReport {
    pub fn new(checks: Vec<DoctorCheck>) -> DoctorReport {
        let findings = checks.iter().filter(|c| c.status.is_finding()).count() as u64;
        DoctorReport {
            ok: findings == 0,
            findings,
            checks,
        }
    }
}
