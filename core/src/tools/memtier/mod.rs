//! memtier_benchmark: its command line read ([`args`], against the table of its options in
//! [`options`], with the commands of a `--monitor-input` file from [`monitor`]) into a
//! workload ([`workload`](mod@workload)), and its report ([`report`]:
//! the settings and the figures it shows) as its text ([`text`](mod@text)), JSON
//! ([`json`](mod@json)) and HdrHistogram files ([`hdr`]).

pub mod args;
pub mod hdr;
pub mod json;
pub mod monitor;
pub mod options;
pub mod report;
pub mod text;
pub mod workload;

pub use args::*;
pub use hdr::write_hdr_files;
pub use json::json;
pub use options::usage;
pub use report::*;
pub use text::{phase_text, text, warnings};

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
    let mut printed = Printed::default();
    let text = text(report, options);
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
    for path in write_hdr_files(report, options)? {
        printed.stderr.push(format!(
            "Writing HDR latency histogram results to {path}..."
        ));
    }
    if let Some(path) = &options.json_out_file {
        write(path, &json(report, options))?;
        printed
            .stderr
            .push(format!("Saving JSON output file: {path}"));
    }
    printed.stderr.extend(warnings(report, options));
    Ok(printed)
}

#[cfg(test)]
mod tests;
