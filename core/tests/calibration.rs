//! Calibration against a server whose service time is known: a Lua script that spins on
//! `TIME` for N microseconds inside EVALSHA. Closed-loop latency is that time plus one round
//! trip; an open loop at half capacity has the mean latency of an M/G/1 queue with its own
//! measured service times; above
//! capacity the server's rate is what is achieved and the rest is counted as unsent;
//! precise and spin pacing send an idle server's requests on time where the coarse timer
//! does not, and Poisson sends on time pass the report's goodness-of-fit check of their
//! arrivals where the coarse timer's fail it.

mod common;

use common::{measured, measured_unless, workload, Measured, Server};
use respload::{run, Report};
use serde_json::{json, Value};

/// Spin until `ARGV[1]` microseconds of wall-clock time have passed since the script began;
/// returns the number of `TIME` calls after the first. A script may call `TIME` (Redis 5+
/// replicates effects, not scripts).
const SPIN: &str = "local s = redis.call('TIME') \
    local t0 = tonumber(s[1]) * 1000000 + tonumber(s[2]) \
    local n = tonumber(ARGV[1]) \
    local k = 0 \
    repeat \
      local t = redis.call('TIME') \
      k = k + 1 \
      if tonumber(t[1]) * 1000000 + tonumber(t[2]) - t0 >= n then return k end \
    until false";

/// A server with the spin script loaded; its SHA1.
fn spin_server() -> (Server, String) {
    let server = Server::start(&[]);
    let sha = server.cli(&["SCRIPT", "LOAD", SPIN]);
    assert_eq!(sha.len(), 40, "SCRIPT LOAD answered {sha:?}");
    // The script runs, and takes at least what it is asked to.
    let started = std::time::Instant::now();
    let k: u64 = server
        .cli(&["EVALSHA", &sha, "0", "20000"])
        .parse()
        .unwrap();
    assert!(started.elapsed().as_micros() >= 20_000 && k > 0);
    (server, sha)
}

/// The template of one request that keeps the server busy for `us` microseconds.
fn spin(sha: &str, us: u32) -> String {
    format!("EVALSHA {sha} 0 {us}")
}

/// How long the server itself took per call of one command (the time inside the command,
/// without reading the request and writing the reply), from INFO commandstats and
/// latencystats since the last `CONFIG RESETSTAT`.
#[derive(Debug)]
struct ServerTime {
    calls: u64,
    /// Exact mean (us).
    mean_us: f64,
    /// Median (us), within Redis's histogram precision (under 1%).
    p50_us: f64,
}

impl ServerTime {
    /// Reset the server's statistics.
    fn reset(server: &Server) {
        assert_eq!(server.cli(&["CONFIG", "RESETSTAT"]), "OK");
    }

    fn read(server: &Server, command: &str) -> ServerTime {
        let find = |section: &str, prefix: &str| -> String {
            let info = server.cli(&["INFO", section]);
            info.lines()
                .find_map(|l| l.strip_prefix(prefix))
                .unwrap_or_else(|| panic!("no {prefix} in {info}"))
                .to_string()
        };
        // `name=value,name=value`
        let field = |line: &str, name: &str| -> f64 {
            line.split(',')
                .find_map(|kv| kv.strip_prefix(name)?.strip_prefix('='))
                .unwrap_or_else(|| panic!("no {name} in {line}"))
                .parse()
                .unwrap()
        };
        let stats = find("commandstats", &format!("cmdstat_{command}:"));
        let latency = find(
            "latencystats",
            &format!("latency_percentiles_usec_{command}:"),
        );
        ServerTime {
            calls: field(&stats, "calls") as u64,
            mean_us: field(&stats, "usec_per_call"),
            p50_us: field(&latency, "p50"),
        }
    }
}

/// The machine's CPU time (all CPUs, clock ticks) since boot, and the idle part of it, from
/// /proc/stat (zeros elsewhere than Linux).
fn cpu_ticks() -> (u64, u64) {
    let cpu = common::proc_stat_cpu();
    // idle and iowait
    let idle = cpu.get(3).copied().unwrap_or(0) + cpu.get(4).copied().unwrap_or(0);
    (cpu.iter().sum(), idle)
}

/// One calibration at a time, after the machine has been quiet for a second (or 30 s have
/// passed): a spinning server takes a core, and timing figures need the other one.
fn exclusive() -> std::sync::MutexGuard<'static, ()> {
    let guard = common::one_at_a_time();
    // Fraction of all CPUs busy over 500 ms.
    let busy = || -> f64 {
        let (t0, i0) = cpu_ticks();
        std::thread::sleep(std::time::Duration::from_millis(500));
        let (t1, i1) = cpu_ticks();
        match t1 > t0 {
            true => 1.0 - (i1 - i0) as f64 / (t1 - t0) as f64,
            false => 0.0,
        }
    };
    let started = std::time::Instant::now();
    let mut quiet = 0;
    while quiet < 2 && started.elapsed().as_secs() < 30 {
        quiet = if busy() < 0.25 { quiet + 1 } else { 0 };
    }
    eprintln!(
        "calibration: waited {:.1} s for a quiet machine (quiet: {})",
        started.elapsed().as_secs_f64(),
        quiet == 2
    );
    guard
}

