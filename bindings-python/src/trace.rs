//! Traces: a trace file read in batches, a model fitted to one, and a capture on a thread of
//! its own (in the Node binding: `NativeTraceFile`, `fitTraceModel`, `NativeCapture`).
//! Records, models and capture reports go out as JSON text (the pure-Python `respload.trace`
//! wraps them); every blocking call releases the GIL.

use crate::error::to_py;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use respload::capture::{CaptureControl, CaptureReport, CaptureSpec};
use respload::trace::model::ModelOptions;
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::Duration;

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

fn internal(what: &str, e: impl std::fmt::Display) -> PyErr {
    to_py(respload::Error::Internal(format!("{what}: {e}")))
}

fn json_value(text: &str) -> PyResult<serde_json::Value> {
    serde_json::from_str(text)
        .map_err(|e| to_py(respload::Error::spec("", format!("not valid JSON: {e}"))))
}

/// An open trace file, read in batches of records.
#[pyclass(frozen, module = "respload._native", name = "TraceFile")]
pub struct TraceFile {
    format: &'static str,
    inner: Mutex<respload::trace::TraceFile>,
}

#[pymethods]
impl TraceFile {
    /// Open the trace at `path`; `format` (`respload`, `monitor`, `twitter`) when its first
    /// line does not tell.
    #[staticmethod]
    #[pyo3(signature = (path, format=None))]
    fn open(py: Python<'_>, path: String, format: Option<String>) -> PyResult<Self> {
        let inner = py
            .detach(|| respload::trace::TraceFile::open(&path, format.as_deref()))
            .map_err(to_py)?;
        Ok(TraceFile {
            format: inner.format(),
            inner: Mutex::new(inner),
        })
    }

    /// The file's format: `respload`, `monitor` or `twitter`.
    fn format(&self) -> &'static str {
        self.format
    }

    /// Up to `n` more records as JSON text (a list of `{"t_us", "db", "client", "args"}`);
    /// `[]` at the end of the file.
    fn next_batch(&self, py: Python<'_>, n: usize) -> PyResult<String> {
        if n == 0 {
            return Err(PyValueError::new_err("next_batch: n must be at least 1"));
        }
        let batch = py
            .detach(|| lock(&self.inner).next_batch(n))
            .map_err(to_py)?;
        serde_json::to_string(&batch).map_err(|e| internal("trace records", e))
    }

    /// Malformed lines read so far, and the first of them as `line N: reason`.
    fn malformed(&self) -> (u64, Vec<String>) {
        lock(&self.inner).malformed()
    }
}

/// Fit a model to the trace at `path` in one pass (GIL released): JSON text
/// `{"spec", "fit", "toml", "summary"}`, the spec, how close it is, the spec as TOML (the fit
/// in comments at the top) and the fit in a few lines. Raises `FileError` or `SpecError`
/// (path `format`).
#[pyfunction]
#[pyo3(signature = (path, format=None, rate_x=1.0, keys_x=1.0, url=None, top_keys=1000))]
pub fn fit_trace_model(
    py: Python<'_>,
    path: String,
    format: Option<String>,
    rate_x: f64,
    keys_x: f64,
    url: Option<String>,
    top_keys: usize,
) -> PyResult<String> {
    let opts = ModelOptions {
        rate_x,
        keys_x,
        target_url: url,
        top_keys,
    };
    py.detach(|| {
        let model = respload::trace::fit_file(&path, format.as_deref(), &opts)?;
        let out = serde_json::json!({
            "spec": model.spec,
            "fit": model.fit,
            "toml": model.to_toml(),
            "summary": model.summary(),
        });
        serde_json::to_string(&out).map_err(|e| respload::Error::Internal(format!("model: {e}")))
    })
    .map_err(to_py)
}

/// Where a capture is: running (its thread will send the result), ended with a report (kept,
/// so that every `wait` gives it), or failed (the error was raised once).
enum State {
    Running(Receiver<respload::Result<CaptureReport>>),
    Done(String),
    Failed,
}

/// A capture on a thread of its own: stopped by `request_stop()`, its duration or its
/// command count; the report comes out as JSON text.
#[pyclass(frozen, module = "respload._native", name = "Capture")]
pub struct Capture {
    control: Arc<CaptureControl>,
    state: Mutex<State>,
    thread: Mutex<Option<JoinHandle<()>>>,
}

#[pymethods]
impl Capture {
    /// Check the capture spec (JSON text: target, out, duration, max_commands) and start
    /// capturing on a thread of its own.
    #[staticmethod]
    fn start(spec_json: &str) -> PyResult<Self> {
        let spec = CaptureSpec::from_json_value(json_value(spec_json)?).map_err(to_py)?;
        let control = Arc::new(CaptureControl::default());
        let flag = Arc::clone(&control);
        let (tx, rx) = mpsc::channel();
        let thread = std::thread::Builder::new()
            .name("respload-capture".into())
            .spawn(move || {
                let _ = tx.send(respload::capture::capture(&spec, &flag));
            })
            .map_err(|e| internal("capture thread", e))?;
        Ok(Capture {
            control,
            state: Mutex::new(State::Running(rx)),
            thread: Mutex::new(Some(thread)),
        })
    }

    /// Wait up to `timeout` seconds (GIL released) for the capture to end: its report as
    /// JSON text (the same on every call once it ended), or `None` on timeout. A capture
    /// that failed raises its error once, then an internal error.
    fn wait(&self, py: Python<'_>, timeout: f64) -> PyResult<Option<String>> {
        let timeout = Duration::try_from_secs_f64(timeout)
            .map_err(|e| PyValueError::new_err(format!("timeout {timeout}: {e}")))?;
        py.detach(|| {
            let mut state = lock(&self.state);
            let result = match &*state {
                State::Done(report) => return Ok(Some(report.clone())),
                State::Failed => {
                    return Err(respload::Error::Internal(
                        "this capture failed: its error was raised already".into(),
                    ))
                }
                State::Running(rx) => match rx.recv_timeout(timeout) {
                    Ok(result) => result,
                    Err(RecvTimeoutError::Timeout) => return Ok(None),
                    Err(RecvTimeoutError::Disconnected) => Err(respload::Error::Internal(
                        "the capture thread ended without a report".into(),
                    )),
                },
            };
            if let Some(t) = lock(&self.thread).take() {
                let _ = t.join();
            }
            let text = result.and_then(|report| {
                serde_json::to_string(&report)
                    .map_err(|e| respload::Error::Internal(format!("capture report: {e}")))
            });
            *state = match &text {
                Ok(report) => State::Done(report.clone()),
                Err(_) => State::Failed,
            };
            text.map(Some)
        })
        .map_err(to_py)
    }

    /// Whether the capture thread has ended.
    fn is_finished(&self) -> bool {
        lock(&self.thread).as_ref().is_none_or(|t| t.is_finished())
    }

    /// Whether every server acknowledged MONITOR: each command run from then on is recorded.
    fn is_started(&self) -> bool {
        self.control.is_started()
    }

    /// Ask the capture to stop without waiting (it stops within 100 ms, keeping the file).
    fn request_stop(&self) {
        self.control.stop();
    }
}

impl Drop for Capture {
    /// A capture dropped while it runs is stopped (its file is finished and kept).
    fn drop(&mut self) {
        self.control.stop();
    }
}
