//! The plan: a spec resolved into what a run needs. [`Workload`] (the validated workload) and
//! its [`Phase`]s hold the spec as written and, beside it, what was worked out of it: where
//! and how to connect ([`ConnectOptions`], with TLS as a rustls configuration in
//! [`TlsConnect`]), the commands compiled ([`CompiledCommand`]) and the mix over them.
//!
//! Layers: `spec` (the schema: pure data and the checks of single fields) lies below this and
//! knows nothing of it; `net` and the engine use it. Resolving a spec type lives here as an
//! inherent method of that type (`Target::resolve`, `Tls::resolve`, `CommandSpec::compile`),
//! so that `spec` needs nothing of `plan`.

mod barrier;
mod ciphers;
mod command;
mod connect;
mod events;
mod phase;
mod replay;
mod shard;
mod slots;
mod start_at;
mod tls;
mod workload;

pub use barrier::{parse_barrier_timeout, Barrier, DEFAULT_BARRIER_TIMEOUT};
pub(crate) use ciphers::check_names as check_cipher_names;

pub use command::{CompiledCommand, MixEntry, PickedSteps};
pub(crate) use connect::{make_room, parse_url};
pub use connect::{ConnectOptions, Endpoint};
pub(crate) use events::replica_connect;
pub use phase::Phase;
pub use replay::{fnv1a, in_share, Classified, Prefill, ReplayPlan, MAX_REPLAY_LABELS};
pub use tls::TlsConnect;
pub use workload::Workload;
