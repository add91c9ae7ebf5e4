//! The engine: worker threads, connection tasks, request generation. Only the run and its
//! handles are public; its parts (`Rng`, `Pacer`, `KeySampler`, ...) are the crate's own.

mod abort;
mod barrier;
mod cluster;
mod connection;
mod control;
mod failed;
mod fd_limit;
mod feed;
mod generator;
mod keys;
mod labels;
mod pacer;
mod pending;
mod phase;
mod replay;
mod retry;
mod rng;
mod runner;
mod slo_search;
mod timer;
mod values;
mod verify;
mod worker;

pub use cluster::MAX_TRIES;
pub use runner::{PhaseEnd, Runner, StopHandle};
pub(crate) use verify::verify;
