//! Test harness: the throwaway servers of `respload-testing` (re-exported, so that the test
//! files say `common::Server`), and the helpers only these tests use: a counting proxy, a
//! pipelining check through it, and a workload from JSON.
#![allow(dead_code)]

// A test file may use none of them (only `workload`, say).
#[allow(unused_imports)]
pub use respload_testing::*;

pub mod traces;

use respload::report::Transport;
use respload::resp::{Framer, Reply};
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

/// A TCP proxy in front of a real server that counts, per connection, how many requests
/// were in flight at once (requests forwarded minus replies returned), and how many of the
/// client's writes (reads here) brought requests while earlier ones were still unanswered,
/// and the RESP3 push messages the server sent (counted as replies in the in-flight figure).
/// A paced proxy ([`Proxy::start_paced`]) pauses after forwarding part of a pipeline's
/// replies, so the client has them while the rest are still owed, however busy the machine.
pub struct Proxy {
    pub port: u16,
    pub max_inflight: Arc<AtomicI64>,
    pub sent_while_busy: Arc<AtomicI64>,
    pub pushes: Arc<AtomicI64>,
}

impl Proxy {
    pub fn start(upstream: u16) -> Proxy {
        Proxy::start_paced(upstream, Duration::ZERO)
    }

    /// As [`Proxy::start`], and after each forwarded piece of the server's replies that
    /// leaves replies owed, a pause of `pause` before the next.
    pub fn start_paced(upstream: u16, pause: Duration) -> Proxy {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let max_inflight = Arc::new(AtomicI64::new(0));
        let max = Arc::clone(&max_inflight);
        let sent_while_busy = Arc::new(AtomicI64::new(0));
        let busy = Arc::clone(&sent_while_busy);
        let pushes = Arc::new(AtomicI64::new(0));
        let pushed = Arc::clone(&pushes);
        std::thread::spawn(move || {
            for client in listener.incoming() {
                let Ok(client) = client else { return };
                let Ok(server) = TcpStream::connect(("127.0.0.1", upstream)) else {
                    return;
                };
                let inflight = Arc::new(AtomicI64::new(0));
                let pipe = |mut from: TcpStream,
                            mut to: TcpStream,
                            delta: i64,
                            inflight: Arc<AtomicI64>,
                            (max, busy, pushed): (
                    Arc<AtomicI64>,
                    Arc<AtomicI64>,
                    Arc<AtomicI64>,
                )| {
                    std::thread::spawn(move || {
                        let mut framer = Framer::new();
                        let mut pending: Vec<u8> = Vec::new();
                        let mut buf = [0u8; 65536];
                        loop {
                            let n = match from.read(&mut buf) {
                                Ok(0) | Err(_) => break,
                                Ok(n) => n,
                            };
                            pending.extend_from_slice(&buf[..n]);
                            let before = inflight.load(Ordering::SeqCst);
                            let mut framed = 0;
                            while let Ok(Some((len, reply))) = framer.next(&pending) {
                                pending.drain(..len);
                                framed += 1;
                                if reply == Reply::Push {
                                    pushed.fetch_add(1, Ordering::SeqCst);
                                }
                                let now = inflight.fetch_add(delta, Ordering::SeqCst) + delta;
                                max.fetch_max(now, Ordering::SeqCst);
                            }
                            if delta > 0 && framed > 0 && before > 0 {
                                busy.fetch_add(1, Ordering::SeqCst);
                            }
                            if to.write_all(&buf[..n]).is_err() {
                                break;
                            }
                            if delta < 0 && inflight.load(Ordering::SeqCst) > 0 {
                                std::thread::sleep(pause);
                            }
                        }
                        let _ = to.shutdown(std::net::Shutdown::Both);
                    });
                };
                let (c2, s2) = (client.try_clone().unwrap(), server.try_clone().unwrap());
                let counters = (Arc::clone(&max), Arc::clone(&busy), Arc::clone(&pushed));
                pipe(client, server, 1, Arc::clone(&inflight), counters.clone());
                pipe(s2, c2, -1, inflight, counters);
            }
        });
        Proxy {
            port,
            max_inflight,
            sent_while_busy,
            pushes,
        }
    }
}

