//! Reports: budget checks ([`respload::Report::check`]) and the interval log
//! ([`respload::output::hdr_log`]) of a report's JSON text.

use crate::error::to_py;
use pyo3::prelude::*;
// Report texts come in as PyBackedStr: read where Python keeps them, not copied into a
// String first (16 one-hour reports are 200 MB).
use pyo3::pybacked::PyBackedStr;

/// Check a report (its JSON text) against a budget (JSON text: `p50_ms`, `p99_ms`,
/// `p99_9_ms`, `error_rate`, `ops_per_sec`, `commands`): `None` when every limit holds,
/// otherwise the message listing every one missed. An interrupted or empty run never passes.
/// Raises `SpecError` (with the budget's field `path`) for a bad budget.
#[pyfunction]
pub fn check_report(report_json: &str, budget_json: &str) -> PyResult<Option<String>> {
    respload::report::check_report(report_json, budget_json).map_err(to_py)
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
    respload::report::validity_warning(report_json).map_err(to_py)
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

/// The latency distribution of one encoded histogram (a `histogram` field of the report, a
/// phase's or a command's), as HdrHistogram's `.hgrm` text; empty when it holds nothing.
#[pyfunction]
pub fn histogram_distribution(histogram: &str) -> String {
    respload::report::decode_histogram(histogram)
        .map(|h| respload::report::percentile_distribution(&h))
        .unwrap_or_default()
}

/// The reports (JSON texts, the baseline first) as one self-contained HTML page
/// (`respload::report::html`), named by `labels` (empty: by their place). Raises
/// `SpecError` for reports `compare` refuses.
#[pyfunction]
pub fn reports_html(
    py: Python<'_>,
    reports_json: Vec<PyBackedStr>,
    labels: Vec<String>,
) -> PyResult<String> {
    py.detach(|| {
        let reports = respload::Report::from_json_strs(&reports_json)?;
        respload::report::html::reports_html(&reports, &labels)
    })
    .map_err(to_py)
}

/// One report of the reports (JSON texts) of hosts that ran one workload together
/// (`Report::merge`), as JSON text. Raises `SpecError` naming what makes them not one
/// workload's (`reports[i]....`).
#[pyfunction]
pub fn merge_reports(py: Python<'_>, reports: Vec<ReportArg>) -> PyResult<String> {
    py.detach(|| {
        let sources: Vec<respload::report::ReportSource> = reports
            .iter()
            .map(|r| match r {
                ReportArg::Json(text) => respload::report::ReportSource::Json(text),
                ReportArg::File(path) => respload::report::ReportSource::File(path),
            })
            .collect();
        let reports = respload::Report::from_sources(&sources)?;
        respload::Report::merge(&reports).map(|r| r.to_json())
    })
    .map_err(to_py)
}

/// A report as `merge_reports` takes it: its JSON text (a `str`), or the file holding it (an
/// `os.PathLike`, read once in the core, not loaded into Python first).
#[derive(FromPyObject)]
pub enum ReportArg {
    /// The report's JSON text.
    Json(PyBackedStr),
    /// A report file.
    File(std::path::PathBuf),
}

/// The report (JSON text) of one run of a workload (`workload_json`: its normalized JSON,
/// secrets redacted) from the reports (JSON texts) of its phases, each run on its own, in
/// order (`Report::join`). Raises `SpecError` naming what makes them not its phases.
#[pyfunction]
pub fn join_reports(
    py: Python<'_>,
    workload_json: &str,
    reports_json: Vec<PyBackedStr>,
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
/// with `limits` (`p99_ms=+10%`, ...) checked on the later ones (`Comparison::of`). Raises
/// `SpecError` for a bad limit (path `fail_on`) or fewer than two reports.
#[pyfunction]
pub fn compare_reports(
    py: Python<'_>,
    reports_json: Vec<PyBackedStr>,
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

/// One snapshot (JSON text) of several hosts' snapshots (JSON texts) of one wall-clock
/// second (`Snapshot::merge`); `None` when there are none. Raises `SpecError` (path
/// `snapshots[i]`) for a text that is not a snapshot.
#[pyfunction]
pub fn merge_snapshots(snapshots_json: Vec<PyBackedStr>) -> PyResult<Option<String>> {
    let snapshots = snapshots_of(&snapshots_json)?;
    Ok(respload::Snapshot::merge(&snapshots).map(|s| to_text(&s)))
}

/// The report (JSON text) of shard `index`, named `host`, lost mid-run (`why`), made of the
/// snapshots it streamed (JSON texts) and shaped like `template_json`, another host's report
/// of the run (`Report::of_lost_host`). Raises `SpecError` for a text that is not a report or
/// a snapshot.
#[pyfunction]
pub fn lost_host_report(
    template_json: &str,
    index: u32,
    host: &str,
    snapshots_json: Vec<PyBackedStr>,
    why: &str,
) -> PyResult<String> {
    let template = respload::Report::from_json_str(template_json).map_err(to_py)?;
    let snapshots = snapshots_of(&snapshots_json)?;
    Ok(respload::Report::of_lost_host(&template, index, host, &snapshots, why).to_json())
}

/// The report (JSON text) with the phases of `template_json` it never reached added, empty
/// (`Report::with_phases_of`): a host stopped early, merged with those that were not.
#[pyfunction]
pub fn with_phases_of(report_json: &str, template_json: &str) -> PyResult<String> {
    let report = respload::Report::from_json_str(report_json).map_err(to_py)?;
    let template = respload::Report::from_json_str(template_json).map_err(to_py)?;
    Ok(report.with_phases_of(&template).to_json())
}

fn snapshots_of(texts: &[PyBackedStr]) -> PyResult<Vec<respload::Snapshot>> {
    texts
        .iter()
        .enumerate()
        .map(|(i, text)| {
            serde_json::from_str(text).map_err(|e| {
                to_py(respload::Error::spec(
                    format!("snapshots[{i}]"),
                    format!("not a snapshot: {e}"),
                ))
            })
        })
        .collect()
}

fn to_text(snapshot: &respload::Snapshot) -> String {
    // A snapshot is numbers and strings: it always serializes.
    serde_json::to_string(snapshot).unwrap_or_default()
}
