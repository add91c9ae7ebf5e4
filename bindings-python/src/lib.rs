//! `respload._native`: the Python binding of the respload core.
//!
//! Conversions, GIL handling and error mapping only. Workloads come in and reports,
//! snapshots, trace records, models and capture reports go out as JSON text; the pure-Python
//! package `respload` wraps them in typed objects. Every blocking call releases the GIL.

use pyo3::prelude::*;

mod cli;
mod error;
mod progress;
mod report;
mod runner;
mod testing;
mod trace;
mod workload;

#[pymodule]
mod _native {
    #[pymodule_export]
    use super::cli::Cli;
    #[pymodule_export]
    use super::progress::{progress_line, Progress};
    #[pymodule_export]
    use super::report::{
        check_report, compare_reports, hdr_log, histogram_distribution, join_reports, load_report,
        lost_host_report, merge_reports, merge_snapshots, percentile_distribution, reports_html,
        validity_warning, with_phases_of,
    };
    #[pymodule_export]
    use super::runner::Runner;
    #[pymodule_export]
    use super::testing::{start_servers, TestClient, TestServer};
    #[pymodule_export]
    use super::trace::{fit_trace_model, Capture, TraceFile};
    #[pymodule_export]
    use super::workload::{parse_start_at, Workload};

    use pyo3::prelude::*;

    #[pymodule_init]
    fn init(m: &Bound<'_, PyModule>) -> PyResult<()> {
        m.add("__version__", env!("CARGO_PKG_VERSION"))?;
        m.add("SCHEMA_VERSION", respload::report::SCHEMA_VERSION)?;
        Ok(())
    }
}