/// GETs of keys `keys[0]..=keys[1]` (values large enough that a pipeline's replies take
/// several reads), 2 connections, pipeline 8, 800 requests, one thread, through a new
/// [`Proxy`] in front of `upstream`, once eager and once in batches; `target` gives the
/// target for the proxy. Checks that every GET hit and that 8 were in flight at most, and
/// returns how many writes each sent while earlier requests were unanswered.
pub fn writes_while_busy(
    upstream: u16,
    keys: [u64; 2],
    target: impl Fn(&Proxy) -> serde_json::Value,
) -> [i64; 2] {
    ["eager", "batch"].map(|refill| {
        // Paced, so that an eager client has read part of each pipeline's replies before
        // the rest arrive even when the machine is busy (it failed once under load).
        let proxy = Proxy::start_paced(upstream, Duration::from_millis(2));
        let report = respload::run(&workload(serde_json::json!({
            "target": target(&proxy),
            "load": { "connections": 2, "pipeline": 8, "requests": 800, "threads": 1,
                      "refill": refill },
            "keys": { "range": keys },
            "commands": [{ "name": "get" }],
        })))
        .unwrap();
        let t = &report.totals;
        assert_eq!((t.ops, t.errors, t.hits), (800, 0, 800), "{refill}");
        assert_eq!(proxy.max_inflight.load(Ordering::SeqCst), 8, "{refill}");
        proxy.sent_while_busy.load(Ordering::SeqCst)
    })
}

/// Build a workload from JSON, panicking with the error on failure; on the transport of
/// [`test_io`] unless the spec names one or uses TLS (which runs on epoll only).
pub fn workload(mut spec: serde_json::Value) -> respload::Workload {
    if test_io() == Transport::Uring && !uses_tls(&spec) {
        if let Some(obj) = spec.as_object_mut() {
            let load = obj.entry("load").or_insert_with(|| serde_json::json!({}));
            if let Some(load) = load.as_object_mut() {
                load.entry("io").or_insert_with(|| "uring".into());
            }
        }
    }
    respload::Workload::from_json_value(spec).unwrap_or_else(|e| panic!("{e}"))
}

/// The transport the suites' workloads run on: `RESPLOAD_TEST_IO` (`epoll` or `uring`), epoll
/// when unset. `make test` runs the suites once as they are and a subset again with `uring`
/// (docs/development.md, "Both transports").
pub fn test_io() -> Transport {
    match std::env::var("RESPLOAD_TEST_IO").as_deref() {
        Err(_) | Ok("") | Ok("epoll") => Transport::Epoll,
        Ok("uring") => Transport::Uring,
        Ok(other) => panic!("RESPLOAD_TEST_IO = {other:?}: allowed are \"epoll\" and \"uring\""),
    }
}

/// Whether a spec connects over TLS anywhere (a `rediss://` URL or a `tls` table, at the top
/// or in a phase).
fn uses_tls(spec: &serde_json::Value) -> bool {
    let tls = |target: &serde_json::Value| {
        target.get("tls").is_some()
            || target
                .get("url")
                .and_then(|u| u.as_str())
                .is_some_and(|u| u.starts_with("rediss://"))
    };
    spec.get("target").is_some_and(tls)
        || spec
            .get("phases")
            .and_then(|p| p.as_array())
            .is_some_and(|phases| phases.iter().filter_map(|p| p.get("target")).any(tls))
}

/// redis-server options under which `OBJECT FREQ` counts every access of a key (LFU
/// counters with log factor 0, up to 255) and never decays.
pub const COUNT_EVERY_READ: &[&str] = &[
    "--maxmemory-policy",
    "allkeys-lfu",
    "--lfu-log-factor",
    "0",
    "--lfu-decay-time",
    "0",
];

/// The test file's lock, held by its tests that must not run beside each other (a spinning
/// server takes a core; timing figures need the other one). Each test file is its own
/// binary, so each has its own lock. A test that panicked holding it does not block the rest.
pub fn one_at_a_time() -> MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock().unwrap_or_else(|e| e.into_inner())
}

/// Runs a measurement may take when the machine was disturbed during it: a fresh-clone
/// `make test` of 2026-11-27 had the machine slow for a minute (three runs of the M/D/1
/// calibration in a row 36% to 11x over, which passed 4 times of 4 just after).
pub const MEASURED_RUNS: usize = 5;

/// A run is disturbed when, during it, processes other than this test and its descendants
/// used this many cores on average (a compiler, a neighbour's test)...
pub const OTHERS_CORES: f64 = 0.3;
/// ... or the hypervisor took this many cores' worth of CPU time from the virtual machine
/// (steal, /proc/stat)...
pub const STEAL_CORES: f64 = 0.05;
/// ... or a thread that does nothing but wake on a schedule beside the run (see [`watch`])
/// woke this late (ms) at its 99th percentile: what every thread of the machine suffered,
/// respload's and the server's alike.
pub const PROBE_P99_MS: f64 = 1.0;

/// The clock ticks per second of /proc (`USER_HZ`, 100 on Linux).
const TICKS: f64 = 100.0;

