//! memtier_benchmark: its command line read (`args`, against the table of its options in
//! `options`, with the commands of a `--monitor-input` file from [`monitor`]) into a
//! workload ([`workload`](mod@workload)), and its report (`report`:
//! the settings and the figures it shows) as its text (`text`), JSON
//! (`json`) and HdrHistogram files (`hdr`); the private modules' items are reached here, at
//! `tools::memtier::` (one path each).

mod args;
mod client_stats;
mod hdr;
pub mod import;
mod json;
pub mod monitor;
mod options;
mod report;
mod text;
pub mod workload;

pub use args::*;
pub use client_stats::client_stats_files;
pub use hdr::write_hdr_files;
pub use json::{json, json_verified};
pub use options::usage;
pub use report::*;
pub use text::{phase_text, text, verification_text, warnings};

use crate::report::Report;
use crate::{Error, Result};

/// What is left to print once a memtier run is reported.
#[derive(Debug, Clone, Default)]
pub struct Printed {
    /// The text for stdout (empty when `--out-file` took it).
    pub stdout: String,
    /// Lines for stderr: where results went, warnings.
    pub stderr: Vec<String>,
}

/// Report a finished run as memtier_benchmark would: write `--out-file`, `--json-out-file`
/// and `--hdr-file-prefix` files, and return what to print.
pub fn finish(report: &Report, options: &Options) -> Result<Printed> {
    finish_verified(Some(report), options, None)
}

/// [`finish`] with what `--data-verify` found, reported after the run as memtier does; with
/// `--verify-only` there is no run (`report` is `None`) and only the verification is shown.
pub fn finish_verified(
    report: Option<&Report>,
    options: &Options,
    verification: Option<&Verification>,
) -> Result<Printed> {
    let mut printed = Printed::default();
    let mut text = report.map(|r| text(r, options)).unwrap_or_default();
    if let Some(v) = verification {
        text.push_str(&verification_text(v));
    }
    let write = |path: &str, body: &str| {
        std::fs::write(path, body).map_err(|source| Error::File {
            path: path.into(),
            source,
        })
    };
    match &options.out_file {
        Some(path) => {
            write(path, &text)?;
            printed.stderr.push(format!("Writing results to {path}..."));
        }
        None => printed.stdout = text,
    }
    if let Some(report) = report {
        for path in write_hdr_files(report, options)? {
            printed.stderr.push(format!(
                "Writing HDR latency histogram results to {path}..."
            ));
        }
    }
    if let Some(path) = &options.json_out_file {
        write(path, &json_verified(report, options, verification))?;
        printed
            .stderr
            .push(format!("Saving JSON output file: {path}"));
    }
    if let Some(report) = report {
        printed.stderr.extend(warnings(report, options));
    }
    Ok(printed)
}

#[cfg(test)]
mod tests;
