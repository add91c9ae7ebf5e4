//! Traces: a trace file read in batches ([`respload::trace::TraceFile`]), a model fitted to
//! one ([`respload::trace::fit_file`]), and a capture ([`respload::capture::capture`]) on a
//! thread of its own, bridged to the JS event loop.
//!
//! Records, models and capture reports go out as JSON text and the capture spec comes in as
//! JSON text (snake_case, as the core reads it); `bindings-node/index.js` wraps them in its
//! `Trace`, `Model` and `Capture`. A batch is read on the JS thread (`nextBatch`, for
//! `for...of`) or off it (`nextBatchAsync`, for `for await...of`); a model is fitted and a
//! capture runs off it.

use crate::error::{internal, to_js};
use napi::bindgen_prelude::*;
use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};
use napi_derive::napi;
use respload::capture::{CaptureControl, CaptureReport, CaptureSpec};
use respload::trace::model::ModelOptions;
use std::sync::{Arc, Mutex, MutexGuard};

/// The most records one batch may ask for (a batch is held in memory as JSON).
const MAX_BATCH: u32 = 1 << 20;

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Up to `n` more records of `file` as JSON text: an array of `{"t_us", "db", "client",
/// "args"}`, empty at the end.
fn batch_json(file: &Mutex<respload::trace::TraceFile>, n: u32) -> respload::Result<String> {
    if n == 0 || n > MAX_BATCH {
        return Err(internal(format!(
            "a batch of {n} records: allowed are 1 to {MAX_BATCH}"
        )));
    }
    let batch = lock(file).next_batch(n as usize)?;
    serde_json::to_string(&batch).map_err(internal)
}

/// An open trace file, read forward in batches (the native half of the JavaScript `Trace`).
#[napi]
pub struct NativeTraceFile {
    format: &'static str,
    inner: Arc<Mutex<respload::trace::TraceFile>>,
}

/// Malformed lines read so far.
#[napi(object)]
pub struct TraceMalformed {
    /// How many.
    pub count: f64,
    /// The first of them, as `line N: reason`.
    pub lines: Vec<String>,
}

#[napi]
impl NativeTraceFile {
    /// Open the trace at `path`; `format` (`respload`, `monitor`, `twitter`) when its first
    /// line does not tell.
    ///
    /// Throws `ERR_RESPLOAD_FILE` (with `path`) when it cannot be read and
    /// `ERR_RESPLOAD_SPEC` (path `format`) for an unknown format.
    #[napi(constructor)]
    pub fn new(env: Env, path: String, format: Option<String>) -> Result<Self> {
        let inner = respload::trace::TraceFile::open(&path, format.as_deref())
            .map_err(|e| to_js(&env, &e))?;
        Ok(NativeTraceFile {
            format: inner.format(),
            inner: Arc::new(Mutex::new(inner)),
        })
    }

    /// The file's format: `respload`, `monitor` or `twitter`.
    #[napi(getter)]
    pub fn format(&self) -> String {
        self.format.to_string()
    }

    /// Up to `n` more records as JSON text (an array of `{"t_us", "db", "client", "args"}`,
    /// each argument a string, `{"b64": ...}` or `{"size": n}`); `[]` at the end. Reads on
    /// the JS thread.
    ///
    /// Throws `ERR_RESPLOAD_FILE` when reading fails.
    #[napi]
    pub fn next_batch(&self, env: Env, n: u32) -> Result<String> {
        batch_json(&self.inner, n).map_err(|e| to_js(&env, &e))
    }

    /// As `nextBatch`, read on a libuv worker thread.
    #[napi(ts_return_type = "Promise<string>")]
    pub fn next_batch_async(&self, n: u32) -> AsyncTask<NextBatch> {
        AsyncTask::new(NextBatch {
            file: Arc::clone(&self.inner),
            n,
        })
    }

    /// Malformed lines read so far (not records), and the first of them as `line N: reason`.
    #[napi]
    pub fn malformed(&self) -> TraceMalformed {
        let (count, lines) = lock(&self.inner).malformed();
        TraceMalformed {
            count: count as f64,
            lines,
        }
    }
}

/// Reads a batch on a libuv worker thread.
pub struct NextBatch {
    file: Arc<Mutex<respload::trace::TraceFile>>,
    n: u32,
}

impl Task for NextBatch {
    // The error is made a JavaScript one (with its `code`) on the JS thread.
    type Output = respload::Result<String>;
    type JsValue = String;

    fn compute(&mut self) -> Result<Self::Output> {
        Ok(batch_json(&self.file, self.n))
    }

    fn resolve(&mut self, env: Env, batch: Self::Output) -> Result<String> {
        batch.map_err(|e| to_js(&env, &e))
    }
}

/// Options of a model fit (`trace.model()`'s, camelCase).
#[napi(object)]
pub struct TraceModelOptions {
    /// Multiply the trace's rate by this (default 1).
    pub rate_x: Option<f64>,
    /// Multiply the number of keys by this (default 1).
    pub keys_x: Option<f64>,
    /// `target.url` of the spec (default none: the spec's default target).
    pub url: Option<String>,
    /// How many of the most popular keys the popularity error compares (default 1000; 0:
    /// all of them).
    pub top_keys: Option<u32>,
}

