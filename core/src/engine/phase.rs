//! Running one phase: start the workers, wait until every connection is up, give the
//! go-ahead, merge their interval recorders into the timeline and the totals.

use super::abort::{AbortCheck, Stopped};
use super::keys::{parallel_slice, SequenceCounters};
use super::worker::{run_worker, Gauges, Go, WorkerMsg, WorkerSetup, INTERVAL};
use crate::observe::{join_server_cpu, DrillOutcome, DrillPlan, Drills, Metrics, Sampler};
use crate::plan::Phase;
use crate::report::Snapshot;
use crate::report::{
    Availability, ClientStats, EventReport, PhaseReport, RampStep, TimelineRow, Unsent, Validity,
};
use crate::report::{NodeServer, ServerLoad, ServerSample};
use crate::spec::{check_not_late, unix_now, Load};
use crate::stats::{
    check_phase, stats_of, summarize, timeline_row, CommandRecorder, GapSample, GapTracker, Gaps,
    Recorder,
};
use crate::{Error, Result};
use std::collections::{BTreeMap, VecDeque};
use std::sync::atomic::{AtomicBool, AtomicU64};
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Instant;

/// A finished phase: its report and its merged recorder (for run totals).
pub struct PhaseOutcome {
    /// The phase's report.
    pub report: PhaseReport,
    /// Everything measured, merged.
    pub recorder: Recorder,
    /// How late its first request went out after the `start_at` it was given (ms).
    pub start_skew_ms: Option<f64>,
    /// The `abort_on_fail` threshold that stopped the phase (and the run), if one did.
    pub stopped: Option<Stopped>,
}

/// How a phase starts and what it checks while it runs.
#[derive(Default)]
pub struct PhaseOptions {
    /// Send the first request at this instant (UNIX seconds), the connections opened before.
    pub start_at: Option<f64>,
    /// Start at `start_at` even when it passed by more than a second (an instant the
    /// barrier set, not the user: a host slow to open its connections starts late, its
    /// skew said, rather than failing the others).
    pub late_start_ok: bool,
    /// Thresholds that stop the run when crossed.
    pub abort: Option<AbortCheck>,
    /// Where the phase publishes its results so far each second (`observe.prometheus`).
    pub metrics: Option<Arc<Metrics>>,
    /// Where the phase hands each timeline row as it is emitted (`observe.dashboard`).
    pub dashboard: Option<Arc<crate::observe::Live>>,
    /// Where a measured phase hands each timeline row and its bytes (`observe.statsd`).
    pub statsd: Option<crate::observe::StatsdFeed>,
}

/// Split `total` into `parts` shares proportional to `weights`, summing exactly to `total`.
fn split(total: u64, weights: &[usize]) -> Vec<u64> {
    let sum: u128 = weights.iter().map(|&w| w as u128).sum();
    let mut shares: Vec<u64> = weights
        .iter()
        .map(|&w| (total as u128 * w as u128 / sum.max(1)) as u64)
        .collect();
    let mut rest = total - shares.iter().sum::<u64>();
    for s in shares.iter_mut() {
        if rest == 0 {
            break;
        }
        *s += 1;
        rest -= 1;
    }
    shares
}

/// Timeline rows a phase with a set duration will make, reserved up front so that a long
/// run's series grow without doubling and copying (at most a day's; none without a duration).
fn expected_rows(load: &Load) -> usize {
    load.duration.map_or(0, |d| {
        ((d.0.as_secs_f64() / INTERVAL.as_secs_f64()).ceil() as usize + 2).min(86_400)
    })
}

/// Row accumulators, emitted in order once every worker has reported the interval.
struct Timeline {
    /// Interval `first + k` is `rows[k]`. Emitted rows leave the front unless their
    /// recorders are needed at the end (drills, ramps), so a long run keeps none.
    rows: VecDeque<(Recorder, Gauges)>,
    first: usize,
    /// Emitted rows' recorders, cleared, for the next rows.
    spare: Vec<Recorder>,
    sent_upto: Vec<Option<u64>>,
    done: Vec<bool>,
    emitted: usize,
    commands: usize,
}