/// The fields of /proc/stat's first line (all CPUs, clock ticks since boot): user nice system
/// idle iowait irq softirq steal ... (empty elsewhere than Linux).
pub fn proc_stat_cpu() -> Vec<u64> {
    let stat = std::fs::read_to_string("/proc/stat").unwrap_or_default();
    stat.lines()
        .next()
        .unwrap_or("")
        .split_whitespace()
        .skip(1)
        .filter_map(|n| n.parse().ok())
        .collect()
}

/// The CPU time of the whole machine since boot from /proc/stat's first line (clock ticks):
/// busy (everything but idle, iowait and steal) and steal (zeros elsewhere than Linux).
fn machine_ticks() -> (u64, u64) {
    let cpu = proc_stat_cpu();
    let at = |i: usize| cpu.get(i).copied().unwrap_or(0);
    // user nice system idle iowait irq softirq steal (guest time is inside user's).
    let busy = at(0) + at(1) + at(2) + at(5) + at(6);
    (busy, at(7))
}

/// The CPU time (clock ticks) of this process and every process descended from it (the
/// redis-servers under their watchdog shells, redis-cli, redis-benchmark), with that of
/// their children already reaped, from /proc/PID/stat.
fn our_ticks() -> u64 {
    let me = std::process::id();
    let mut parent = std::collections::HashMap::new();
    let mut ticks = std::collections::HashMap::new();
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|p| p.parse::<u32>().ok())
        else {
            continue;
        };
        let stat = std::fs::read_to_string(entry.path().join("stat")).unwrap_or_default();
        // After the parenthesised name: state (field 3), ppid (4), ..., utime (14), stime
        // (15), cutime (16), cstime (17).
        let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
        let f: Vec<u64> = rest
            .split_whitespace()
            .skip(1)
            .map(|n| n.parse().unwrap_or(0))
            .collect();
        if f.len() < 15 {
            continue;
        }
        let field = |i: usize| f[i - 4];
        parent.insert(pid, field(4) as u32);
        ticks.insert(pid, field(14) + field(15) + field(16) + field(17));
    }
    let ours = |mut pid: u32| {
        while pid > 1 {
            if pid == me {
                return true;
            }
            pid = parent.get(&pid).copied().unwrap_or(0);
        }
        false
    };
    ticks
        .iter()
        .filter(|(pid, _)| ours(**pid))
        .map(|(_, t)| t)
        .sum()
}

/// One reading of the machine's CPU: when (UNIX seconds), and the ticks so far of the
/// other processes' busy time and of steal.
#[derive(Debug, Clone, Copy)]
struct CpuReading {
    unix_s: f64,
    others: u64,
    steal: u64,
}

fn unix_now() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs_f64()
}

impl CpuReading {
    fn now() -> CpuReading {
        let (busy, steal) = machine_ticks();
        CpuReading {
            unix_s: unix_now(),
            others: busy.saturating_sub(our_ticks()),
            steal,
        }
    }
}

/// CPU used on the machine by processes other than this test and its descendants, and stolen
/// by the hypervisor, since [`Others::start`]: independent of anything a test measures.
pub struct Others {
    started: CpuReading,
}

impl Others {
    pub fn start() -> Others {
        Others {
            started: CpuReading::now(),
        }
    }

    /// Cores' worth of CPU other processes used since `start`.
    pub fn cores(&self) -> f64 {
        Self::between(&self.started, &CpuReading::now()).0
    }

    /// Cores other processes used and cores stolen, between two readings.
    fn between(a: &CpuReading, b: &CpuReading) -> (f64, f64) {
        let secs = (b.unix_s - a.unix_s).max(1e-3);
        (
            b.others.saturating_sub(a.others) as f64 / TICKS / secs,
            b.steal.saturating_sub(a.steal) as f64 / TICKS / secs,
        )
    }
}

/// What the machine did beside a measurement (see [`watch`]): signals that do not come from
/// the figures under test.
#[derive(Debug, Clone)]
pub struct Machine {
    /// Cores other processes used on average, cores stolen on average.
    pub others_cores: f64,
    pub steal_cores: f64,
    /// The probe thread's lateness (ms): p50, p99, max.
    pub probe_ms: [f64; 3],
    /// Each wake of the probe: when (UNIX seconds) and how late (ms).
    late: Vec<(f64, f64)>,
    /// The CPU readings, every 200 ms.
    cpu: Vec<CpuReading>,
}