/// The round trip of a request that costs the server next to nothing: the p50 latency
/// (ms) of a closed loop of PINGs on one connection, as respload measures it.
fn ping_round_trip_ms(server: &Server) -> f64 {
    let report = run(&workload(json!({
        "target": { "url": server.url() },
        "load": { "connections": 1, "threads": 1, "requests": 20000 },
        "commands": [{ "name": "ping" }],
        "observe": { "info": false },
    })))
    .unwrap();
    assert_eq!((report.totals.ops, report.totals.errors), (20000, 0));
    let rtt = report.totals.latency_ms.p50;
    assert!(rtt > 0.0 && rtt < 1.0, "PING round trip {rtt} ms");
    rtt
}

/// The p50 (ms) of `n` back-to-back `EVALSHA sha 0 us` from the plainest client there is:
/// one blocking socket, the request written whole, the integer reply read whole, each timed
/// with `Instant`. Whatever this machine adds to a round trip whose client sleeps through
/// the service time (a core that idled for 2 ms wakes later than one answered at once) is in
/// it, as it is in respload's figure.
fn plain_client_p50_ms(server: &Server, sha: &str, us: u32, n: usize) -> f64 {
    use std::io::{Read, Write};
    let mut stream = std::net::TcpStream::connect(("127.0.0.1", server.port)).unwrap();
    stream.set_nodelay(true).unwrap();
    let mut request = Vec::new();
    let us = us.to_string();
    respload::resp::encode::encode_command(
        &mut request,
        &[b"EVALSHA", sha.as_bytes(), b"0", us.as_bytes()],
    );
    let mut took = Vec::with_capacity(n);
    let mut buf = [0u8; 64];
    for _ in 0..n {
        let started = std::time::Instant::now();
        stream.write_all(&request).unwrap();
        let mut got = 0;
        while !(got >= 3 && buf[..got].ends_with(b"\r\n")) {
            let k = stream.read(&mut buf[got..]).unwrap();
            assert!(k > 0, "the server closed the connection");
            got += k;
        }
        took.push(started.elapsed().as_secs_f64() * 1000.0);
        assert_eq!(buf[0], b':', "{:?}", String::from_utf8_lossy(&buf[..got]));
    }
    took.sort_by(f64::total_cmp);
    took[n / 2]
}

fn as_json(report: &Report) -> Value {
    serde_json::to_value(report).unwrap()
}

/// The number at `pointer` of the report's JSON, panicking with the path when absent.
fn num(v: &Value, pointer: &str) -> f64 {
    v.pointer(pointer)
        .and_then(Value::as_f64)
        .unwrap_or_else(|| panic!("no number at {pointer}"))
}

/// The validity check named `name` of the report's JSON (panics when absent).
fn check<'a>(v: &'a Value, name: &str) -> &'a Value {
    let checks = v
        .pointer("/validity/checks")
        .and_then(Value::as_array)
        .unwrap_or_else(|| panic!("no validity.checks in the report"));
    checks
        .iter()
        .find(|c| c["check"] == name)
        .unwrap_or_else(|| panic!("no {name:?} check in {checks:?}"))
}

