//! The run as the library gives it: the engine's [`Runner`] with the phase-end hook that
//! writes each phase's output files (memtier_benchmark's report of `output.memtier`). The
//! engine formats no file itself; this layer, above both, joins it to the output formats.

use crate::engine::Runner;
use crate::plan::{Phase, Workload};
use crate::report::{PhaseReport, Report};
use crate::tools::memtier::phase_text;
use crate::Result;

impl Runner {
    /// Start running `workload` on a background thread. Spec errors were caught when the
    /// workload was built; connection failures are returned by [`Runner::wait`]. Each
    /// phase's output files are written at its end ([`Runner::start_with`] takes another
    /// writer).
    pub fn start(workload: Workload) -> Result<Runner> {
        Runner::start_with(workload, Box::new(write_phase_files))
    }
}

/// Run `workload` to its end on the calling thread and return the report.
pub fn run(workload: &Workload) -> Result<Report> {
    Runner::start(workload.clone())?.wait()
}

/// Write what `phase`'s `output` settings ask for, now that it ended.
fn write_phase_files(
    phase: &Phase,
    report: &PhaseReport,
    started_at: f64,
) -> std::result::Result<(), String> {
    if let Some(path) = &phase.spec.output.memtier {
        let text = phase_text(phase, report, started_at);
        std::fs::write(path, text).map_err(|e| format!("{path}: {e}"))?;
    }
    Ok(())
}
