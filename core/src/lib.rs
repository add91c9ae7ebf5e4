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

pub mod capture;
#[cfg(feature = "cli")]
pub mod cli;
pub(crate) mod engine;
pub mod error;
pub(crate) mod net;
pub(crate) mod observe;
pub mod output;
pub mod plan;
pub mod report;
pub mod resp;
mod runs;
pub mod spec;
pub(crate) mod stats;
pub mod tools;
pub mod trace;

pub use engine::{PhaseEnd, Runner, StopHandle};
pub use error::{Error, Result};
pub use plan::Workload;
pub use report::{Report, Snapshot};
pub use runs::run;
pub use spec::SpecParams;

/// The crate's parts its own integration tests reach (`core/tests`): not API, no stability
/// promised, hidden from the docs. The engine, the network layer, the recorders and the
/// observer are otherwise private.
#[doc(hidden)]
pub mod internals {
    pub use crate::engine::MAX_TRIES;
    pub use crate::net::Stream;
    pub use crate::observe::BUCKETS_S;
    pub use crate::stats::{stats_of, CommandRecorder};
}
