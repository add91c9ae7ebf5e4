//! `Progress`: the core's live progress of a run (per-phase bars and the CLI's live line),
//! fed with snapshot JSON text, read as JSON text.

use crate::error::to_py;
use crate::workload::Workload;
use pyo3::prelude::*;
use std::sync::Mutex;

fn snapshot(json: &str) -> PyResult<respload::Snapshot> {
    serde_json::from_str(json)
        .map_err(|e| to_py(respload::Error::Internal(format!("snapshot: {e}"))))
}

fn to_json(value: &[respload::output::PhaseProgress]) -> PyResult<String> {
    serde_json::to_string(value)
        .map_err(|e| to_py(respload::Error::Internal(format!("progress: {e}"))))
}

/// The CLI's live line of a snapshot (JSON text).
#[pyfunction]
pub fn progress_line(snapshot_json: &str) -> PyResult<String> {
    Ok(respload::output::progress_line(&snapshot(snapshot_json)?))
}

/// Every phase's progress of a run, fed with its snapshots.
#[pyclass(frozen, module = "respload._native", name = "Progress")]
pub struct Progress {
    inner: Mutex<respload::output::Progress>,
}

impl Progress {
    fn with<T>(&self, f: impl FnOnce(&mut respload::output::Progress) -> T) -> T {
        let mut guard = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        f(&mut guard)
    }
}

#[pymethods]
impl Progress {
    #[new]
    fn new(workload: &Workload) -> Self {
        Progress {
            inner: Mutex::new(respload::output::Progress::new(&workload.inner)),
        }
    }

    /// Count a snapshot (JSON text); the phases' progress as JSON text (a list).
    fn update(&self, snapshot_json: &str) -> PyResult<String> {
        let s = snapshot(snapshot_json)?;
        self.with(|p| {
            p.update(&s);
            to_json(p.phases())
        })
    }

    /// The run ended; the phases' progress as JSON text (a list).
    fn finish(&self) -> PyResult<String> {
        self.with(|p| {
            p.finish();
            to_json(p.phases())
        })
    }

    /// The phases' progress as JSON text (a list).
    fn phases(&self) -> PyResult<String> {
        self.with(|p| to_json(p.phases()))
    }
}