impl Timeline {
    /// One past the last interval with a row.
    fn end(&self) -> usize {
        self.first + self.rows.len()
    }

    /// The row of interval `i` (not yet emitted), made when missing.
    fn row(&mut self, i: usize) -> &mut (Recorder, Gauges) {
        // A worker's interval indexes only grow, so `i` is never an emitted row's.
        let i = i.max(self.first);
        while self.end() <= i {
            let r = self
                .spare
                .pop()
                .unwrap_or_else(|| Recorder::new(self.commands));
            self.rows.push_back((r, Gauges::default()));
        }
        &mut self.rows[i - self.first]
    }

    fn complete(&self, i: usize) -> bool {
        self.sent_upto
            .iter()
            .zip(&self.done)
            .all(|(s, d)| *d || s.is_some_and(|s| s as usize >= i))
    }
}

/// A phase's worker threads, each connected (its connections open, its handshakes done) and
/// waiting for the go.
struct Workers {
    /// Each thread's go (or cancel).
    gos: Vec<Sender<Go>>,
    /// Each thread's recorders, handed back for reuse once merged.
    recycle: Vec<Sender<Recorder>>,
    joins: Vec<JoinHandle<()>>,
    /// Every thread's messages: intervals, done.
    rx: Receiver<WorkerMsg>,
    /// Bit i set while drill i is active (only when the phase has drills).
    drill_mask: Option<Arc<AtomicU64>>,
}

impl Workers {
    /// Start the phase's threads, each with its connections and its share of the request
    /// budget, and wait until every one is ready; the first error stops them all.
    fn start(
        phase: &Phase,
        phase_index: usize,
        drills: bool,
        seed: u64,
        stop: &Arc<AtomicBool>,
    ) -> Result<Workers> {
        let load = &phase.spec.load;
        let threads = load.effective_threads() as usize;
        let conns = split(load.connections as u64, &vec![1; threads]);
        let conns: Vec<usize> = conns.into_iter().map(|c| c as usize).collect();
        let budgets = thread_budgets(phase, &conns);
        let (tx, rx) = channel();
        let sequence: Arc<SequenceCounters> = Arc::default();
        let drill_mask = drills.then(|| Arc::new(AtomicU64::new(0)));
        let failed = match &phase.spec.output.failed_keys {
            Some(path) => Some(Arc::new(open_failed_keys(phase, path)?)),
            None => None,
        };
        let mut workers = Workers {
            gos: Vec::with_capacity(threads),
            recycle: Vec::with_capacity(threads),
            joins: Vec::with_capacity(threads),
            rx,
            drill_mask,
        };
        let mut first = 0;
        for t in 0..threads {
            let (go_tx, go_rx) = channel();
            workers.gos.push(go_tx);
            let (recycle_tx, recycled) = channel();
            workers.recycle.push(recycle_tx);
            let setup = WorkerSetup {
                thread: t,
                phase: phase.clone(),
                phase_index,
                first_connection: first,
                connections: conns[t],
                total_connections: load.connections as usize,
                threads,
                budget: budgets[t],
                seed,
                sequence: Arc::clone(&sequence),
                stop: Arc::clone(stop),
                drills: workers.drill_mask.clone(),
                tx: tx.clone(),
                recycled,
                go: go_rx,
                failed: failed.clone(),
            };
            first += conns[t];
            let spawned = std::thread::Builder::new()
                .name(format!("respload-worker-{t}"))
                .spawn(move || run_worker(setup));
            match spawned {
                Ok(join) => workers.joins.push(join),
                Err(e) => {
                    workers.cancel();
                    return Err(Error::Internal(format!(
                        "cannot start a worker thread: {e}"
                    )));
                }
            }
        }
        drop(tx);
        let mut failure = None;
        for _ in 0..threads {
            match workers.rx.recv() {
                Ok(WorkerMsg::Ready(Err(e))) => failure = failure.or(Some(e)),
                Ok(WorkerMsg::Ready(Ok(()))) => {}
                Ok(_) => {}
                Err(_) => {
                    failure = failure.or(Some(Error::Internal("a worker thread died".into())))
                }
            }
        }
        match failure {
            Some(e) => {
                workers.cancel();
                Err(e)
            }
            None => Ok(workers),
        }
    }