#[test]
fn closed_loop_latency_is_the_service_time_plus_one_round_trip() {
    let _one = exclusive();
    let (server, sha) = spin_server();
    // Measured again only when the machine was disturbed during the run (see `measured`): on
    // this shared machine a busy second moves a p50 by more than 3%. Every run's figures are
    // printed.
    let Measured {
        run: (report, rtt, st, plain),
        runs,
        ..
    } = measured(|| {
        let rtt = ping_round_trip_ms(&server);
        ServerTime::reset(&server);
        let report = run(&workload(json!({
            "target": { "url": server.url() },
            "load": { "connections": 1, "threads": 1, "duration": "3s" },
            "commands": [{ "template": spin(&sha, 2000) }],
            "observe": { "info": false },
        })))
        .unwrap();
        let st = ServerTime::read(&server, "evalsha");
        let plain = plain_client_p50_ms(&server, &sha, 2000, 500);
        let t = &report.totals;
        let figures = format!(
            "p50 {:.4} ms, mean {:.4} ms; expected {:.4} ms (PING p50 {rtt:.4} ms); a plain \
             blocking client's p50 {plain:.4} ms; the server's own p50 {:.1} us, mean {:.1} us \
             over {} calls; {} ops",
            t.latency_ms.p50,
            t.latency_ms.mean,
            2.0 + rtt,
            st.p50_us,
            st.mean_us,
            st.calls,
            t.ops,
        );
        eprintln!("closed loop, 2 ms: {figures}");
        ((report, rtt, st, plain), figures)
    });
    let t = &report.totals;
    let figures = format!("every run: {runs:#?}");
    assert_eq!(t.errors, 0, "{:?}", t.errors_by_kind);
    // Each request is one call of the script.
    assert_eq!(st.calls, t.ops, "{figures}");
    // Back to back: about 3 s / 2.05 ms requests.
    assert!(t.ops > 1200, "{figures}");
    // The spin takes what it is asked to (a machine too busy for these figures fails here).
    assert!((st.p50_us / 2000.0 - 1.0).abs() < 0.02, "{figures}");
    // Within 3% of 2 ms plus a PING's round trip; or, where a client asleep for 2 ms takes
    // longer to wake to the reply than one answered at once (60 to 110 us more on some
    // virtual machines, for any client), within 3% of what the plainest client measures for
    // the same request on this machine: respload adds nothing to what the machine costs.
    // That cost is bounded (10%), so a machine too slow for these figures still fails. And
    // against what the server says it took: more (a round trip), not much more.
    let near = |figure: f64, reference: f64| (figure / reference - 1.0).abs() < 0.03;
    let (p50, expected, served) = (t.latency_ms.p50, 2.0 + rtt, st.p50_us / 1000.0 + rtt);
    assert!(
        plain > st.p50_us / 1000.0 && plain < expected * 1.1,
        "{figures}"
    );
    assert!(near(p50, expected) || near(p50, plain), "{figures}");
    assert!(p50 > st.p50_us / 1000.0, "{figures}");
    assert!(near(p50, served) || near(p50, plain), "{figures}");
    // Nothing is paced in a closed loop: no service time apart from latency, no send lag,
    // nothing unsent.
    let t = &report.totals;
    assert!(t.service_ms.is_none());
    let v = as_json(&report);
    assert!(
        v.pointer("/totals/send_lag_ms").is_none(),
        "{}",
        v["totals"]
    );
    assert!(v.pointer("/totals/send_lag_histogram").is_none());
    assert!(v.get("unsent").is_none(), "{}", v["unsent"]);
    assert!(v.pointer("/timeline/0/send_lag_ms").is_none());
}

