//! `Runner`: a run on the core's background thread. Every blocking call releases the GIL.

use crate::error::to_py;
use crate::workload::Workload;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use respload::StopHandle;
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

/// A run in progress: snapshots and the report come out as JSON text.
#[pyclass(frozen, module = "respload._native", name = "Runner")]
pub struct Runner {
    stop: StopHandle,
    inner: Mutex<Option<respload::Runner>>,
}

impl Runner {
    fn lock(&self) -> MutexGuard<'_, Option<respload::Runner>> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn take(&self) -> PyResult<respload::Runner> {
        self.lock().take().ok_or_else(|| {
            to_py(respload::Error::Internal(
                "the report of this run was already taken".into(),
            ))
        })
    }
}

#[pymethods]
impl Runner {
    /// Start running `workload` on a background thread (traffic begins now).
    #[staticmethod]
    fn start(workload: &Workload) -> PyResult<Self> {
        let runner = respload::Runner::start(workload.inner.clone()).map_err(to_py)?;
        Ok(Runner {
            stop: runner.stop_handle(),
            inner: Mutex::new(Some(runner)),
        })
    }

    /// The next interval snapshot as JSON text, waiting up to `timeout` seconds with the GIL
    /// released; `None` on timeout or when the run is over.
    fn next_snapshot(&self, py: Python<'_>, timeout: f64) -> PyResult<Option<String>> {
        let timeout = Duration::try_from_secs_f64(timeout)
            .map_err(|e| PyValueError::new_err(format!("timeout {timeout}: {e}")))?;
        let snapshot = py.detach(|| self.lock().as_ref().and_then(|r| r.next_snapshot(timeout)));
        snapshot
            .map(|s| serde_json::to_string(&s))
            .transpose()
            .map_err(|e| to_py(respload::Error::Internal(format!("snapshot: {e}"))))
    }

    /// Whether the run is over and every snapshot was taken.
    fn is_finished(&self) -> bool {
        self.lock().as_ref().is_none_or(|r| r.is_finished())
    }

    /// Ask the run to stop without waiting (no new requests; in-flight ones get 300 ms).
    fn request_stop(&self) {
        self.stop.stop();
    }

    /// Whether a stop was asked for.
    fn stop_requested(&self) -> bool {
        self.stop.is_stopped()
    }

    /// Stop now and return the partial report (JSON text, `interrupted: true`).
    fn stop(&self, py: Python<'_>) -> PyResult<String> {
        self.stop.stop();
        let runner = self.take()?;
        let report = py.detach(move || runner.stop()).map_err(to_py)?;
        Ok(report.to_json())
    }

    /// Wait for the run to end (GIL released) and return its report as JSON text.
    fn wait(&self, py: Python<'_>) -> PyResult<String> {
        let runner = self.take()?;
        let report = py.detach(move || runner.wait()).map_err(to_py)?;
        Ok(report.to_json())
    }
}
