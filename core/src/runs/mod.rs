//! The run as the library gives it: the engine's [`Runner`] with the phase-end hook that
//! creates each phase's output files before any traffic and writes them at its end
//! (memtier_benchmark's report of `output.memtier`). The engine opens and formats no report
//! file itself (only `output.failed_keys`, written as requests fail); this layer, above
//! both, joins it to the output formats.

use crate::engine::{PhaseEnd, Runner};
use crate::plan::{Phase, Workload};
use crate::report::{PhaseReport, Report};
use crate::tools::memtier::{client_stats_files, phase_text};
use crate::{Error, Result};

impl Runner {
    /// Start running `workload` on a background thread. Spec errors were caught when the
    /// workload was built; connection failures are returned by [`Runner::wait`]. Each
    /// phase's output files are written at its end ([`Runner::start_with`] takes another
    /// writer).
    pub fn start(workload: Workload) -> Result<Runner> {
        Runner::start_with(
            workload,
            Box::new(PhaseFiles(Created(Vec::new()), Vec::new())),
        )
    }
}

/// The library's writer of the phases' output files: created before any traffic, written at
/// each phase's end, removed again when the run ends with them still empty; with the
/// phases' names, whose place gives a phase's number (memtier's run number).
struct PhaseFiles(Created, Vec<String>);

impl PhaseEnd for PhaseFiles {
    fn prepare(&mut self, workload: &Workload) -> Result<()> {
        self.0 = create_output_files(workload)?;
        self.1 = workload
            .phases
            .iter()
            .map(|p| p.spec.name.clone())
            .collect();
        Ok(())
    }

    fn phase_end(
        &self,
        phase: &Phase,
        report: &PhaseReport,
        started_at: f64,
    ) -> std::result::Result<(), String> {
        let run = self
            .1
            .iter()
            .position(|n| *n == phase.spec.name)
            .unwrap_or(0)
            + 1;
        write_phase_files(phase, report, started_at, run)
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
    run: usize,
) -> std::result::Result<(), String> {
    if let Some(path) = &phase.spec.output.memtier {
        let text = phase_text(phase, report, started_at);
        std::fs::write(path, text).map_err(|e| format!("{path}: {e}"))?;
    }
    if let Some(prefix) = &phase.spec.output.client_stats {
        for (path, body) in client_stats_files(phase, report, prefix, run) {
            std::fs::write(&path, body).map_err(|e| format!("{path}: {e}"))?;
        }
    }
    Ok(())
}

/// Open (creating it empty when missing) every file the phases' `output` asks for, so that a
/// path that cannot be written fails before any traffic rather than after a long run. A file
/// there already is left as it is until its phase writes it.
fn create_output_files(workload: &Workload) -> Result<Created> {
    let mut created = Created(Vec::new());
    for phase in &workload.phases {
        if let Some(path) = &phase.spec.output.memtier {
            let existed = std::path::Path::new(path).exists();
            std::fs::OpenOptions::new()
                .write(true)
                .create(true)
                .truncate(false)
                .open(path)
                .map_err(|e| {
                    Error::spec(
                        format!("{}output.memtier", phase.prefix),
                        format!("`{path}` cannot be written: {e}"),
                    )
                })?;
            if !existed {
                created.0.push(path.into());
            }
        }
    }
    Ok(created)
}

/// The output files [`create_output_files`] created. Those still empty when the run ends (it
/// failed, or was stopped, before their phase wrote them) are removed again: a failed run
/// leaves no empty report behind.
struct Created(Vec<std::path::PathBuf>);

impl Drop for Created {
    fn drop(&mut self) {
        for path in &self.0 {
            if std::fs::metadata(path).is_ok_and(|m| m.len() == 0) {
                let _ = std::fs::remove_file(path);
            }
        }
    }
}