#[test]
fn open_loop_latency_at_half_capacity_is_that_of_an_mg1_queue() {
    let _one = exclusive();
    let (server, sha) = spin_server();
    // Poisson arrivals at 500/s, each request 1 ms of the server's time: rho = 0.5. One
    // connection with one request in flight, so the queue is the client's: a request due
    // while the one before is unanswered waits to be written, and its latency counts from
    // when it was due. The server serves one request at a time in arrival order: an M/G/1
    // queue whose service time is each request's own, from its write to its reply (the spin
    // plus a round trip, and now and then a pause of this shared machine that stops the
    // server for a few ms mid-request). Queueing theory gives its mean latency from the
    // service times' first two moments (Pollaczek-Khinchine), and the run measures both, so
    // the whole run is judged, pauses and all: a second with a pause is not left out, its
    // long service time is in the expectation. (Not with many connections: redis-server runs
    // every request that arrived together before writing any reply, so a request queued
    // behind another is answered when the whole batch is done, not when it is.)
    let rate = 500.0;
    // Measured again only when the machine was disturbed during the run (see `measured`), or
    // when the probe woke later than in a quiet run here (`MG1_PROBE_P99_MS`).
    let Measured {
        run: (report, st),
        machine,
        runs,
    } = measured_unless(
        || {
            ServerTime::reset(&server);
            let report = run(&workload(json!({
                "seed": 24,
                "target": { "url": server.url() },
                "load": { "connections": 1, "threads": 1, "rate": rate, "arrivals": "poisson",
                          "warmup": "1s", "duration": "12s" },
                "commands": [{ "template": spin(&sha, 1000) }],
                "observe": { "info": false },
            })))
            .unwrap();
            let st = ServerTime::read(&server, "evalsha");
            let figures = format!(
                "server p50 {:.1} us, mean {:.1} us; {:.1}/s",
                st.p50_us, st.mean_us, report.totals.ops_per_sec,
            );
            ((report, st), figures)
        },
        |_, machine| {
            (machine.probe_ms[1] >= MG1_PROBE_P99_MS).then(|| {
                format!(
                    "the probe woke {:.2} ms late (p99): over the M/G/1 run's {MG1_PROBE_P99_MS}",
                    machine.probe_ms[1]
                )
            })
        },
    );
    let t = &report.totals;
    let v = as_json(&report);
    let svc = t
        .service_ms
        .clone()
        .expect("open loop reports service time");
    let expected = mg1_latency_ms(rate, svc.mean, svc.stddev);
    let lag = num(&v, "/totals/send_lag_ms/mean");
    let client_lag = &v["client_lag_ms"];
    let figures = format!(
        "latency mean {:.4} ms, M/G/1 expects {expected:.4} ({:+.1}%) for service mean {:.4} \
         (stddev {:.4}, max {:.4}); latency p50 {:.4}, p99 {:.4}; send lag mean {lag:.4}, the \
         client's own {client_lag}; the server's own p50 {:.1} us, mean {:.1} us; {} ops at \
         {:.1}/s; {machine}; every run: {runs:?}",
        t.latency_ms.mean,
        (t.latency_ms.mean / expected - 1.0) * 100.0,
        svc.mean,
        svc.stddev,
        svc.max,
        t.latency_ms.p50,
        t.latency_ms.p99,
        st.p50_us,
        st.mean_us,
        t.ops,
        t.ops_per_sec,
    );
    eprintln!("M/G/1 at rho 0.5: {figures}; validity {}", v["validity"]);
    assert_eq!(t.errors, 0, "{:?}", t.errors_by_kind);
    assert!((t.ops_per_sec / rate - 1.0).abs() < 0.05, "{figures}");
    // The spin takes what it is asked to (a machine too busy for these figures fails here),
    // and the service time respload sees is that plus a round trip.
    assert!((st.p50_us / 1000.0 - 1.0).abs() < 0.03, "{figures}");
    assert!(
        svc.mean > st.p50_us / 1000.0 && svc.mean < st.p50_us / 1000.0 + 0.2,
        "{figures}"
    );
    // The mean latency from intended send times is the M/G/1 one, within 10% on a quiet
    // machine (+0.8% to +3.7% in eleven runs here). On a disturbed one (every run was) the
    // claim is 20%: a CI run with the probe's p99 at 0.72 ms measured +11.4%. Either way a
    // client that counted from its actual writes (coordinated omission) would measure the
    // service time alone, a third less, and fail.
    let quiet = machine.disturbed().is_none() && machine.probe_ms[1] < MG1_PROBE_P99_MS;
    let bound = if quiet { 0.10 } else { 0.20 };
    assert!(
        (t.latency_ms.mean / expected - 1.0).abs() < bound,
        "within {bound} (quiet: {quiet}): {figures}"
    );
    // Each request's latency is its send lag plus its service time.
    assert!(
        (t.latency_ms.mean / (lag + svc.mean) - 1.0).abs() < 0.01,
        "{figures}"
    );
    // Poisson arrivals are checked as such, and pass: the gaps between sends are exponential.
    let arrivals = check(&v, "arrivals");
    assert_eq!(arrivals["limit"], 1.957, "{arrivals}");
    assert_eq!(arrivals["phase"], "main", "{arrivals}");
    assert_eq!(arrivals["passed"], true, "{arrivals}: {figures}");
    assert!(num(arrivals, "/value") <= 1.957, "{arrivals}: {figures}");
}

/// The probe's p99 lateness (ms) at or over which the M/G/1 run is measured again: quiet
/// runs here have 0.15 to 0.45 ms; one of 0.72 ms measured 11% over M/G/1.
const MG1_PROBE_P99_MS: f64 = 0.5;

/// M/G/1's mean latency (ms) at `rate` requests a second for service times of that mean and
/// standard deviation (ms), by Pollaczek-Khinchine: W = S + lambda E[S^2] / (2 (1 - rho)),
/// rho = lambda S (1.5 ms for a constant 1 ms at 500/s).
fn mg1_latency_ms(rate: f64, mean: f64, stddev: f64) -> f64 {
    let lambda = rate / 1000.0;
    let rho = lambda * mean;
    mean + lambda * (stddev * stddev + mean * mean) / (2.0 * (1.0 - rho))
}

