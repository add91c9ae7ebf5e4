//! Server-side observation.

mod dashboard;
mod drills;
mod http;
mod prometheus;
mod sampler;
mod server_info;
mod statsd;

pub use dashboard::{Dashboard, Live};
pub use drills::{prepare as prepare_drills, Drills, Outcome as DrillOutcome, Plan as DrillPlan};
pub use prometheus::{Endpoint, Metrics, BUCKETS_S};
pub use sampler::{join_server_cpu, Sampler};
pub use server_info::{parse_info, read_facts};
pub use statsd::{StatsdFeed, StatsdSender};
