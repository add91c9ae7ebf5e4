//! Server observation while a phase runs: a side connection reads `INFO` once per interval,
//! aligned with the timeline, and turns its counters into per-interval rates.

use super::server_info::parse_info;
use crate::net::cluster::SlotMap;
use crate::net::Client;
use crate::plan::ConnectOptions;
use crate::report::{ServerSample, TimelineRow};
use std::collections::BTreeMap;
use std::future::{poll_fn, Future};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{channel, RecvTimeoutError, Sender};
use std::sync::Arc;
use std::task::Poll;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Give each timeline row its server's CPU (`server_cpu_percent`): the `cpu_percent` of the
/// sample of `series` taken at the row's end, the highest of them when there are several
/// servers (a cluster's nodes). Rows and samples pair up in order, each sample with one row
/// at most, when taken within half an interval of the row's `t` (the last sample comes
/// slightly after the end); a row with none keeps `None`.
pub fn join_server_cpu(rows: &mut [TimelineRow], series: &[&[ServerSample]], interval: Duration) {
    let half = interval.as_secs_f64() / 2.0;
    for row in rows.iter_mut() {
        row.server_cpu_percent = None;
    }
    for samples in series {
        let mut next = samples.iter().peekable();
        for row in rows.iter_mut() {
            // Samples too early for this row matched no row (theirs had no sample).
            while next.next_if(|s| s.t < row.t - half).is_some() {}
            if let Some(s) = next.next_if(|s| s.t <= row.t + half) {
                let busiest = row.server_cpu_percent.unwrap_or(0.0).max(s.cpu_percent);
                row.server_cpu_percent = Some(busiest);
            }
        }
    }
}

/// The sampling thread of one phase.
pub struct Sampler {
    stop: Sender<()>,
    /// Set with `stop`: a reading under way gives up, so that a server that answers nothing
    /// (stopped, paused) holds the end of a run [`LAST_READ`] at most, not two intervals.
    stopping: Arc<AtomicBool>,
    join: JoinHandle<Vec<(String, Vec<ServerSample>)>>,
}

/// What to sample: one server, or the nodes of a cluster (read from its slot map).
enum Targets {
    One(ConnectOptions),
    Cluster(ConnectOptions),
}

/// One sampled server.
struct Node {
    name: String,
    connect: ConnectOptions,
    client: Option<Client>,
    previous: Option<Reading>,
    samples: Vec<ServerSample>,
}

/// One INFO reading: when it was due, its round trip (ms), its fields.
type Reading = (Instant, f64, BTreeMap<String, String>);

impl Sampler {
    /// Start sampling `connect`'s server every `interval` from `start` (a baseline is read
    /// at `start` itself), with room for `expected` samples made up front (a long run's
    /// series then never doubles and copies). Failures to connect or to read INFO only
    /// leave samples out.
    pub fn start(
        connect: ConnectOptions,
        start: Instant,
        interval: Duration,
        expected: usize,
    ) -> std::io::Result<Sampler> {
        Self::spawn(Targets::One(connect), start, interval, expected)
    }

    /// Cluster mode: sample every node of the cluster `connect` names (primaries and
    /// replicas), each on its own side connection, all at the same instants. The nodes are
    /// those of the slot map at the start.
    pub fn start_cluster(
        connect: ConnectOptions,
        start: Instant,
        interval: Duration,
        expected: usize,
    ) -> std::io::Result<Sampler> {
        Self::spawn(Targets::Cluster(connect), start, interval, expected)
    }

    fn spawn(
        targets: Targets,
        start: Instant,
        interval: Duration,
        expected: usize,
    ) -> std::io::Result<Sampler> {
        let (stop, stopped) = channel::<()>();
        let stopping = Arc::new(AtomicBool::new(false));
        let given_up = Arc::clone(&stopping);
        let join = std::thread::Builder::new()
            .name("respload-observer".into())
            .spawn(move || {
                let Ok(rt) = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                else {
                    return Vec::new();
                };
                let mut nodes = rt.block_on(nodes_of(targets, expected));
                let mut next = start;
                loop {
                    let wait = next.saturating_duration_since(Instant::now());
                    let last =
                        !matches!(stopped.recv_timeout(wait), Err(RecvTimeoutError::Timeout));
                    if last {
                        rt.block_on(read_all(&mut nodes, Instant::now(), start, LAST_READ));
                        return nodes.into_iter().map(|n| (n.name, n.samples)).collect();
                    }
                    let done = rt.block_on(async {
                        tokio::select! {
                            () = read_all(&mut nodes, next, start, interval) => true,
                            () = set(&given_up) => false,
                        }
                    });
                    if !done {
                        // A reply may still come for the reading given up: fresh connections
                        // for the last one.
                        for n in nodes.iter_mut() {
                            n.client = None;
                        }
                    }
                    next += interval;
                }
            })?;
        Ok(Sampler {
            stop,
            stopping,
            join,
        })
    }

    /// Take a last sample, stop, and return every server's samples (`host:port` and its
    /// samples, in the order the nodes were found; one entry for a single server).
    pub fn finish(self) -> Vec<(String, Vec<ServerSample>)> {
        self.stopping.store(true, Ordering::SeqCst);
        let _ = self.stop.send(());
        self.join.join().unwrap_or_default()
    }
}