impl Machine {
    /// Why the run was disturbed, when it was (see [`OTHERS_CORES`] and the rest).
    pub fn disturbed(&self) -> Option<String> {
        let mut why = Vec::new();
        if self.others_cores >= OTHERS_CORES {
            why.push(format!(
                "other processes used {:.2} cores",
                self.others_cores
            ));
        }
        if self.steal_cores >= STEAL_CORES {
            why.push(format!("{:.2} cores stolen", self.steal_cores));
        }
        if self.probe_ms[1] >= PROBE_P99_MS {
            why.push(format!(
                "the probe woke {:.2} ms late (p99)",
                self.probe_ms[1]
            ));
        }
        (!why.is_empty()).then(|| why.join(", "))
    }

    /// How disturbed: the largest of the signals over its threshold (under 1: quiet).
    fn score(&self) -> f64 {
        (self.others_cores / OTHERS_CORES)
            .max(self.steal_cores / STEAL_CORES)
            .max(self.probe_ms[1] / PROBE_P99_MS)
    }

    /// Over the span `from..to` (UNIX seconds): the cores other processes used, the cores
    /// stolen (from the readings inside it), and the probe's latest wake (ms).
    pub fn during(&self, from: f64, to: f64) -> (f64, f64, f64) {
        let inside: Vec<&CpuReading> = self
            .cpu
            .iter()
            .filter(|r| r.unix_s >= from - 0.1 && r.unix_s <= to + 0.1)
            .collect();
        let (others, steal) = match (inside.first(), inside.last()) {
            (Some(a), Some(b)) if b.unix_s > a.unix_s => Others::between(a, b),
            _ => (f64::NAN, f64::NAN),
        };
        let late = self
            .late
            .iter()
            .filter(|(t, _)| *t >= from && *t <= to)
            .map(|(_, l)| *l)
            .fold(0.0, f64::max);
        (others, steal, late)
    }

    /// The probe's lateness as the JSON `{p50, p99, max}` (ms).
    pub fn probe_json(&self) -> serde_json::Value {
        let [p50, p99, max] = self.probe_ms;
        serde_json::json!({ "p50": p50, "p99": p99, "max": max })
    }
}

impl std::fmt::Display for Machine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "machine: others {:.2} cores, steal {:.2} cores, probe late p50 {:.3} p99 {:.3} \
             max {:.3} ms",
            self.others_cores,
            self.steal_cores,
            self.probe_ms[0],
            self.probe_ms[1],
            self.probe_ms[2]
        )
    }
}

/// Runs `f` beside two threads that measure the machine, not `f`: a probe that does nothing
/// but wake on a schedule (every 0.5 ms, absolute deadlines, as an open loop sends) and
/// records how late it woke, and a reader of /proc every 200 ms (other processes' CPU, steal).
/// A virtual machine whose host pauses it for tens of milliseconds now and then (this one
/// does, with nothing else running) makes every thread late, respload's and the probe alike:
/// the probe's p99 is the part of a send-lag p99 no pacing can remove.
pub fn watch<T>(f: impl FnOnce() -> T) -> (T, Machine) {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::time::Instant;
    let stop = Arc::new(AtomicBool::new(false));
    let probe = {
        let stop = stop.clone();
        std::thread::spawn(move || {
            let (start, unix0, period) = (Instant::now(), unix_now(), Duration::from_micros(500));
            let mut late = Vec::with_capacity(40_000);
            let mut due = start + period;
            while !stop.load(Ordering::Relaxed) {
                let now = Instant::now();
                if now < due {
                    std::thread::sleep(due - now);
                }
                let woke = Instant::now();
                late.push((
                    unix0 + woke.duration_since(start).as_secs_f64(),
                    woke.duration_since(due).as_secs_f64() * 1000.0,
                ));
                due += period;
            }
            late
        })
    };
    let reader = {
        let stop = stop.clone();
        std::thread::spawn(move || {
            let mut cpu = vec![CpuReading::now()];
            while !stop.load(Ordering::Relaxed) {
                std::thread::sleep(Duration::from_millis(200));
                cpu.push(CpuReading::now());
            }
            cpu
        })
    };
    let out = f();
    stop.store(true, Ordering::Relaxed);
    let late = probe.join().unwrap();
    let cpu = reader.join().unwrap();
    assert!(late.len() > 10, "the probe woke {} times", late.len());
    let mut sorted: Vec<f64> = late.iter().map(|(_, l)| *l).collect();
    sorted.sort_by(f64::total_cmp);
    let at = |q: f64| sorted[((sorted.len() - 1) as f64 * q) as usize];
    let (others_cores, steal_cores) = Others::between(&cpu[0], cpu.last().unwrap());
    let machine = Machine {
        others_cores,
        steal_cores,
        probe_ms: [at(0.5), at(0.99), at(1.0)],
        late,
        cpu,
    };
    (out, machine)
}

