//! Whether a report can be trusted: the verdict and its checks, as the report holds them
//! (the checks are made in `stats::validity`).

use super::Latency;
use serde::{Deserialize, Serialize};

/// Whether to trust a run (or a phase), check by check.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Validity {
    /// Whether every check passed.
    pub trusted: bool,
    /// The checks made, in order; measured phases only.
    pub checks: Vec<ValidityCheck>,
}

impl Default for Validity {
    fn default() -> Self {
        Validity {
            trusted: true,
            checks: Vec::new(),
        }
    }
}

/// One check of a run's own accuracy.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ValidityCheck {
    /// `client_lag` (open loop: the p99 of the client's own lateness, `client_lag_ms`,
    /// against the larger of 10% of latency p50 and 0.05 ms), `arrivals` (Poisson arrivals: the Anderson-Darling statistic of a sample of
    /// the gaps between sends against the exponential, at the 1% level), `rate` (open loop:
    /// the achieved rate's relative error, within 1%, or three standard deviations of a
    /// Poisson count when fewer than 90,000 requests were due) or `client_busy` (the busiest
    /// worker thread's CPU share, at most 0.8).
    pub check: String,
    /// The phase checked.
    pub phase: String,
    /// Whether the value is within the limit.
    pub passed: bool,
    /// What was measured (ms for `client_lag`, A*² for `arrivals`, a relative error for
    /// `rate`, a share of one core for `client_busy`).
    pub value: f64,
    /// The largest value that passes.
    pub limit: f64,
    /// One sentence saying what the value means.
    pub detail: String,
}

impl Validity {
    /// A verdict over `checks`.
    pub fn of(checks: Vec<ValidityCheck>) -> Validity {
        Validity {
            trusted: checks.iter().all(|c| c.passed),
            checks,
        }
    }

    /// The warning to give when not trusted (`None` when trusted): how many checks failed,
    /// then one line each. The CLI's `--check`, Python's and Node's `check()` give this text.
    pub fn warning(&self) -> Option<String> {
        let failed = self.failures();
        if self.trusted || failed.is_empty() {
            return None;
        }
        Some(format!(
            "respload: this report's figures are not trusted ({} of {} validity checks failed):{}",
            failed.len(),
            self.checks.len(),
            failed
                .iter()
                .map(|f| format!("\n  - {f}"))
                .collect::<String>()
        ))
    }

    /// The checks that failed, one line each (empty when trusted).
    pub fn failures(&self) -> Vec<String> {
        self.checks
            .iter()
            .filter(|c| !c.passed)
            .map(|c| format!("{} ({}): {}", c.check, c.phase, c.detail))
            .collect()
    }
}

/// Measured requests due but never sent when a phase stopped.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Unsent {
    /// How many.
    pub requests: u64,
    /// How long each had been due when the phase stopped: a lower bound of the latency each
    /// would have had (ms).
    pub waited_ms: Latency,
}
