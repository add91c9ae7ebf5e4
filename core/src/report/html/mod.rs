//! A report as one self-contained HTML page (`respload report --html`, `run --html`,
//! `Report.to_html()` / `toHtml()`): the verdict, the timeline, the percentile spectrum per
//! phase and command, the commands, hosts and workload; for several reports, the comparison
//! and each one's timeline and spectrum overlaid. Scripts, styles and data are inlined, so
//! the file opens with no network: the charts are uPlot's (MIT, its licence in the page),
//! bundled into the binary at build time.

mod data;

use super::{Comparison, Report};

const UPLOT_JS: &str = include_str!("uplot.min.js");
const UPLOT_CSS: &str = include_str!("uplot.min.css");
const UPLOT_LICENSE: &str = include_str!("uplot.LICENSE");
const PAGE_JS: &str = include_str!("page.js");
const PAGE_CSS: &str = include_str!("page.css");

/// The version of uPlot bundled (the first line of its file says the same).
pub const UPLOT_VERSION: &str = "1.6.32";

/// One report's page.
pub fn report_html(report: &Report) -> String {
    page(&[("", report)], None, false)
}

/// The live dashboard's page of a run in progress: `started` holds what is known before the
/// first row (the workload, the server, the host); the page draws the rows streamed to it
/// as server-sent events at `events` (relative to the page), one per second, each a
/// [`live_row`], and then the final report's data ([`report_data`]) in an event named
/// `report`.
pub fn live_html(started: &Report) -> String {
    page(&[("", started)], None, true)
}

/// The data a page draws for `report` (JSON text): what the dashboard sends when the run
/// ends.
pub fn report_data(report: &Report) -> String {
    data::page_data(&[("", report)], None).to_string()
}

/// One timeline row as the dashboard streams it (JSON text): `t` in seconds since the run
/// started (`started_at`, UNIX seconds), the phase, and the row's series.
pub fn live_row(phase: &str, measured: bool, row: &super::TimelineRow, started_at: f64) -> String {
    data::live_row(phase, measured, row, started_at).to_string()
}

/// A page of several reports, the first the baseline: `respload compare`'s verdicts (with
/// its noise rule and no limits), and each report's timeline and spectrum overlaid. `labels`
/// name them (empty: each report's host and start, or its place). Errors as `compare` does
/// (reports whose phases differ).
pub fn reports_html(reports: &[Report], labels: &[String]) -> crate::Result<String> {
    let comparison = match reports.len() {
        0 | 1 => None,
        _ => Some(Comparison::of(reports, labels, &[])?),
    };
    let names: Vec<String> = match &comparison {
        Some(c) => c.labels.clone(),
        None => reports
            .iter()
            .enumerate()
            .map(|(i, _)| labels.get(i).cloned().unwrap_or_default())
            .collect(),
    };
    let runs: Vec<(&str, &Report)> = names.iter().map(String::as_str).zip(reports).collect();
    Ok(page(&runs, comparison.as_ref(), false))
}

fn page(runs: &[(&str, &Report)], comparison: Option<&Comparison>, live: bool) -> String {
    let mut data = data::page_data(runs, comparison);
    data["live"] = live.into();
    let data = data.to_string();
    let title = match runs {
        [(_, r)] if live => format!("respload live: {}", workload_name(r)),
        [(_, r)] => format!("respload report: {}", workload_name(r)),
        _ => format!("respload: {} reports compared", runs.len()),
    };
    let mut out = String::with_capacity(data.len() + UPLOT_JS.len() + 16_384);
    out.push_str("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
    out.push_str("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n");
    out.push_str(&format!(
        "<meta name=\"generator\" content=\"respload {}\">\n",
        env!("CARGO_PKG_VERSION")
    ));
    out.push_str(&format!("<title>{}</title>\n", escape(&title)));
    out.push_str("<style>\n");
    out.push_str(UPLOT_CSS);
    out.push('\n');
    out.push_str(PAGE_CSS);
    out.push_str("</style>\n</head>\n<body>\n");
    out.push_str(&format!("<h1>{}</h1>\n", escape(&title)));
    out.push_str("<main id=\"page\"><p>Drawing the report…</p></main>\n");
    out.push_str("<footer><details><summary>Charts by uPlot ");
    out.push_str(UPLOT_VERSION);
    out.push_str(" (MIT licence)</summary><pre>");
    out.push_str(&escape(UPLOT_LICENSE));
    out.push_str("</pre></details></footer>\n");
    // JSON inside <script>: `</` would end the element early.
    out.push_str("<script type=\"application/json\" id=\"respload-data\">");
    out.push_str(&data.replace("</", "<\\/").replace("<!--", "<\\u0021--"));
    out.push_str("</script>\n<script>\n");
    out.push_str(UPLOT_JS);
    out.push_str("\n</script>\n<script>\n");
    out.push_str(PAGE_JS);
    out.push_str("\n</script>\n</body>\n</html>\n");
    out
}

/// The workload's name: its first phase's, or "run".
fn workload_name(r: &Report) -> String {
    match r.phases.as_slice() {
        [one] => one.name.clone(),
        [first, ..] => format!("{} phases from {}", r.phases.len(), first.name),
        [] => "run".into(),
    }
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// Write `report`'s page to `path`.
pub fn write_html(report: &Report, path: &str) -> crate::Result<()> {
    std::fs::write(path, report_html(report)).map_err(|source| crate::Error::File {
        path: path.into(),
        source,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bundled_uplot_is_the_version_named() {
        assert!(
            UPLOT_JS.starts_with(&format!(
                "/*! https://github.com/leeoniya/uPlot (v{UPLOT_VERSION})"
            )),
            "{}",
            &UPLOT_JS[..80]
        );
    }

    #[test]
    fn data_cannot_close_its_script_element() {
        let r = Report {
            workload: serde_json::json!({ "name": "</script><script>alert(1)</script>" }),
            ..Report::default()
        };
        let html = report_html(&r);
        let start = html.find("id=\"respload-data\">").unwrap();
        let end = start + html[start..].find("</script>").unwrap();
        assert!(html[start..end].contains("<\\/script>"));
        assert!(!html[start..end].contains("</script"));
    }
}