/// The servers to sample, named apart from the load connections in CLIENT LIST.
async fn nodes_of(targets: Targets, expected: usize) -> Vec<Node> {
    let observer = |c: ConnectOptions| {
        let mut c = c.control();
        if !c.client_name.is_empty() {
            c.client_name.push_str("-observer");
        }
        c
    };
    let node = |name: String, connect: ConnectOptions| Node {
        name,
        connect: observer(connect),
        client: None,
        previous: None,
        samples: Vec::with_capacity(expected),
    };
    match targets {
        Targets::One(c) => vec![node(c.endpoint.to_string(), c)],
        Targets::Cluster(c) => {
            let seeds = c.cluster.clone().unwrap_or_default();
            let Ok(map) = SlotMap::fetch(&seeds, &c).await else {
                return Vec::new();
            };
            // Replicas too: those serving reads, and those a failover will promote.
            let mut addrs = map.primaries();
            for a in map.ranges.iter().flat_map(|r| &r.replicas) {
                if !addrs.contains(a) {
                    addrs.push(a.clone());
                }
            }
            addrs
                .into_iter()
                .map(|a| node(a.to_string(), a.connect(&c)))
                .collect()
        }
    }
}

/// The longest the last reading, at a phase's end, may wait for a server.
const LAST_READ: Duration = Duration::from_millis(300);

/// Resolves once `flag` is set (looked at every 20 ms: the observer has nothing else to do).
async fn set(flag: &AtomicBool) {
    while !flag.load(Ordering::SeqCst) {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Read INFO from every node at once (a slow or dead node delays no other); a node whose
/// connection failed is connected again first. Each waits `interval` at most.
async fn read_all(nodes: &mut [Node], at: Instant, start: Instant, interval: Duration) {
    let mut reads: Vec<_> = nodes
        .iter_mut()
        .map(|n| Some(Box::pin(read_one(n, at, start, interval))))
        .collect();
    poll_fn(|cx| {
        let mut pending = false;
        for slot in reads.iter_mut() {
            if let Some(f) = slot {
                if f.as_mut().poll(cx).is_ready() {
                    *slot = None;
                } else {
                    pending = true;
                }
            }
        }
        if pending {
            Poll::Pending
        } else {
            Poll::Ready(())
        }
    })
    .await
}

async fn read_one(n: &mut Node, at: Instant, start: Instant, interval: Duration) {
    // A dead node must not hold the others' next reading back.
    let timeout = n.connect.connect_timeout.min(interval);
    if n.client.is_none() {
        let mut c = n.connect.clone();
        c.connect_timeout = timeout;
        n.client = Client::connect(&c).await.ok();
    }
    let Some(client) = n.client.as_mut() else {
        return;
    };
    let reply = match client.call(&[b"INFO"], timeout).await {
        Ok(r) => r,
        Err(_) => {
            n.client = None;
            n.previous = None;
            return;
        }
    };
    let Some(text) = reply.as_text() else {
        return;
    };
    let now = (
        at,
        Instant::now().duration_since(at).as_secs_f64() * 1e3,
        parse_info(&text),
    );
    if let Some(before) = &n.previous {
        n.samples.push(sample(before, &now, start));
    }
    n.previous = Some(now);
}

/// The interval between two INFO readings.
fn sample(before: &Reading, now: &Reading, start: Instant) -> ServerSample {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn at(t: f64, cpu_percent: f64) -> ServerSample {
        ServerSample {
            t,
            cpu_percent,
            ..ServerSample::default()
        }
    }

    fn rows(ts: &[f64]) -> Vec<TimelineRow> {
        ts.iter()
            .map(|&t| TimelineRow {
                t,
                ..TimelineRow::default()
            })
            .collect()
    }

    #[test]
    fn each_row_gets_the_sample_taken_at_its_end_or_none() {
        // The sample of the second interval is missing (an INFO that failed); the last,
        // short interval's sample was read a little after the row's end.
        let samples = [at(1.0, 10.0), at(3.0, 30.0), at(3.52, 35.0)];
        let mut timeline = rows(&[1.0, 2.0, 3.0, 3.5]);
        join_server_cpu(&mut timeline, &[&samples], Duration::from_secs(1));
        let cpu: Vec<_> = timeline.iter().map(|r| r.server_cpu_percent).collect();
        assert_eq!(cpu, [Some(10.0), None, Some(30.0), Some(35.0)]);
        // A last interval of a millisecond gets the sample read at the end, not its
        // neighbour's.
        let samples = [at(1.0, 10.0), at(2.0, 95.0), at(2.02, 2.0)];
        let mut timeline = rows(&[1.0, 2.0, 2.001]);
        join_server_cpu(&mut timeline, &[&samples], Duration::from_secs(1));
        let cpu: Vec<_> = timeline.iter().map(|r| r.server_cpu_percent).collect();
        assert_eq!(cpu, [Some(10.0), Some(95.0), Some(2.0)]);
    }

    #[test]
    fn a_cluster_row_gets_its_busiest_node() {
        let a = [at(1.0, 20.0), at(2.0, 90.0)];
        let b = [at(1.0, 60.0), at(2.0, 5.0)];
        let mut timeline = rows(&[1.0, 2.0]);
        join_server_cpu(&mut timeline, &[&a, &b], Duration::from_secs(1));
        let cpu: Vec<_> = timeline.iter().map(|r| r.server_cpu_percent).collect();
        assert_eq!(cpu, [Some(60.0), Some(90.0)]);
        join_server_cpu(&mut timeline, &[], Duration::from_secs(1));
        assert!(timeline.iter().all(|r| r.server_cpu_percent.is_none()));
    }
}
