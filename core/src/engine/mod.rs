//! The engine: worker threads, connection tasks, request generation.

mod abort;
mod cluster;
mod connection;
mod control;
pub mod fd_limit;
mod generator;
mod keys;
mod pacer;
mod phase;
mod rng;
mod runner;
mod slo_search;
mod timer;
mod values;
mod worker;

pub use cluster::MAX_TRIES;
pub use keys::{parallel_slice, KeySampler, Sequence, Zipf};
pub use pacer::Pacer;
pub use rng::Rng;
pub use runner::{run, Runner, StopHandle};
pub use values::{value_pool, ValueSource};

use crate::stats::TimelineRow;
use serde::{Deserialize, Serialize};

/// One interval's figures, streamed while a run goes on.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Snapshot {
    /// Name of the phase running.
    pub phase: String,
    /// Whether that phase is measured.
    pub measured: bool,
    /// The interval's figures, as in the timeline.
    #[serde(flatten)]
    pub row: TimelineRow,
}