/// Fit a model to the trace at `path` in one pass, on a libuv worker thread. Resolves with
/// JSON text `{"spec", "fit", "toml", "summary"}`: the spec, how close it is, the spec as
/// TOML (the fit in comments at the top) and the fit in a few lines.
///
/// Rejects with `ERR_RESPLOAD_FILE` or `ERR_RESPLOAD_SPEC` (path `format`).
#[napi(ts_return_type = "Promise<string>")]
pub fn fit_trace_model(
    path: String,
    format: Option<String>,
    options: Option<TraceModelOptions>,
) -> AsyncTask<FitModel> {
    let defaults = ModelOptions::default();
    let opts = match options {
        Some(o) => ModelOptions {
            rate_x: o.rate_x.unwrap_or(defaults.rate_x),
            keys_x: o.keys_x.unwrap_or(defaults.keys_x),
            target_url: o.url,
            top_keys: o.top_keys.map_or(defaults.top_keys, |n| n as usize),
        },
        None => defaults,
    };
    AsyncTask::new(FitModel { path, format, opts })
}

/// Fits a model on a libuv worker thread.
pub struct FitModel {
    path: String,
    format: Option<String>,
    opts: ModelOptions,
}

impl Task for FitModel {
    type Output = respload::Result<String>;
    type JsValue = String;

    fn compute(&mut self) -> Result<Self::Output> {
        let fitted = respload::trace::fit_file(&self.path, self.format.as_deref(), &self.opts)
            .and_then(|model| {
                let out = serde_json::json!({
                    "spec": model.spec,
                    "fit": model.fit,
                    "toml": model.to_toml(),
                    "summary": model.summary(),
                });
                serde_json::to_string(&out).map_err(internal)
            });
        Ok(fitted)
    }

    fn resolve(&mut self, env: Env, fitted: Self::Output) -> Result<String> {
        fitted.map_err(|e| to_js(&env, &e))
    }
}

/// Called on the JS thread once the capture is over: `takeReport()` gives its report.
type DoneFn = ThreadsafeFunction<(), Unknown<'static>, (), Status, false>;

/// The capture report's JSON text, or why there is none.
type Outcome = Arc<Mutex<Option<respload::Result<String>>>>;

/// A capture in progress (the native half of the JavaScript `Capture`).
#[napi]
pub struct NativeCapture {
    control: Arc<CaptureControl>,
    outcome: Outcome,
}

#[napi]
impl NativeCapture {
    /// Check the capture spec (JSON text: `target`, `out`, `duration`, `max_commands`) and
    /// start capturing on a thread of its own. `onDone` is called once, when the capture is
    /// over: `takeReport()` gives the report from then on.
    ///
    /// Throws `ERR_RESPLOAD_SPEC` (with `path`) for an invalid spec; connection and file
    /// failures come from `takeReport()`.
    #[napi(constructor, ts_args_type = "specJson: string, onDone: () => void")]
    pub fn new(env: Env, spec_json: String, on_done: DoneFn) -> Result<Self> {
        let spec = serde_json::from_str(&spec_json)
            .map_err(|e| internal(format!("capture spec: {e}")))
            .and_then(CaptureSpec::from_json_value)
            .map_err(|e| to_js(&env, &e))?;
        let control = Arc::new(CaptureControl::default());
        let outcome: Outcome = Arc::default();
        let (flag, slot) = (Arc::clone(&control), Arc::clone(&outcome));
        std::thread::Builder::new()
            .name("respload-capture".into())
            .spawn(move || {
                let result = respload::capture::capture(&spec, &flag).and_then(|r| report_json(&r));
                *lock(&slot) = Some(result);
                on_done.call((), ThreadsafeFunctionCallMode::NonBlocking);
            })
            .map_err(|e| to_js(&env, &internal(format!("cannot start a thread: {e}"))))?;
        Ok(NativeCapture { control, outcome })
    }

    /// Ask the capture to stop (within 100 ms): the file keeps what was written, and the
    /// report is marked `interrupted`. `onDone` follows.
    #[napi]
    pub fn stop(&self) {
        self.control.stop();
    }

    /// Whether every server acknowledged MONITOR: each command run from then on is recorded.
    #[napi(getter)]
    pub fn started(&self) -> bool {
        self.control.is_started()
    }

    /// The capture report as JSON text, once `onDone` was called (only once). Throws the
    /// capture's error (`ERR_RESPLOAD_CONNECT`, `ERR_RESPLOAD_FILE`, ...) when it failed.
    #[napi]
    pub fn take_report(&self, env: Env) -> Result<String> {
        match lock(&self.outcome).take() {
            Some(Ok(json)) => Ok(json),
            Some(Err(e)) => Err(to_js(&env, &e)),
            None => Err(to_js(
                &env,
                &internal("no report: the capture is not over, or its report was already taken"),
            )),
        }
    }
}

fn report_json(report: &CaptureReport) -> respload::Result<String> {
    serde_json::to_string(report).map_err(internal)
}