#[test]
fn above_capacity_the_server_rate_is_achieved_and_the_rest_is_unsent() {
    let _one = exclusive();
    let (server, sha) = spin_server();
    // 300/s to a server that serves 200/s. Eight requests in flight keep the server busy all
    // along (it never waits for the client); the third of the requests it cannot take pile
    // up in the client, due and unsent.
    let (rate, secs) = (300.0, 6.0);
    // Measured again when the machine was disturbed during the run (see `measured`).
    let Measured {
        run: (report, st),
        machine,
        runs,
    } = measured(|| {
        ServerTime::reset(&server);
        let report = run(&workload(json!({
            "target": { "url": server.url() },
            "load": { "connections": 8, "threads": 1, "rate": rate, "duration": "6s" },
            "commands": [{ "template": spin(&sha, 5000) }],
            "observe": { "info": false },
        })))
        .unwrap();
        let st = ServerTime::read(&server, "evalsha");
        let figures = format!(
            "{:.2}/s, server mean {:.1} us, unsent {}",
            report.totals.ops_per_sec,
            st.mean_us,
            as_json(&report).get("unsent").unwrap_or(&Value::Null)
        );
        ((report, st), figures)
    });
    let capacity = 1e6 / st.mean_us;
    let t = &report.totals;
    let v = as_json(&report);
    let unsent = v.get("unsent").cloned().unwrap_or(Value::Null);
    let figures = format!(
        "{} ops at {:.2}/s over {:.3} s; server p50 {:.1} us, mean {:.1} us ({capacity:.1}/s) \
         over {} calls; {machine}; unsent {unsent}; every run: {runs:?}",
        t.ops, t.ops_per_sec, report.duration_s, st.p50_us, st.mean_us, st.calls,
    );
    eprintln!("above capacity: {figures}; validity {}", v["validity"]);
    assert_eq!(t.errors, 0, "{:?}", t.errors_by_kind);
    assert_eq!(st.calls, t.ops, "{figures}");
    // The server was never left waiting: the rate achieved is the one it can serve...
    assert!((t.ops_per_sec / capacity - 1.0).abs() < 0.03, "{figures}");
    // ... which is 200/s (a machine too busy for these figures fails here).
    assert!((t.ops_per_sec / 200.0 - 1.0).abs() < 0.10, "{figures}");

    assert!(unsent.is_object(), "no unsent: {figures}");
    assert_eq!(v["phases"][0]["unsent"], unsent);
    let requests = num(&unsent, "/requests");
    let waited_max = num(&unsent, "/waited_ms/max");
    assert!(requests > 0.0 && waited_max > 0.0, "{figures}");
    // Every request due in the measured time was either answered or is unsent.
    let due = rate * secs;
    assert!(
        ((t.ops as f64 + requests) / due - 1.0).abs() < 0.03,
        "{} + {requests} vs {due}: {figures}",
        t.ops
    );
    // Each connection falls behind its schedule at a steady pace: at the end, the requests
    // due in the last (1 - capacity / rate) of the run are unsent, the oldest due that long
    // ago, the newest just due.
    let behind = 1.0 - capacity / rate;
    assert!((requests / (due * behind) - 1.0).abs() < 0.15, "{figures}");
    assert!(
        (waited_max / (secs * behind * 1000.0) - 1.0).abs() < 0.2,
        "{figures}"
    );
    assert!(num(&unsent, "/waited_ms/min") < 50.0, "{figures}");
    // Requests waited for the server, not for the client: seconds of send lag, none of it
    // the client's own.
    let (send_lag, client_lag) = (
        num(&v, "/totals/send_lag_ms/p99"),
        num(&v, "/client_lag_ms/p99"),
    );
    assert!(send_lag > 1000.0, "send lag p99 {send_lag}: {figures}");
    assert!(
        client_lag < 1.0,
        "client lag {}: {figures}",
        v["client_lag_ms"]
    );
    assert_eq!(check(&v, "client_lag")["passed"], true);
    // A run that did not achieve its rate is not trusted, and says so.
    let rate_check = check(&v, "rate");
    assert_eq!(rate_check["passed"], false, "{rate_check}");
    assert!(num(rate_check, "/value").abs() > 0.2, "{rate_check}");
    assert_eq!(v["validity"]["trusted"], false);
    assert_eq!(v["phases"][0]["validity"]["trusted"], false);
}

/// GETs to an idle server at 10,000/s over 10 connections for 4 s, paced by `pacing`.
/// The report's JSON, with `others_cores` added: the cores other processes used meanwhile.
fn idle_open_loop(server: &Server, pacing: Option<&str>) -> Value {
    let mut load = json!({ "connections": 10, "rate": 10000, "duration": "4s" });
    if let Some(p) = pacing {
        load["pacing"] = json!(p);
    }
    paced_run(json!({
        "target": { "url": server.url() },
        "load": load,
        "commands": [{ "name": "get" }],
        "observe": { "info": false },
    }))
}

/// `spec` run (GETs, no errors allowed): the report's JSON.
fn paced_run(spec: Value) -> Value {
    let report = run(&workload(spec)).unwrap();
    let t = &report.totals;
    assert_eq!(t.errors, 0, "{:?}", t.errors_by_kind);
    as_json(&report)
}

/// `paced` measured (see `measured`; `figure` gives a run's figures): the judged run's JSON,
/// with the lateness of the probe woken on a schedule beside it as `machine_lag_ms`
/// (`{p50, p99, max}`, ms; see `common::watch`), the cores other processes used as
/// `others_cores` and why the machine was disturbed (null: it was not) as
/// `machine_disturbed`; and every run's figures.
fn paced_measured(
    paced: impl Fn() -> Value,
    figure: impl Fn(&Value) -> String,
) -> (Value, Vec<String>) {
    let Measured {
        run: mut v,
        machine,
        runs,
    } = measured(|| {
        let v = paced();
        let figures = figure(&v);
        (v, figures)
    });
    v["others_cores"] = json!(machine.others_cores);
    v["machine_lag_ms"] = machine.probe_json();
    v["machine_disturbed"] = json!(machine.disturbed());
    (v, runs)
}