/// A measurement judged: the run, what the machine did during it, and every run's figures.
pub struct Measured<T> {
    pub run: T,
    pub machine: Machine,
    pub runs: Vec<String>,
}

/// [`measured_unless`] with no disturbance of the test's own.
pub fn measured<T>(measure: impl FnMut() -> (T, String)) -> Measured<T> {
    measured_unless(measure, |_, _| None)
}

/// Runs `measure` (which returns the run and its figures for the messages) under [`watch`],
/// and judges the first run during which the machine was not disturbed: a run is measured
/// again, up to [`MEASURED_RUNS`] runs, only when a signal independent of its figures says
/// the machine was disturbed ([`Machine::disturbed`], or `disturbed`, a test's own reading
/// of the machine, such as too few quiet seconds), with the reason printed. Never because a
/// figure is out of bounds: a client that fails half its runs fails half the time. When
/// every run was disturbed, the least disturbed is judged.
pub fn measured_unless<T>(
    mut measure: impl FnMut() -> (T, String),
    disturbed: impl Fn(&T, &Machine) -> Option<String>,
) -> Measured<T> {
    let mut runs = Vec::new();
    let mut best: Option<(f64, T, Machine)> = None;
    loop {
        let ((run, figures), machine) = watch(&mut measure);
        let own = disturbed(&run, &machine);
        // A test's own reason counts as far over the bounds.
        let score = machine.score().max(if own.is_some() { 2.0 } else { 0.0 });
        let why = [machine.disturbed(), own]
            .into_iter()
            .flatten()
            .collect::<Vec<_>>();
        runs.push(format!("{figures}; {machine}"));
        if why.is_empty() {
            return Measured { run, machine, runs };
        }
        let why = why.join("; ");
        eprintln!(
            "run {} disturbed ({why}): {}",
            runs.len(),
            runs.last().unwrap()
        );
        if best.as_ref().is_none_or(|(s, ..)| score < *s) {
            best = Some((score, run, machine));
        }
        if runs.len() == MEASURED_RUNS {
            let (_, run, machine) = best.unwrap();
            eprintln!("every run disturbed: the least disturbed is judged");
            return Measured { run, machine, runs };
        }
    }
}

/// The server's `keyspace_hits` and `keyspace_misses` (INFO stats): every read of a key that
/// found it, and every one that did not, as the server counted them.
pub fn keyspace(server: &Server) -> (u64, u64) {
    let field = |name: &str| -> u64 {
        let v = server.info(name);
        v.parse()
            .unwrap_or_else(|_| panic!("INFO {name} is {v:?}, not a count"))
    };
    (field("keyspace_hits"), field("keyspace_misses"))
}

/// Start `spec` (with `client_name` "victim" or any), kill every client connection of
/// `server` 1.2 s in (at least 4 must have been open), and return the finished run's report
/// (`spec` runs 3 s or more: traffic must go on after the kill).
pub fn run_with_a_kill(server: &Server, spec: serde_json::Value) -> respload::Report {
    let runner = respload::Runner::start(workload(spec)).unwrap();
    std::thread::sleep(Duration::from_millis(1200));
    let killed: u64 = server
        .cli(&["CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes"])
        .parse()
        .unwrap();
    assert!(killed >= 4, "killed {killed}");
    let report = runner.wait().unwrap();
    assert!(!report.interrupted);
    assert!(report.client.reconnects >= 4, "{:?}", report.client);
    // Traffic went on after the kill (a run of 3 s or more).
    let late: u64 = report
        .timeline
        .iter()
        .filter(|r| r.t > 2.0)
        .map(|r| r.ops)
        .sum();
    assert!(late > 100, "{:?}", report.timeline);
    report
}

/// Start `spec`, wait for its first snapshot (it must show traffic), run `meanwhile`, then
/// stop it: the report must come within a second, partial and marked interrupted.
pub fn stop_after_a_snapshot(
    spec: serde_json::Value,
    meanwhile: impl FnOnce(),
) -> respload::Report {
    let runner = respload::Runner::start(workload(spec)).unwrap();
    let first = runner
        .next_snapshot(Duration::from_secs(5))
        .expect("a snapshot each second");
    assert!(first.row.ops_per_sec > 0.0);
    meanwhile();
    let asked = std::time::Instant::now();
    let report = runner.stop().unwrap();
    assert!(
        asked.elapsed() < Duration::from_secs(1),
        "{:?}",
        asked.elapsed()
    );
    assert!(report.interrupted && report.phases[0].interrupted);
    assert!(report.totals.ops > 0);
    report
}
