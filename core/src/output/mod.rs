//! respload's own ways to show a report: text table, live line, JSON file, HdrHistogram log
//! (the HTML page is the report's own: `report::html`, so the live dashboard serves it too).
//! The peer tools' formats are in the `tools` module.

mod hdr_log;
pub mod paths;
mod progress;
mod table;

pub use hdr_log::{hdr_log, hdr_log_of_json, write_hdr_log};
pub use progress::{Bound, PhaseProgress, Progress};
pub use table::{progress_line, table};

/// Write the report as JSON to `path`.
pub fn write_json(report: &crate::Report, path: &str) -> crate::Result<()> {
    std::fs::write(path, report.to_json()).map_err(|source| crate::Error::File {
        path: path.into(),
        source,
    })
}