    /// Stop the threads before they sent anything, and wait for them.
    fn cancel(self) {
        for g in &self.gos {
            let _ = g.send(Go::Cancel);
        }
        join_all(self.joins);
    }
}

/// `phase`'s `output.failed_keys` file at `path`, opened before any traffic.
fn open_failed_keys(phase: &Phase, path: &str) -> Result<super::failed::FailedKeys> {
    let names = phase.commands.iter().map(|c| c.label.clone()).collect();
    super::failed::FailedKeys::open(path, names).map_err(|e| {
        Error::spec(
            format!("{}output.failed_keys", phase.prefix),
            format!("`{path}` cannot be written: {e}"),
        )
    })
}

fn join_all(joins: Vec<JoinHandle<()>>) {
    for j in joins {
        let _ = j.join();
    }
}

/// Each thread's share of the phase's request budget (unbounded without one).
fn thread_budgets(phase: &Phase, conns: &[usize]) -> Vec<u64> {
    let load = &phase.spec.load;
    if let Some(plan) = &phase.replay {
        // Each thread sends what its connections' recorded clients sent, every pass.
        let mut first = 0;
        return conns
            .iter()
            .map(|&c| {
                let n = plan.requests_over(first..first + c, plan.spec.loops);
                first += c;
                n
            })
            .collect();
    }
    match load.request_budget(&phase.spec.keys) {
        Some(n) if phase.parallel_all_keys() => {
            // Each connection walks exactly its own slice: a thread's budget is its slices.
            let total = load.connections as u64;
            let mut first = 0u64;
            conns
                .iter()
                .map(|&c| {
                    let start = parallel_slice(first, total, n).0;
                    first += c as u64;
                    let end = parallel_slice(first, total, n).0;
                    end - start
                })
                .collect()
        }
        Some(n) => split(n, conns),
        None => vec![u64::MAX; conns.len()],
    }
}