#[test]
fn precise_and_spin_pacing_send_on_time_where_the_coarse_timer_does_not() {
    let _one = exclusive();
    let server = Server::start(&[]);
    // Latency from the intended send time less service time from the write: the client's
    // own delay in sending.
    let gap = |v: &Value| num(v, "/totals/latency_ms/p50") - num(v, "/totals/service_ms/p50");
    let lag_p99 = |v: &Value| num(v, "/totals/send_lag_ms/p99");
    // On this shared 2-core machine another process busy for a second (a compiler, a
    // neighbour's test), or the host pausing the virtual machine (it does, for phases of
    // minutes, with nothing else running), delays every thread by milliseconds, and the
    // p99 of a 4 s run shows it. `common::watch` measures it: a thread that only wakes on a
    // schedule beside the run, and the CPU other processes used. A run during which the
    // machine was disturbed is measured again (at most five runs; see `measured`), never one
    // because it is out of bounds. The run judged is judged by the target when the machine
    // was quiet; when it was not (every run was disturbed: other processes' CPU, steal, or
    // the probe late), by what is left to the client: its own lateness (`client_lag_ms`,
    // not the wait for a connection whose server was held up) at most 0.5 ms over the bare
    // thread's. Every run's figures are in the message.
    let machine_p99 = |v: &Value| num(v, "/machine_lag_ms/p99");
    let own_p99 = |v: &Value| num(v, "/client_lag_ms/p99");
    let disturbed = |v: &Value| !v["machine_disturbed"].is_null();
    // The rate is achieved (a pause at the end leaves the requests due in it unsent).
    let rate_ok = |v: &Value| {
        let off = (num(v, "/totals/ops_per_sec") / 10000.0 - 1.0).abs();
        off < if disturbed(v) { 0.05 } else { 0.02 }
    };
    // What pacing decides is the client's own lateness, and that is judged: the whole send
    // lag's p99 also holds the waits for a connection whose server the machine held up (a
    // run quiet by every signal had a send-lag p99 of 1.29 ms, one second's 2.9 ms, while
    // the client's own p99 was 0.12 ms). It is printed, and its median is judged below.
    let within = |v: &Value| {
        rate_ok(v)
            && gap(v) < 0.2
            && (own_p99(v) < 0.5 || (disturbed(v) && own_p99(v) < machine_p99(v) + 0.5))
    };
    // A run's own figures (the machine's are added by `measured`).
    let run_figures = |v: &Value| {
        let rows: Vec<f64> = v["timeline"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|r| r["send_lag_ms"]["p99"].as_f64())
            .collect();
        format!(
            "{:.1}/s, lag p99 {:.4} ms (rows {rows:?}), the client's own p99 {:.4} ms, gap \
             {:.4} ms",
            num(v, "/totals/ops_per_sec"),
            lag_p99(v),
            own_p99(v),
            gap(v),
        )
    };
    let (precise, runs) = paced_measured(|| idle_open_loop(&server, None), run_figures);
    // `spin` (the last 50 us of each wait spent spinning) is held to the same bounds.
    let (spin, spin_runs) = paced_measured(|| idle_open_loop(&server, Some("spin")), run_figures);
    let (coarse, coarse_runs) =
        paced_measured(|| idle_open_loop(&server, Some("coarse")), run_figures);
    let figure = |v: &Value| {
        format!(
            "latency p50 {:.4} ms, service p50 {:.4} ms, send lag p50 {:.4} p99 {:.4} max \
             {:.4} ms, busy_max {}, other processes used {:.2} cores",
            num(v, "/totals/latency_ms/p50"),
            num(v, "/totals/service_ms/p50"),
            num(v, "/totals/send_lag_ms/p50"),
            num(v, "/totals/send_lag_ms/p99"),
            num(v, "/totals/send_lag_ms/max"),
            v["client"]["busy_max"],
            num(v, "/others_cores")
        )
    };
    let figures = format!(
        "precise: {}; spin: {}; coarse: {}; precise runs: {runs:?}; spin runs: {spin_runs:?}; \
         coarse runs: {coarse_runs:?}",
        figure(&precise),
        figure(&spin),
        figure(&coarse)
    );
    eprintln!("10,000/s idle: {figures}");
    eprintln!(
        "validity precise {}, spin {}, coarse {}",
        precise["validity"], spin["validity"], coarse["validity"]
    );
    // The target is a p99 under 0.1 ms; a shared 2-core machine is allowed more. Narrowed
    // where, in the run judged, other processes took `OTHERS_CORES` or more of the two (every
    // run was disturbed so): a worker thread that works or spins uses its time slice and is
    // preempted where the sleeping probe is woken first (seen: spin's own p99 0.95 ms beside
    // the probe's 0.16 ms with others at 0.54 cores, 1.7-3.1 ms beside 0.15-0.4 ms at
    // 1.1-1.3 cores; precise's up to 2.2 ms), so there the probe does not bound the client's
    // lateness, and only the rate and the gap are judged.
    let crowded = |v: &Value| num(v, "/others_cores") >= common::OTHERS_CORES;
    let judged = |v: &Value| match crowded(v) {
        false => within(v),
        true => rate_ok(v) && gap(v) < 0.2,
    };
    assert!(judged(&precise), "{figures}");
    // The same bounds hold for spin, whose runs ran as such. (Not that it beats precise on
    // this machine: over a dozen runs spin's median send lag was 0.6 to 25 us, precise's 12
    // to 29 us, and either was the lower.)
    assert!(judged(&spin), "{figures}");
    assert_eq!(spin["phases"][0]["workload"]["load"]["pacing"], "spin");
    assert_eq!(coarse["phases"][0]["workload"]["load"]["pacing"], "coarse");
    // tokio's 1 ms timer sends a request up to a tick late, a few hundred microseconds in
    // the median.
    assert!(gap(&coarse) > gap(&precise) + 0.2, "{figures}");
    assert!(
        num(&coarse, "/totals/send_lag_ms/p50") > num(&precise, "/totals/send_lag_ms/p50"),
        "{figures}"
    );
    assert!(rate_ok(&coarse), "{figures}");
    // The same figure per command, in the phase and in the timeline.
    for v in [&precise, &spin, &coarse] {
        assert_eq!(
            v["totals"]["send_lag_ms"],
            v["commands"]["GET"]["send_lag_ms"]
        );
        assert_eq!(
            v["totals"]["send_lag_ms"],
            v["phases"][0]["totals"]["send_lag_ms"]
        );
        assert!(v["totals"]["send_lag_histogram"].is_string());
        let rows = v["timeline"].as_array().unwrap();
        assert!(rows.len() >= 4, "{rows:?}");
        assert!(
            rows[..3]
                .iter()
                .all(|r| r["send_lag_ms"]["p99"].is_number()),
            "{rows:?}"
        );
        // The client kept up: at most the few requests due in the last moment before the
        // end are left unsent (unless the machine paused the server too: see `within`).
        if let Some(unsent) = v.get("unsent").filter(|_| !disturbed(v)) {
            let ops = num(v, "/totals/ops");
            assert!(num(unsent, "/requests") < ops / 1000.0, "{unsent}");
            assert!(num(unsent, "/waited_ms/max") < 10.0, "{unsent}");
        }
    }
    // The client's own lateness is part of the send lag. With an idle server and precise
    // pacing a request can nearly always be written when it is due: its send lag is the
    // client's. (Not with the coarse timer: a request sent a millisecond late holds the
    // connection's next one, due meanwhile, until its reply; that wait is not counted as
    // the client's.)
    for v in [&precise, &spin, &coarse] {
        let (own, all) = (&v["client_lag_ms"], &v["totals"]["send_lag_ms"]);
        assert!(
            num(own, "/p99") <= num(all, "/p99") * 1.001,
            "{own} vs {all}"
        );
        assert!(num(own, "/mean") <= num(all, "/mean"), "{own} vs {all}");
    }
    // When the machine paused the server, requests also waited for its replies (a run with
    // the probe's p99 at 8 ms had the whole send lag's p50 three times the client's own):
    // then only the order holds.
    let (own, all) = (&precise["client_lag_ms"], &precise["totals"]["send_lag_ms"]);
    if disturbed(&precise) {
        assert!(
            num(own, "/p50") <= num(all, "/p50") * 1.001,
            "{own} vs {all}"
        );
    } else {
        assert!(
            (num(own, "/p50") / num(all, "/p50") - 1.0).abs() < 0.1,
            "{own} vs {all}"
        );
    }
    // The client-lag check reports the p99 of the client's own lateness against max(10% of
    // latency p50, 0.05 ms).
    for v in [&precise, &spin, &coarse] {
        let c = check(v, "client_lag");
        let p99 = num(v, "/client_lag_ms/p99");
        let limit = (0.1 * num(v, "/totals/latency_ms/p50")).max(0.05);
        assert!(
            (num(c, "/value") - p99).abs() <= 0.01 * p99 + 1e-6,
            "{c} vs p99 {p99}"
        );
        assert!(
            (num(c, "/limit") - limit).abs() <= 1e-3 * limit,
            "{c} vs limit {limit}"
        );
        assert_eq!(c["passed"], num(c, "/value") <= num(c, "/limit"), "{c}");
        // Even arrivals are not tested for being Poisson.
        let checks = v["validity"]["checks"].as_array().unwrap();
        assert!(
            checks.iter().all(|c| c["check"] != "arrivals"),
            "{checks:?}"
        );
    }
}

