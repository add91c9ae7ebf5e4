//! respload: an embeddable load generator and benchmark library for Redis and RESP servers.
//!
//! ```no_run
//! let workload = respload::Workload::from_toml_str(r#"
//!     [target]
//!     url = "redis://127.0.0.1:6379"
//!     [load]
//!     connections = 8
//!     requests = 10000
//! "#)?;
//! let report = respload::run(&workload)?;
//! println!("{} ops/s, p99 {} ms", report.totals.ops_per_sec, report.totals.latency_ms.p99);
//! # Ok::<(), respload::Error>(())
//! ```
//!
//! The library never prints, never exits the process and installs no signal handlers: stop a
//! run with [`Runner::stop`] or a [`StopHandle`].

#![warn(missing_docs)]

#[cfg(feature = "cli")]
pub mod cli;
pub mod engine;
pub mod error;
pub mod net;
pub mod observe;
pub mod output;
pub mod plan;
pub mod report;
pub mod resp;
mod runs;
pub mod spec;
pub mod stats;
pub mod tools;

pub use engine::{PhaseEnd, Runner, StopHandle};
pub use error::{Error, Result};
pub use plan::Workload;
pub use report::{Report, Snapshot};
pub use runs::run;
pub use spec::SpecParams;