/// Run one phase to its end (or until `stop`), sending a snapshot per interval.
pub fn run_phase(
    phase: &Phase,
    phase_index: usize,
    plans: Vec<DrillPlan>,
    seed: u64,
    options: PhaseOptions,
    stop: &Arc<AtomicBool>,
    snapshots: &Sender<Snapshot>,
) -> Result<PhaseOutcome> {
    let PhaseOptions {
        start_at,
        late_start_ok,
        abort,
        metrics,
        dashboard,
        statsd,
    } = options;
    // StatsD follows the measured phases, as the report's totals do.
    let statsd = statsd.filter(|_| phase.spec.measured);
    let mut stopped = None;
    let mut rows_seen = 0;
    let load = &phase.spec.load;
    let workers = Workers::start(phase, phase_index, !plans.is_empty(), seed, stop)?;
    if let Some(at) = start_at {
        if let Err(e) = wait_until(at, late_start_ok, stop) {
            workers.cancel();
            return Err(e);
        }
    }
    let Workers {
        gos,
        recycle,
        joins,
        rx,
        drill_mask,
    } = workers;
    let threads = gos.len();
    let started = Instant::now();
    let started_wall = unix_now();
    let start_skew_ms = start_at.map(|at| (started_wall - at) * 1e3);
    let warmup = load.warmup.map_or(std::time::Duration::ZERO, |w| w.0);
    let measure_start = started + warmup;
    let measure_wall = started_wall + warmup.as_secs_f64();
    let deadline = load.duration.map(|d| measure_start + d.0);
    gos.iter().for_each(|g| {
        let _ = g.send(Go::Start {
            measure_start,
            deadline,
        });
    });
    if let Some(feed) = &statsd {
        start_statsd(feed, phase, phase_index, threads);
    }
    let cluster = phase.connect.cluster.is_some();
    let expected = expected_rows(load);
    let sampler = start_sampler(phase, measure_start, expected);
    let events: Vec<(crate::spec::Event, Option<String>)> = plans
        .iter()
        .map(|p| (p.event.clone(), p.mode.map(|m| m.name().to_string())))
        .collect();
    let drills = match &drill_mask {
        Some(mask) => Some(
            Drills::start(plans, measure_start, Arc::clone(mask))
                .map_err(|e| Error::Internal(format!("cannot start the drill thread: {e}")))?,
        ),
        None => None,
    };
    let mut gaps = GapTracker::default();
    let mut windows: Vec<Option<Recorder>> = vec![None; events.len()];

    let labels: Vec<String> = phase.commands.iter().map(|c| c.label.clone()).collect();
    let mut total = Recorder::new(labels.len());
    let commands_n = labels.len();
    let mut client_seconds = Vec::new();
    let mut timeline = Timeline {
        rows: VecDeque::new(),
        first: 0,
        spare: Vec::new(),
        sent_upto: vec![None; threads],
        done: vec![false; threads],
        emitted: 0,
        commands: labels.len(),
    };
    let mut rows: Vec<TimelineRow> = Vec::with_capacity(expected);
    let mut client = ClientStats {
        threads: threads as u32,
        connections: load.connections,
        io: match load.io {
            crate::spec::Io::Epoll => crate::report::Transport::Epoll,
            crate::spec::Io::Uring => crate::report::Transport::Uring,
        },
        ..ClientStats::default()
    };
    let mut ended = measure_start;
    let mut lost_worker = false;
    // The gaps between sends, sampled by every worker, for the arrivals check.
    let mut arrivals = GapSample::default();
    // Drill figures and ramp steps are computed from the interval recorders at the end.
    let keep_intervals =
        !events.is_empty() || load.rate_steps().is_some() || load.connections_ramp.is_some();
    // Snapshots of the rows emitted, sent once the rows are published (`observe.prometheus`):
    // whoever reacts to a snapshot finds the endpoint at least as far on.
    // Each with its interval's bytes written and read (StatsD's `bytes_sec`).
    let mut pending: Vec<(Snapshot, u64)> = Vec::new();
    let emitter = Emitter {
        phase,
        measure_start,
        measure_wall,
        keep_intervals,
    };
    while timeline.done.iter().any(|d| !d) {
        let msg = match rx.recv() {
            Ok(m) => m,
            Err(_) => {
                lost_worker = true;
                break;
            }
        };
        let (thread, index, mut recorder, gauges, more) = match msg {
            WorkerMsg::Interval {
                thread,
                index,
                recorder,
                gauges,
            } => (thread, index, recorder, gauges, true),
            WorkerMsg::Done {
                thread,
                index,
                recorder,
                gauges,
                ended: e,
                cpu,
                busy,
                gaps: sample,
                lag,
                reconnects,
                windows: parts,
            } => {
                for (e, part) in parts {
                    if let Some(w) = windows.get_mut(e) {
                        w.get_or_insert_with(|| Recorder::new(labels.len()))
                            .merge_commands(&part);
                    }
                }
                timeline.done[thread] = true;
                ended = ended.max(e);
                client.cpu_user_s += cpu.0;
                client.cpu_sys_s += cpu.1;
                client.busy_max = client.busy_max.max(busy);
                arrivals.merge(&sample);
                client.loop_lag_ms_max = client.loop_lag_ms_max.max(lag.as_secs_f64() * 1e3);
                client.reconnects += reconnects;
                (thread, index, recorder, gauges, false)
            }
            WorkerMsg::Ready(..) => continue,
        };
        // The success marks go to the gap figures only, not into every merged recorder.
        gaps.add(&std::mem::take(&mut recorder.marks));
        // `output.client_stats`: each connection's second, rolled into rows.
        roll_client_seconds(&recorder, thread, index, commands_n, &mut client_seconds);
        let i = index as usize;
        let row = timeline.row(i);
        row.0.merge(&recorder);
        row.1.add(&gauges);
        total.merge(&recorder);
        if more {
            // Back to its worker, so no thread allocates histograms every second.
            recorder.clear();
            let _ = recycle[thread].send(recorder);
        }
        timeline.sent_upto[thread] = Some(index);
        let all_done = timeline.done.iter().all(|d| *d);
        emitter.emit(
            &mut timeline,
            &mut rows,
            all_done.then_some(ended),
            &mut pending,
        );
        // Once a second (a row emitted): the results so far published, and judged against
        // the live thresholds.
        if timeline.emitted > rows_seen {
            rows_seen = timeline.emitted;
            if let (Some(m), Some(last)) = (&metrics, rows.last()) {
                m.publish(phase_index, phase, &total, last);
            }
            if let Some(check) = abort.as_ref().filter(|_| stopped.is_none() && !all_done) {
                let elapsed = Instant::now().saturating_duration_since(measure_start);
                stopped = check.crossed(&total, &labels, elapsed.as_secs_f64());
                if stopped.is_some() {
                    stop.store(true, std::sync::atomic::Ordering::Relaxed);
                }
            }
        }
        hand_out(
            &mut pending,
            dashboard.as_deref(),
            statsd.as_ref(),
            snapshots,
        );
        // Every worker reported past the emitted intervals: their marks are all in.
        gaps.settle(timeline.emitted as u64 * INTERVAL.as_nanos() as u64);
    }
    join_all(joins);
    if let Some(feed) = &statsd {
        feed.end(phase_index);
    }
    if let (Some(m), Some(last)) = (&metrics, rows.last()) {
        // Every worker's last figures are in: the phase's final counts.
        m.publish(phase_index, phase, &total, last);
    }
    let outcomes = drills.map(Drills::finish).unwrap_or_default();
    let sampled = sampler.map(Sampler::finish).unwrap_or_default();
    let (server_timeline, server_nodes) = server_series(sampled, cluster);
    // One of the two is empty: the single server's series, or the cluster's nodes'.
    let series: Vec<&[ServerSample]> = std::iter::once(&server_timeline[..])
        .chain(server_nodes.values().map(|n| &n.server_timeline[..]))
        .collect();
    join_server_cpu(&mut rows, &series, INTERVAL);
    if lost_worker {
        return Err(Error::Internal(
            "a worker thread ended without reporting".into(),
        ));
    }
    // Stopped by a threshold is a verdict, not an interruption.
    let interrupted = stop.load(std::sync::atomic::Ordering::Relaxed) && stopped.is_none();
    let gathered = Gathered {
        total,
        rows,
        timeline,
        client,
        ended,
        arrivals,
        gaps,
        windows,
        client_seconds,
    };
    let (report, total) = phase_report(
        phase,
        gathered,
        (server_timeline, server_nodes),
        (events, outcomes),
        &labels,
        (measure_start, measure_wall),
        interrupted,
    );
    Ok(PhaseOutcome {
        report,
        recorder: total,
        start_skew_ms,
        stopped,
    })
}

