//! Server observation while a phase runs: a side connection reads `INFO` once per interval,
//! aligned with the timeline, and turns its counters into per-interval rates.

use super::server_info::parse_info;
use crate::net::Client;
use crate::spec::Connect;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::sync::mpsc::{channel, RecvTimeoutError, Sender};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// One interval of the server's own figures, from `INFO`.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct ServerSample {
    /// Seconds since the measurement began, at the end of this interval (as the timeline's `t`).
    pub t: f64,
    /// Server CPU over the interval, user + system, in percent of one core (Redis executes
    /// commands on one thread: 100 is that thread saturated).
    pub cpu_percent: f64,
    /// `used_memory`, bytes.
    pub used_memory: u64,
    /// Commands processed per second over the interval (the observer's own INFO included).
    pub ops_per_sec: f64,
    /// `connected_clients`.
    pub connected_clients: u64,
    /// Keyspace hits in the interval.
    pub keyspace_hits: u64,
    /// Keyspace misses in the interval.
    pub keyspace_misses: u64,
    /// Keys evicted in the interval.
    pub evicted_keys: u64,
    /// `latest_fork_usec`: duration of the latest fork (BGSAVE, AOF rewrite, full sync).
    pub latest_fork_usec: u64,
    /// An RDB save is running.
    pub rdb_bgsave_in_progress: bool,
    /// An AOF rewrite is running.
    pub aof_rewrite_in_progress: bool,
    /// `role`: master or slave.
    pub role: String,
    /// `master_link_status` on a replica (`up`/`down`), empty on a primary.
    pub master_link_status: String,
    /// `connected_slaves`.
    pub connected_slaves: u64,
    /// How long this INFO took to come back (ms): the observer's own cost.
    pub info_ms: f64,
}

/// A summary of the server samples of a phase or a run.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct ServerLoad {
    /// Highest `cpu_percent` of an interval.
    pub peak_cpu_percent: f64,
    /// Mean `cpu_percent` over the intervals.
    pub mean_cpu_percent: f64,
    /// The CPU line capacity guides advise to stay under: 80 (% of a core).
    pub cpu_limit_percent: f64,
    /// Whether any interval went over `cpu_limit_percent`.
    pub cpu_over_limit: bool,
    /// Highest `used_memory`, bytes.
    pub peak_used_memory: u64,
    /// Samples taken.
    pub samples: u64,
    /// Mean INFO round trip (ms), one per interval on one extra connection.
    pub observer_info_ms: f64,
}

impl ServerLoad {
    /// The summary of `samples` (`None` when there are none).
    pub fn of(samples: &[ServerSample]) -> Option<ServerLoad> {
        if samples.is_empty() {
            return None;
        }
        let n = samples.len() as f64;
        let peak = samples.iter().map(|s| s.cpu_percent).fold(0.0, f64::max);
        Some(ServerLoad {
            peak_cpu_percent: peak,
            mean_cpu_percent: samples.iter().map(|s| s.cpu_percent).sum::<f64>() / n,
            cpu_limit_percent: CPU_LIMIT_PERCENT,
            cpu_over_limit: peak > CPU_LIMIT_PERCENT,
            peak_used_memory: samples.iter().map(|s| s.used_memory).max().unwrap_or(0),
            samples: samples.len() as u64,
            observer_info_ms: samples.iter().map(|s| s.info_ms).sum::<f64>() / n,
        })
    }
}

/// The server CPU line to stay under, in percent of a core.
pub const CPU_LIMIT_PERCENT: f64 = 80.0;

/// The sampling thread of one phase.
pub struct Sampler {
    stop: Sender<()>,
    join: JoinHandle<Vec<ServerSample>>,
}

impl Sampler {
    /// Start sampling `connect`'s server every `interval` from `start` (a baseline is read
    /// at `start` itself). Failures to connect or to read INFO only leave samples out.
    pub fn start(
        mut connect: Connect,
        start: Instant,
        interval: Duration,
    ) -> std::io::Result<Sampler> {
        // Named apart from the load connections in CLIENT LIST.
        if !connect.client_name.is_empty() {
            connect.client_name.push_str("-observer");
        }
        let (stop, stopped) = channel::<()>();
        let join = std::thread::Builder::new()
            .name("respload-observer".into())
            .spawn(move || {
                let Ok(rt) = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                else {
                    return Vec::new();
                };
                let timeout = connect.connect_timeout;
                let Ok(mut client) = rt.block_on(Client::connect(&connect)) else {
                    return Vec::new();
                };
                let mut read = |at: Instant| -> Option<(Instant, f64, BTreeMap<String, String>)> {
                    let reply = rt.block_on(client.call(&[b"INFO"], timeout)).ok()?;
                    let done = Instant::now();
                    let text = reply.as_text()?;
                    Some((
                        at,
                        done.duration_since(at).as_secs_f64() * 1e3,
                        parse_info(&text),
                    ))
                };
                let mut samples = Vec::new();
                let mut next = start;
                let mut previous = None;
                loop {
                    let wait = next.saturating_duration_since(Instant::now());
                    let last =
                        !matches!(stopped.recv_timeout(wait), Err(RecvTimeoutError::Timeout));
                    let at = if last { Instant::now() } else { next };
                    if let Some(now) = read(at) {
                        if let Some(before) = &previous {
                            samples.push(sample(before, &now, start));
                        }
                        previous = Some(now);
                    }
                    if last {
                        return samples;
                    }
                    next += interval;
                }
            })?;
        Ok(Sampler { stop, join })
    }

    /// Take a last sample, stop, and return every sample.
    pub fn finish(self) -> Vec<ServerSample> {
        let _ = self.stop.send(());
        self.join.join().unwrap_or_default()
    }
}

/// The interval between two INFO readings.
fn sample(
    before: &(Instant, f64, BTreeMap<String, String>),
    now: &(Instant, f64, BTreeMap<String, String>),
    start: Instant,
) -> ServerSample {
    let (t0, _, a) = before;
    let (t1, info_ms, b) = now;
    let secs = t1.duration_since(*t0).as_secs_f64().max(1e-6);
    let f = |m: &BTreeMap<String, String>, k: &str| {
        m.get(k).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0)
    };
    let u = |m: &BTreeMap<String, String>, k: &str| f(m, k) as u64;
    let delta = |k: &str| u(b, k).saturating_sub(u(a, k));
    let cpu = |m: &BTreeMap<String, String>| f(m, "used_cpu_sys") + f(m, "used_cpu_user");
    let text = |k: &str| b.get(k).cloned().unwrap_or_default();
    ServerSample {
        t: t1.saturating_duration_since(start).as_secs_f64(),
        cpu_percent: ((cpu(b) - cpu(a)) / secs * 100.0).max(0.0),
        used_memory: u(b, "used_memory"),
        ops_per_sec: delta("total_commands_processed") as f64 / secs,
        connected_clients: u(b, "connected_clients"),
        keyspace_hits: delta("keyspace_hits"),
        keyspace_misses: delta("keyspace_misses"),
        evicted_keys: delta("evicted_keys"),
        latest_fork_usec: u(b, "latest_fork_usec"),
        rdb_bgsave_in_progress: u(b, "rdb_bgsave_in_progress") == 1,
        aof_rewrite_in_progress: u(b, "aof_rewrite_in_progress") == 1,
        role: text("role"),
        master_link_status: text("master_link_status"),
        connected_slaves: u(b, "connected_slaves"),
        info_ms: *info_ms,
    }
}
