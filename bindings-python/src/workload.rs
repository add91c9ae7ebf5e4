//! `Workload`: a validated core workload, built from JSON text, TOML text or a file.

use crate::error::to_py;
use pyo3::prelude::*;
use std::path::PathBuf;

/// A validated workload (secrets kept inside; `to_json` redacts them).
#[pyclass(frozen, module = "respload._native", name = "Workload")]
pub struct Workload {
    pub(crate) inner: respload::Workload,
}

#[pymethods]
impl Workload {
    /// Parse and validate a spec given as JSON text.
    #[staticmethod]
    fn from_json(text: &str) -> PyResult<Self> {
        let inner = respload::Workload::from_json_str(text).map_err(to_py)?;
        Ok(Workload { inner })
    }

    /// Parse and validate a spec given as TOML text.
    #[staticmethod]
    fn from_toml(text: &str) -> PyResult<Self> {
        let inner = respload::Workload::from_toml_str(text).map_err(to_py)?;
        Ok(Workload { inner })
    }

    /// Read and validate a `.toml` or `.json` spec file, its `[vars]` resolved at `scale` and
    /// with `vars_json` (a JSON object of values) set.
    #[staticmethod]
    #[pyo3(signature = (path, scale=None, vars_json=None))]
    fn from_file(
        py: Python<'_>,
        path: PathBuf,
        scale: Option<String>,
        vars_json: Option<String>,
    ) -> PyResult<Self> {
        let inner = py
            .detach(|| {
                let params = respload::SpecParams::from_json_text(scale, vars_json.as_deref())?;
                respload::Workload::from_file_with(&path, &params)
            })
            .map_err(to_py)?;
        Ok(Workload { inner })
    }

    /// Parse a redis-benchmark command line (split as a shell would; a leading
    /// `redis-benchmark` is skipped) into a workload, one phase per test, and the warnings
    /// redis-benchmark would print. `-l` is an error (the CLI alone repeats runs).
    #[staticmethod]
    fn from_redis_benchmark(line: &str) -> PyResult<(Self, Vec<String>)> {
        let rb = respload::tools::redis_benchmark::parse_line(line).map_err(to_py)?;
        let warnings = rb.warnings.clone();
        let inner = rb.into_workload().map_err(to_py)?;
        Ok((Workload { inner }, warnings))
    }

    /// Parse a memtier_benchmark command line (split as a shell would; a leading
    /// `memtier_benchmark` is skipped) into a workload: `--run-count` runs are measured
    /// phases `run 1` ... `run N`.
    #[staticmethod]
    fn from_memtier(line: &str) -> PyResult<Self> {
        let inner = respload::tools::memtier::workload(line).map_err(to_py)?;
        Ok(Workload { inner })
    }

    /// A copy with overrides (partial specs as JSON text): `target` applies to every phase,
    /// `rest` to the measured phases.
    #[pyo3(signature = (target=None, rest=None))]
    fn with_overrides(&self, target: Option<&str>, rest: Option<&str>) -> PyResult<Self> {
        let target = target.map(parse).transpose()?;
        let rest = rest.map(parse).transpose()?;
        let inner = self.inner.with_overrides(target, rest).map_err(to_py)?;
        Ok(Workload { inner })
    }

    /// Shard `index` of `count` hosts running this workload together.
    fn shard(&self, index: u32, count: u32) -> PyResult<Self> {
        let inner = self.inner.shard(index, count).map_err(to_py)?;
        Ok(Workload { inner })
    }

    /// This workload set to send its first request at `unix_s` (UNIX seconds).
    fn starting_at(&self, unix_s: f64) -> PyResult<Self> {
        let inner = self.inner.starting_at(unix_s).map_err(to_py)?;
        Ok(Workload { inner })
    }

    /// This shard with its phases in step across its hosts, meeting on the Redis at `url`
    /// (`Workload::with_barrier`); `timeout` is a duration's text (`"5m"`).
    #[pyo3(signature = (url, id=None, timeout=None))]
    fn with_barrier(&self, url: &str, id: Option<&str>, timeout: Option<&str>) -> PyResult<Self> {
        let timeout = timeout
            .map(respload::plan::parse_barrier_timeout)
            .transpose()
            .map_err(to_py)?;
        let inner = self.inner.with_barrier(url, id, timeout).map_err(to_py)?;
        Ok(Workload { inner })
    }

    /// The normalized spec as JSON text, passwords redacted unless `redact` is false (then
    /// it parses back to this workload).
    #[pyo3(signature = (redact=true))]
    fn to_json(&self, redact: bool) -> String {
        if redact {
            self.inner.redacted().to_string()
        } else {
            self.inner.to_json_value().to_string()
        }
    }

    /// Number of phases.
    fn __len__(&self) -> usize {
        self.inner.phases.len()
    }
}

fn parse(text: &str) -> PyResult<serde_json::Value> {
    serde_json::from_str(text)
        .map_err(|e| to_py(respload::Error::spec("", format!("not valid JSON: {e}"))))
}

/// A start instant from its text (UNIX seconds or RFC 3339) as UNIX seconds. Raises
/// `SpecError` (path `start_at`) for text that is neither.
#[pyfunction]
pub fn parse_start_at(text: &str) -> PyResult<f64> {
    respload::spec::parse_start_at(text).map_err(to_py)
}