/// The snapshots of the rows just emitted, to whoever follows the phase: the dashboard,
/// StatsD (with each interval's bytes), the runner's channel.
fn hand_out(
    pending: &mut Vec<(Snapshot, u64)>,
    dashboard: Option<&crate::observe::Live>,
    statsd: Option<&crate::observe::StatsdFeed>,
    snapshots: &Sender<Snapshot>,
) {
    for (snapshot, bytes) in pending.drain(..) {
        if let Some(d) = dashboard {
            d.push(&snapshot);
        }
        if let Some(feed) = statsd {
            feed.row(&snapshot, bytes);
        }
        let _ = snapshots.send(snapshot);
    }
}

/// Tell StatsD the phase began, with what ends it (memtier's `progress_pct`: its requests
/// unless only a duration is given).
fn start_statsd(
    feed: &crate::observe::StatsdFeed,
    phase: &Phase,
    phase_index: usize,
    threads: usize,
) {
    let load = &phase.spec.load;
    let (requests, seconds) = match (load.requests, load.duration) {
        (None, Some(d)) => (None, Some(d.0.as_secs_f64())),
        _ => (load.request_budget(&phase.spec.keys), None),
    };
    feed.start(
        phase_index,
        threads as u32,
        load.connections,
        requests,
        seconds,
    );
}

