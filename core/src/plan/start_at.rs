//! A workload given its start instant (`start_at`).

use super::Workload;
use crate::spec::{unix_now, START_AHEAD_LIMIT_S};
use crate::{Error, Result};

impl Workload {
    /// This workload set to send its first request at `unix_s` (UNIX seconds): the run
    /// opens its connections, then waits for that instant. The run fails, before any
    /// traffic, when the instant has passed by more than a second. A workload whose first
    /// phase is an SLO search (its own series of runs) cannot be started at an instant.
    pub fn starting_at(&self, unix_s: f64) -> Result<Workload> {
        if !unix_s.is_finite() || unix_s <= 0.0 {
            return Err(Error::spec(
                "start_at",
                format!("{unix_s}: not a time after 1970 (UNIX seconds)"),
            ));
        }
        let now = unix_now();
        if unix_s > now + START_AHEAD_LIMIT_S {
            return Err(Error::spec(
                "start_at",
                format!(
                    "{unix_s}: more than a day ahead (UNIX seconds, not milliseconds; now is \
                     {now:.0})"
                ),
            ));
        }
        if self.phases.first().is_some_and(|p| p.spec.slo.is_some()) {
            return Err(Error::spec(
                "start_at",
                "an SLO search (`slo`) runs its own series of steps and cannot be started \
                 at an instant",
            ));
        }
        Ok(Workload {
            start_at: Some(unix_s),
            ..self.clone()
        })
    }
}