/// GETs to an idle server as Poisson arrivals at 2,000/s over 16 connections (125/s each, a
/// mean gap of 8 ms) for 3 s, paced by `pacing`: the report's JSON, with the lateness of a
/// thread woken on a schedule beside the run as `machine_lag_ms` (see `with_probe`) and the
/// cores other processes used as `others_cores`.
///
/// Many connections, each at a low rate: a thread woken late writes each connection's
/// requests due meanwhile together (gaps of 0, the sign of bunched sends the test looks
/// for), and the fewer of them are due per connection, the fewer such gaps a busy machine
/// makes (while this one was busy compiling, 11 of 15 runs over 4 connections failed the
/// check, 2 of 8 over 8, 1 of 14 over 16).
fn poisson_open_loop(server: &Server, pacing: &str) -> Value {
    paced_run(json!({
        "seed": 24,
        "target": { "url": server.url() },
        "load": { "connections": 16, "rate": 2000, "arrivals": "poisson",
                  "pacing": pacing, "duration": "3s" },
        "commands": [{ "name": "get" }],
        "observe": { "info": false },
    }))
}

#[test]
fn poisson_sends_on_time_pass_the_arrivals_check_and_the_coarse_timers_fail_it() {
    let _one = exclusive();
    let server = Server::start(&[]);
    let figure = |v: &Value| {
        format!(
            "A*2 {:.3}, {:.1}/s, the client's own lag p99 {:.4} ms, the probe's p99 {:.4} ms, \
             others' cores {:.2}",
            num(check(v, "arrivals"), "/value"),
            num(v, "/totals/ops_per_sec"),
            num(v, "/client_lag_ms/p99"),
            num(v, "/machine_lag_ms/p99"),
            num(v, "/others_cores")
        )
    };
    // A busy machine wakes the client late now and then, which bunches its sends as the
    // coarse timer does: a run during which the machine was disturbed is measured again
    // (see `measured`), whatever its verdict. The coarse timer fails however quiet the
    // machine (a busy one bunches sends more).
    let run_figures = |v: &Value| {
        format!(
            "A*2 {:.3}, {:.1}/s, the client's own lag p99 {:.4} ms",
            num(check(v, "arrivals"), "/value"),
            num(v, "/totals/ops_per_sec"),
            num(v, "/client_lag_ms/p99"),
        )
    };
    let (precise, runs) = paced_measured(|| poisson_open_loop(&server, "precise"), run_figures);
    let (coarse, coarse_runs) =
        paced_measured(|| poisson_open_loop(&server, "coarse"), run_figures);
    let figures = format!(
        "precise: {}; coarse: {}; every precise run: {runs:?}; every coarse run: {coarse_runs:?}",
        figure(&precise),
        figure(&coarse)
    );
    eprintln!("Poisson at 2,000/s idle: {figures}");
    let (p, c) = (check(&precise, "arrivals"), check(&coarse, "arrivals"));
    // Each a full sample of the gaps (6,000 sends, 2,000 kept), judged at the 1% level.
    for a in [p, c] {
        assert_eq!(a["limit"], 1.957, "{a}");
        assert_eq!(a["phase"], "main", "{a}");
        let detail = a["detail"].as_str().unwrap();
        assert!(detail.contains(" of 2000 gaps between sends"), "{detail}");
    }
    // Sent on time, the gaps are exponential.
    assert_eq!(p["passed"], true, "{figures}");
    assert!(num(p, "/value") <= 1.957, "{figures}");
    assert!(
        p["detail"]
            .as_str()
            .unwrap()
            .ends_with("consistent with Poisson arrivals"),
        "{figures}"
    );
    // On tokio's 1 ms timer they are not: requests due in the same tick go out together,
    // and none goes out between ticks. Not a near miss: 27 to 49 seen.
    assert_eq!(c["passed"], false, "{figures}");
    assert!(num(c, "/value") > 5.0 * 1.957, "{figures}");
    assert!(
        c["detail"]
            .as_str()
            .unwrap()
            .ends_with("the sends were not a Poisson process"),
        "{figures}"
    );
    // Both sent what their schedule asked: the coarse run fails on how its sends were
    // spaced, not how many there were. It is not trusted, and says why.
    for v in [&precise, &coarse] {
        assert_eq!(check(v, "rate")["passed"], true, "{figures}");
    }
    assert_eq!(coarse["validity"]["trusted"], false, "{figures}");
    assert_eq!(coarse["phases"][0]["validity"]["trusted"], false);
    let failed: Vec<&Value> = coarse["validity"]["checks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["passed"] == false)
        .collect();
    assert!(
        failed.iter().any(|c| c["check"] == "arrivals"),
        "{failed:?}"
    );
}