/// The server's INFO sampler (every node's in cluster mode), when `observe.info` asks for
/// it and it can connect.
fn start_sampler(phase: &Phase, measure_start: Instant, expected: usize) -> Option<Sampler> {
    if !phase.spec.observe.info {
        return None;
    }
    let connect = phase.connect.clone();
    match phase.connect.cluster.is_some() {
        false => Sampler::start(connect, measure_start, INTERVAL, expected).ok(),
        true => Sampler::start_cluster(connect, measure_start, INTERVAL, expected).ok(),
    }
}

/// What a phase's loop gathered from its workers, for the report.
struct Gathered {
    /// Everything measured, merged.
    total: Recorder,
    rows: Vec<TimelineRow>,
    timeline: Timeline,
    client: ClientStats,
    /// When the last worker ended.
    ended: Instant,
    arrivals: GapSample,
    gaps: GapTracker,
    /// Each drill's window: the requests measured while it was in force.
    windows: Vec<Option<Recorder>>,
    /// Per connection and second (`output.client_stats`).
    client_seconds: Vec<crate::report::ClientSecond>,
}

/// The phase's report from what its workers, its server sampler and its drills gathered;
/// returns the merged recorder back beside it.
fn phase_report(
    phase: &Phase,
    g: Gathered,
    (server_timeline, server_nodes): (Vec<ServerSample>, BTreeMap<String, NodeServer>),
    (events, outcomes): (Vec<(crate::spec::Event, Option<String>)>, Vec<DrillOutcome>),
    labels: &[String],
    (measure_start, measure_wall): (Instant, f64),
    interrupted: bool,
) -> (PhaseReport, Recorder) {
    let Gathered {
        total,
        rows,
        mut timeline,
        mut client,
        ended,
        arrivals,
        gaps,
        windows,
        client_seconds,
    } = g;
    let load = &phase.spec.load;
    let cluster = phase.connect.cluster.is_some();
    let measured = ended.saturating_duration_since(measure_start);
    let duration_s = measured.as_secs_f64();
    let gaps = gaps.finish(measured.as_nanos() as u64);
    let intervals: Vec<&Recorder> = timeline.rows.iter().map(|(r, _)| r).collect();
    let measures = Measures {
        rows: &rows,
        intervals: &intervals,
        gaps: &gaps,
        duration_s,
        start: measure_start,
    };
    let events = event_reports(events, outcomes, &windows, &measures);
    let steps = ramp_steps(load, timeline.rows.make_contiguous(), &rows);
    let (totals, commands) = summarize(&total, labels, duration_s);
    let ops = totals.ops.max(1) as f64;
    client.cpu_s_per_million = (client.cpu_user_s + client.cpu_sys_s) / ops * 1e6;
    client.waiting_max = rows.iter().filter_map(|r| r.waiting).max();
    client.behind_ms_max = rows.iter().filter_map(|r| r.behind_ms).reduce(f64::max);
    let mut report = PhaseReport {
        name: phase.spec.name.clone(),
        started_at: measure_wall,
        measured: phase.spec.measured,
        barrier_wait_s: None,
        duration_s,
        interrupted,
        totals,
        commands,
        timeline: rows,
        client,
        target_rate: phase.spec.load.rate,
        server_load: match cluster {
            false => ServerLoad::of(&server_timeline),
            true => ServerLoad::of_nodes(&server_nodes),
        },
        server_timeline,
        server_nodes,
        nodes: crate::stats::node_stats(&total, duration_s),
        availability: Availability::of(&gaps),
        events,
        steps,
        output_error: None,
        server: None,
        slo: None,
        unsent: Unsent::of(total.unsent.as_deref()),
        client_lag_ms: total.client_lag.as_deref().map(crate::stats::latency_of),
        validity: Validity::default(),
        replay: None,
        workload: phase.redacted(),
        client_seconds,
    };
    if phase.spec.measured {
        let poisson = load.arrivals == Some(crate::spec::Arrivals::Poisson);
        report.validity = Validity::of(check_phase(&report, poisson, &arrivals));
    }
    (report, total)
}

/// Turns a phase's complete intervals into timeline rows and snapshots, in order.
struct Emitter<'a> {
    phase: &'a Phase,
    measure_start: Instant,
    measure_wall: f64,
    /// Interval recorders kept once their row is out (drill figures and ramp steps are
    /// computed from them at the end).
    keep_intervals: bool,
}

