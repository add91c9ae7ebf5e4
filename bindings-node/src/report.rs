//! Reports: budget checks ([`respload::Report::check`]) and the interval log
//! ([`respload::output::hdr_log`]) of a report's JSON text.

use crate::error::to_js;
use napi::bindgen_prelude::*;
use napi_derive::napi;

/// Check a report (its snake_case JSON text) against a budget (JSON text: `p50_ms`, `p99_ms`,
/// `p99_9_ms`, `error_rate`, `ops_per_sec`, `commands`): `null` when every limit holds,
/// otherwise the message listing every one missed. An interrupted or empty run never passes.
///
/// Throws `ERR_RESPLOAD_SPEC` (with the budget's field `path`) for a bad budget.
#[napi]
pub fn check_report(env: Env, report_json: String, budget_json: String) -> Result<Option<String>> {
    respload::report::check_report(&report_json, &budget_json).map_err(|e| to_js(&env, &e))
}

/// Read a report file (`respload run --json`, `report.save()`) as snake_case JSON text of the
/// current schema: an older version upgraded, a newer one refused naming its version.
///
/// Throws `ERR_RESPLOAD_FILE` or `ERR_RESPLOAD_SPEC`.
#[napi]
pub fn load_report(env: Env, path: String) -> Result<String> {
    std::fs::read_to_string(&path)
        .map_err(|source| respload::Error::File {
            path: path.clone(),
            source,
        })
        .and_then(|text| respload::Report::upgraded_json(&text))
        .map(|json| json.to_string())
        .map_err(|e| to_js(&env, &e))
}

/// The warning of a report (its snake_case JSON text) whose validity checks failed; `null`
/// when trusted.
#[napi]
pub fn validity_warning(env: Env, report_json: String) -> Result<Option<String>> {
    respload::report::validity_warning(&report_json).map_err(|e| to_js(&env, &e))
}

/// The report's timeline (its snake_case JSON text) as an HdrHistogram interval log.
///
/// Throws `ERR_RESPLOAD_SPEC` (path `output.interval_histograms`) when the report kept no
/// interval histograms.
#[napi]
pub fn hdr_log(env: Env, report_json: String) -> Result<String> {
    respload::output::hdr_log_of_json(&report_json).map_err(|e| to_js(&env, &e))
}

/// The latency distribution of the report's measured requests (its snake_case JSON text), or
/// of one `command` label's, as HdrHistogram's `.hgrm` text; empty when none finished.
///
/// Throws `ERR_RESPLOAD_SPEC` (path `command`) for a label the report does not have.
#[napi]
pub fn percentile_distribution(
    env: Env,
    report_json: String,
    command: Option<String>,
) -> Result<String> {
    respload::Report::from_json_str(&report_json)
        .and_then(|r| r.percentile_distribution(command.as_deref()))
        .map_err(|e| to_js(&env, &e))
}

/// The reports (snake_case JSON texts, the baseline first) as one self-contained HTML page
/// (`respload::report::html` in the core), named by `labels` (empty: by their place).
///
/// Throws `ERR_RESPLOAD_SPEC` for reports `compare` refuses.
#[napi]
pub fn reports_html(env: Env, reports_json: Vec<String>, labels: Vec<String>) -> Result<String> {
    respload::Report::from_json_strs(&reports_json)
        .and_then(|reports| respload::report::html::reports_html(&reports, &labels))
        .map_err(|e| to_js(&env, &e))
}

/// One report (snake_case JSON text) of the reports (their snake_case JSON texts) of hosts
/// that ran one workload together (`Report::merge` in the core).
///
/// Throws `ERR_RESPLOAD_SPEC` naming what makes them not one workload's (`reports[i]...`).
#[napi]
pub fn merge_reports(env: Env, reports: Vec<ReportInput>) -> Result<String> {
    let sources = reports
        .iter()
        .enumerate()
        .map(|(i, r)| match (&r.json, &r.path) {
            (Some(text), None) => Ok(respload::report::ReportSource::Json(text)),
            (None, Some(path)) => Ok(respload::report::ReportSource::File(path.as_ref())),
            _ => Err(respload::Error::Spec {
                path: format!("reports[{i}]"),
                reason: "give one of `json` (the report's text) and `path` (its file)".into(),
            }),
        })
        .collect::<respload::Result<Vec<_>>>();
    sources
        .and_then(|sources| respload::Report::from_sources(&sources))
        .and_then(|reports| respload::Report::merge(&reports))
        .map(|r| r.to_json())
        .map_err(|e| to_js(&env, &e))
}

/// A report as `mergeReports` takes it: its snake_case JSON text, or the file holding it
/// (read once in the core, not loaded into JavaScript first).
#[napi(object)]
pub struct ReportInput {
    /// The report's JSON text.
    pub json: Option<String>,
    /// A report file.
    pub path: Option<String>,
}

/// The comparison (snake_case JSON text) of reports (their snake_case JSON texts, the
/// baseline first) named by `labels`, with `limits` (`p99_ms=+10%`, ...) checked on the later
/// ones (`Comparison::of` in the core).
///
/// Throws `ERR_RESPLOAD_SPEC` for a bad limit (path `fail_on`) or fewer than two reports.
#[napi]
pub fn compare_reports(
    env: Env,
    reports_json: Vec<String>,
    labels: Vec<String>,
    limits: Vec<String>,
) -> Result<String> {
    let compared = limits
        .iter()
        .map(|l| respload::report::Limit::parse(l))
        .collect::<respload::Result<Vec<_>>>()
        .and_then(|limits| {
            let reports = respload::Report::from_json_strs(&reports_json)?;
            respload::report::Comparison::of(&reports, &labels, &limits)
        })
        .and_then(|c| c.to_json_with_text());
    compared.map_err(|e| to_js(&env, &e))
}
