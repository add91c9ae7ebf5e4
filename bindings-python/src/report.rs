//! Reports: budget checks ([`respload::Report::check`]) and the interval log
//! ([`respload::output::hdr_log`]) of a report's JSON text.

use crate::error::to_py;
use pyo3::prelude::*;

/// Check a report (its JSON text) against a budget (JSON text: `p50_ms`, `p99_ms`,
/// `p99_9_ms`, `error_rate`, `min_ops_per_sec`, `commands`): `None` when every limit holds,
/// otherwise the message listing every one missed. An interrupted or empty run never passes.
/// Raises `SpecError` (with the budget's field `path`) for a bad budget.
#[pyfunction]
pub fn check_report(report_json: &str, budget_json: &str) -> PyResult<Option<String>> {
    respload::stats::check_report(report_json, budget_json).map_err(to_py)
}

/// Read a report file (`respload run --json`, `Report.save`) as JSON text of the current
/// schema: an older version upgraded, a newer one refused naming its version. Raises
/// `FileError` or `SpecError`.
#[pyfunction]
pub fn load_report(py: Python<'_>, path: std::path::PathBuf) -> PyResult<String> {
    py.detach(|| {
        let text = std::fs::read_to_string(&path).map_err(|source| respload::Error::File {
            path: path.display().to_string(),
            source,
        })?;
        respload::Report::upgraded_json(&text).map(|json| json.to_string())
    })
    .map_err(to_py)
}

/// The warning of a report (its JSON text) whose validity checks failed; `None` when trusted.
#[pyfunction]
pub fn validity_warning(report_json: &str) -> PyResult<Option<String>> {
    respload::stats::validity_warning(report_json).map_err(to_py)
}

/// The report's timeline (its JSON text) as an HdrHistogram interval log. Raises
/// `SpecError` (path `output.interval_histograms`) when the report kept no interval
/// histograms.
#[pyfunction]
pub fn hdr_log(report_json: &str) -> PyResult<String> {
    respload::output::hdr_log_of_json(report_json).map_err(to_py)
}

/// The latency distribution of the report's measured requests (its JSON text), or of one
/// `command` label's, as HdrHistogram's `.hgrm` text; empty when none finished. Raises
/// `SpecError` for a label the report does not have.
#[pyfunction]
#[pyo3(signature = (report_json, command=None))]
pub fn percentile_distribution(report_json: &str, command: Option<&str>) -> PyResult<String> {
    respload::Report::from_json_str(report_json)
        .and_then(|r| r.percentile_distribution(command))
        .map_err(to_py)
}

/// One report of the reports (JSON texts) of hosts that ran one workload together
/// (`Report::merge`), as JSON text. Raises `SpecError` naming what makes them not one
/// workload's (`reports[i]....`).
#[pyfunction]
pub fn merge_reports(py: Python<'_>, reports_json: Vec<String>) -> PyResult<String> {
    py.detach(|| {
        let reports = respload::Report::from_json_strs(&reports_json)?;
        respload::Report::merge(&reports).map(|r| r.to_json())
    })
    .map_err(to_py)
}

/// The report (JSON text) of one run of a workload (`workload_json`: its normalized JSON,
/// secrets redacted) from the reports (JSON texts) of its phases, each run on its own, in
/// order (`Report::join`). Raises `SpecError` naming what makes them not its phases.
#[pyfunction]
pub fn join_reports(
    py: Python<'_>,
    workload_json: &str,
    reports_json: Vec<String>,
) -> PyResult<String> {
    py.detach(|| {
        let workload: serde_json::Value = serde_json::from_str(workload_json)
            .map_err(|e| respload::Error::spec("workload", format!("not JSON: {e}")))?;
        let reports = respload::Report::from_json_strs(&reports_json)?;
        respload::Report::join(&workload, &reports).map(|r| r.to_json())
    })
    .map_err(to_py)
}

/// The comparison (JSON text) of reports (JSON texts, the baseline first) named by `labels`,
/// with `limits` (`p99=+10%`, ...) checked on the later ones (`Comparison::of`). Raises
/// `SpecError` for a bad limit (path `fail_on`) or fewer than two reports.
#[pyfunction]
pub fn compare_reports(
    py: Python<'_>,
    reports_json: Vec<String>,
    labels: Vec<String>,
    limits: Vec<String>,
) -> PyResult<String> {
    py.detach(|| {
        let limits = limits
            .iter()
            .map(|l| respload::report::Limit::parse(l))
            .collect::<respload::Result<Vec<_>>>()?;
        let reports = respload::Report::from_json_strs(&reports_json)?;
        respload::report::Comparison::of(&reports, &labels, &limits)?.to_json_with_text()
    })
    .map_err(to_py)
}