impl Emitter<'_> {
    /// Emit every interval complete in `timeline` (`end`: the phase's end, once every worker
    /// is done): its row into `rows` (histogram dropped unless kept), its snapshot and bytes
    /// into `pending`.
    fn emit(
        &self,
        timeline: &mut Timeline,
        rows: &mut Vec<TimelineRow>,
        end: Option<Instant>,
        pending: &mut Vec<(Snapshot, u64)>,
    ) {
        while timeline.emitted < timeline.end() && timeline.complete(timeline.emitted) {
            let i = timeline.emitted;
            let (rec, gauges) = &timeline.rows[i - timeline.first];
            let start_s = i as f64 * INTERVAL.as_secs_f64();
            let is_last = end.is_some() && i + 1 == timeline.end();
            let t = match (is_last, end) {
                (true, Some(e)) => e
                    .saturating_duration_since(self.measure_start)
                    .as_secs_f64()
                    .max(start_s),
                _ => start_s + INTERVAL.as_secs_f64(),
            };
            let mut row = timeline_row(rec, t, t - start_s, gauges.connected);
            row.unix_s = self.measure_wall + t;
            row.reconnects = Some(gauges.reconnects);
            row.partial = is_last && row.interval_s < INTERVAL.as_secs_f64() / 2.0;
            row.target_rate = self.phase.spec.load.rate_at(start_s);
            if row.target_rate.is_some() {
                row.waiting = Some(gauges.waiting);
                row.behind_ms = Some(gauges.behind.as_secs_f64() * 1e3);
            }
            let mut kept = row.clone();
            if !self.phase.spec.output.interval_histograms {
                // ~4 KB a second: kept, they would grow a long run's memory without bound.
                kept.histogram = String::new();
            }
            let bytes = rec
                .commands
                .iter()
                .map(|c| c.bytes_sent + c.bytes_received)
                .sum();
            let snapshot = Snapshot {
                phase: self.phase.spec.name.clone(),
                measured: self.phase.spec.measured,
                row,
            };
            pending.push((snapshot, bytes));
            rows.push(kept);
            // Emitted: its histograms are summarized in the row, so free them (a long run
            // would otherwise keep every interval's histograms: ~60 MB a minute).
            if !self.keep_intervals {
                if let Some((mut spare, _)) = timeline.rows.pop_front() {
                    timeline.first += 1;
                    spare.clear();
                    timeline.spare.push(spare);
                }
            }
            timeline.emitted += 1;
        }
    }
}

/// A phase's server samples: a single server's series, or (cluster mode) each node's, the
/// other empty.
fn server_series(
    sampled: Vec<(String, Vec<ServerSample>)>,
    cluster: bool,
) -> (Vec<ServerSample>, BTreeMap<String, NodeServer>) {
    if cluster {
        let nodes = sampled
            .into_iter()
            .map(|(name, samples)| (name, NodeServer::new(samples)))
            .collect();
        (Vec::new(), nodes)
    } else {
        let one = sampled.into_iter().next().map(|(_, s)| s);
        (one.unwrap_or_default(), BTreeMap::new())
    }
}

/// What a phase measured, for its drills' figures.
struct Measures<'a> {
    rows: &'a [TimelineRow],
    intervals: &'a [&'a Recorder],
    gaps: &'a Gaps,
    duration_s: f64,
    /// When the measurement began: the drills' times count from it.
    start: Instant,
}

/// Each fault drill's report: what the drill thread saw (`outcomes`), and the load around it
/// (`windows`: each drill's own recorder while it was active).
fn event_reports(
    events: Vec<(crate::spec::Event, Option<String>)>,
    outcomes: Vec<DrillOutcome>,
    windows: &[Option<Recorder>],
    m: &Measures,
) -> Vec<EventReport> {
    let since = |t: Instant| t.saturating_duration_since(m.start).as_secs_f64();
    events
        .into_iter()
        .zip(outcomes)
        .zip(windows)
        .map(|(((event, mode), o), window)| {
            let mut e = EventReport {
                drill: event.drill.name().to_string(),
                mode,
                node: o.node,
                replica: o.replica,
                at_s: event.at.0.as_secs_f64(),
                started_s: o.started.map(since),
                finished_s: o.finished.map(since),
                recovery_s: o
                    .started
                    .zip(o.finished)
                    .map(|(s, f)| f.saturating_duration_since(s).as_secs_f64()),
                fork_usec: o.fork_usec,
                sync_s: o.sync.map(|d| d.as_secs_f64()),
                full_sync: o.full_sync,
                error: o.error,
                ..EventReport::default()
            };
            e.fill_load_figures(window.as_ref(), m.rows, m.intervals, m.gaps, m.duration_s);
            e
        })
        .collect()
}

/// One summary per step of the phase's ramp (the rate ramp's when both are given): each
/// step is a whole number of timeline rows, the last one runs to the end.
fn ramp_steps(load: &Load, recs: &[(Recorder, Gauges)], rows: &[TimelineRow]) -> Vec<RampStep> {
    let (step, n) = match (load.rate_steps(), load.connections_ramp) {
        (Some((rates, step)), _) => (step, rates.len()),
        (None, Some(c)) => (c.step_duration.0, c.counts(load.connections).len()),
        (None, None) => return Vec::new(),
    };
    let per = (step.as_secs_f64() / INTERVAL.as_secs_f64())
        .round()
        .max(1.0) as usize;
    let len = rows.len().min(recs.len());
    let mut steps = Vec::new();
    for k in 0..n {
        let lo = k * per;
        if lo >= len {
            break;
        }
        let hi = if k + 1 == n { len } else { (lo + per).min(len) };
        let mut merged = CommandRecorder::default();
        for (rec, _) in &recs[lo..hi] {
            merged.merge(&rec.total());
        }
        let duration_s: f64 = rows[lo..hi].iter().map(|r| r.interval_s).sum();
        let s = stats_of(&merged, duration_s);
        steps.push(RampStep {
            start_s: lo as f64 * INTERVAL.as_secs_f64(),
            duration_s,
            target_rate: load.rate_at_step(k),
            // A ramp only adds connections, and the next step's may open just before the
            // last row of this one ends: the fewest seen is this step's count.
            connections: rows[lo..hi]
                .iter()
                .map(|r| r.connections)
                .min()
                .unwrap_or(0),
            ops: s.ops,
            ops_per_sec: s.ops_per_sec,
            errors: s.errors,
            error_rate: s.error_rate,
            latency_ms: s.latency_ms,
            service_ms: s.service_ms,
        });
    }
    steps
}

/// Wait (connections open) until the wall-clock instant `at`: an error when it passed by more
/// than the start's limit; returns early when the run is stopped.
fn wait_until(at: f64, late_ok: bool, stop: &AtomicBool) -> Result<()> {
    if !late_ok {
        check_not_late(at, unix_now(), ", by the time the connections were open")?;
    }
    loop {
        let left = at - unix_now();
        if left <= 0.0 || stop.load(std::sync::atomic::Ordering::Relaxed) {
            return Ok(());
        }
        // Short sleeps keep a stop prompt; the last one lands on the instant.
        std::thread::sleep(std::time::Duration::from_secs_f64(left.min(0.05)));
    }
}

/// The rows of one interval's per-connection counters (`output.client_stats`): one per
/// connection and command that finished requests in it.
fn roll_client_seconds(
    recorder: &Recorder,
    thread: usize,
    second: u64,
    commands: usize,
    rows: &mut Vec<crate::report::ClientSecond>,
) {
    let commands = commands.max(1);
    for (slot, counts) in recorder.clients.iter().enumerate() {
        if counts.ops > 0 {
            rows.push(crate::report::ClientSecond {
                second,
                thread: thread as u32,
                client: (slot / commands) as u32,
                command: (slot % commands) as u32,
                counts: *counts,
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::split;

    #[test]
    fn split_is_exact_and_proportional() {
        assert_eq!(split(10, &[1, 1, 1]), vec![4, 3, 3]);
        assert_eq!(split(100, &[3, 1]), vec![75, 25]);
        assert_eq!(split(7, &[2, 2]).iter().sum::<u64>(), 7);
    }
}
