//! The Runner: runs a workload's phases on a background thread, streams interval snapshots,
//! and can be stopped early (the partial report is kept and marked interrupted).

use super::abort::{AbortCheck, Stopped};
use super::barrier::{Gate, Passed};
use super::labels::merge_by_label;
use super::phase::{run_phase, PhaseOptions};
use super::rng::mix;
use super::slo_search::run_search;
use crate::net::Client;
use crate::observe::{prepare_drills, read_facts};
use crate::plan::{ConnectOptions, Phase, Workload};
use crate::report::PhaseReport;
use crate::report::Snapshot;
use crate::report::{Report, ServerFacts, SCHEMA_VERSION};
use crate::stats::{summarize, Recorder};
use crate::{Error, Result};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

/// Stops a run from anywhere (another thread, a signal handler the host installed).
#[derive(Debug, Clone, Default)]
pub struct StopHandle(Arc<AtomicBool>);

impl StopHandle {
    /// Ask the run to stop: no new requests; in-flight ones get 300 ms to finish.
    pub fn stop(&self) {
        self.0.store(true, Ordering::Relaxed);
    }

    /// Whether a stop was asked for.
    pub fn is_stopped(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }
}

/// What a run writes besides its report, called on the runner's thread. The engine opens and
/// formats no report file itself: [`Runner::start`] passes the writer of memtier's report
/// (`output.memtier`). Dropped when the run ends. (The one file the engine writes is
/// `output.failed_keys`, a line per failed request as it fails.)
pub trait PhaseEnd: Send {
    /// Once the servers were reached, before any traffic: check that what will be written
    /// can be (a file that cannot be is an error now, not after a long run).
    fn prepare(&mut self, _workload: &Workload) -> Result<()> {
        Ok(())
    }

    /// At the end of each phase, with its report and when the run started (UNIX seconds):
    /// write what the phase's `output` settings ask for. An `Err` becomes the phase report's
    /// `output_error`.
    fn phase_end(
        &self,
        phase: &Phase,
        report: &PhaseReport,
        started_at: f64,
    ) -> std::result::Result<(), String>;
}

/// A run in progress.
pub struct Runner {
    stop: StopHandle,
    snapshots: Receiver<Snapshot>,
    // A snapshot taken by `is_finished` while checking, handed out by the next call.
    peeked: Mutex<Option<Snapshot>>,
    thread: Option<JoinHandle<Result<Report>>>,
}

impl Runner {
    /// Start running `workload` on a background thread, calling `phase_end` after each phase.
    /// Spec errors were caught when the workload was built; connection failures are returned
    /// by [`Runner::wait`].
    pub fn start_with(workload: Workload, mut phase_end: Box<dyn PhaseEnd>) -> Result<Runner> {
        let stop = StopHandle::default();
        let (tx, rx) = channel();
        let flag = Arc::clone(&stop.0);
        let thread = std::thread::Builder::new()
            .name("respload-runner".into())
            .spawn(move || execute(&workload, &flag, &tx, phase_end.as_mut()))
            .map_err(|e| Error::Internal(format!("cannot start the runner thread: {e}")))?;
        Ok(Runner {
            stop,
            snapshots: rx,
            peeked: Mutex::new(None),
            thread: Some(thread),
        })
    }

    /// A handle that stops this run.
    pub fn stop_handle(&self) -> StopHandle {
        self.stop.clone()
    }

    /// The next interval snapshot, waiting up to `timeout`. `None` on timeout, or when the run
    /// is over and every snapshot has been taken (see [`Runner::is_finished`]).
    pub fn next_snapshot(&self, timeout: Duration) -> Option<Snapshot> {
        if let Some(s) = self.peeked.lock().ok().and_then(|mut p| p.take()) {
            return Some(s);
        }
        match self.snapshots.recv_timeout(timeout) {
            Ok(s) => Some(s),
            Err(RecvTimeoutError::Timeout) | Err(RecvTimeoutError::Disconnected) => None,
        }
    }

    /// Whether the run is over and no snapshot is left to take.
    pub fn is_finished(&self) -> bool {
        if !self.thread.as_ref().is_none_or(|t| t.is_finished()) {
            return false;
        }
        let Ok(mut peeked) = self.peeked.lock() else {
            return true;
        };
        if peeked.is_some() {
            return false;
        }
        match self.snapshots.try_recv() {
            Ok(s) => {
                *peeked = Some(s);
                false
            }
            Err(std::sync::mpsc::TryRecvError::Empty) => false,
            Err(std::sync::mpsc::TryRecvError::Disconnected) => true,
        }
    }

    /// Stop now and return the partial report (marked interrupted).
    pub fn stop(mut self) -> Result<Report> {
        self.stop.stop();
        self.join()
    }

    /// Wait for the run to end and return its report.
    pub fn wait(mut self) -> Result<Report> {
        self.join()
    }

    fn join(&mut self) -> Result<Report> {
        // Nobody can take a snapshot any more: drop them as they come rather than queue them
        // for the whole run (`run` waits from the start).
        self.snapshots = channel().1;
        match self.thread.take() {
            Some(t) => t
                .join()
                .unwrap_or_else(|_| Err(Error::Internal("the runner thread panicked".into()))),
            None => Err(Error::Internal("the report was already taken".into())),
        }
    }
}

impl Drop for Runner {
    /// Dropping a runner stops its traffic: nothing keeps sending after its owner is gone.
    fn drop(&mut self) {
        if let Some(t) = self.thread.take() {
            self.stop.stop();
            let _ = t.join();
        }
    }
}

/// A client of the target, or in cluster mode of the first seed that answers when the target
/// does not (a seed list stands in for a node that is down); with its address. Fails with
/// the target's own error when none answers.
async fn reach(target: &ConnectOptions) -> Result<(Client, String)> {
    let target = &target.control();
    let error = match Client::connect(target).await {
        Ok(client) => return Ok((client, target.endpoint.to_string())),
        Err(e) => e,
    };
    let own = target.endpoint.to_string();
    for seed in target.cluster.iter().flatten() {
        if seed.to_string() == own {
            continue;
        }
        if let Ok(client) = Client::connect(&seed.connect(target)).await {
            return Ok((client, seed.to_string()));
        }
    }
    Err(error)
}

/// The barrier before phase `i` of a run with phases in step across hosts (`--barrier`),
/// when that phase has one: every phase but a first one started at `start_at`.
fn gate_of<'a>(workload: &'a Workload, id: Option<&'a str>, i: usize) -> Option<Gate<'a>> {
    let (barrier, id, shard) = (workload.barrier.as_ref()?, id?, workload.shard.as_ref()?);
    let phase = workload.phases.get(i)?;
    (i > 0 || workload.start_at.is_none()).then_some(Gate {
        barrier,
        id,
        phase: i,
        name: &phase.spec.name,
        shard: (shard.index, shard.count),
    })
}

fn execute(
    workload: &Workload,
    stop: &Arc<AtomicBool>,
    tx: &std::sync::mpsc::Sender<Snapshot>,
    phase_end: &mut dyn PhaseEnd,
) -> Result<Report> {
    let outcome = execute_phases(workload, stop, tx, phase_end);
    if let (Err(e), Ok(id)) = (&outcome, workload.barrier_id()) {
        // A host that could not run closes its first barrier, so that the others learn it
        // at once (a barrier already opened or closed is left as it is).
        let first = usize::from(workload.start_at.is_some());
        if let Some(gate) = gate_of(workload, id.as_deref(), first) {
            gate.abandon(&format!("shard {} could not run: {e}", gate.shard.0));
        }
    }
    outcome
}

fn execute_phases(
    workload: &Workload,
    stop: &Arc<AtomicBool>,
    tx: &std::sync::mpsc::Sender<Snapshot>,
    phase_end: &mut dyn PhaseEnd,
) -> Result<Report> {
    let started_at = crate::spec::unix_now();
    let first = workload
        .phases
        .first()
        .ok_or_else(|| Error::spec("phases", "a workload needs at least one phase"))?;
    // A drawn seed stays below 2^53 so JavaScript and JSON tools hold it exactly.
    let seed = first
        .spec
        .seed
        .unwrap_or_else(|| mix(started_at.to_bits() ^ std::process::id() as u64) >> 11);
    if let Some(at) = workload.start_at {
        crate::spec::check_not_late(at, started_at, "")?;
    }
    super::fd_limit::check(workload, super::fd_limit::open_files_limit())?;
    let barrier_id = workload.barrier_id()?;
    // Reach the server once before anything else: fail fast with the address and OS error.
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| Error::Internal(format!("runtime: {e}")))?;
    let (server, mut plans, mut others) = rt.block_on(async {
        let (mut client, address) = reach(&first.connect).await?;
        let facts = read_facts(&mut client, address, first.connect.connect_timeout).await?;
        // Every other target of a phase too, once each: a wrong address, certificate or
        // password of a later phase is an error before any traffic, not after the first
        // phases ran (their report would be lost).
        // Their facts go into their phases' reports.
        let mut reached = vec![(&first.connect, None)];
        for phase in &workload.phases {
            if !reached.iter().any(|(c, _)| *c == &phase.connect) {
                let (mut client, address) = reach(&phase.connect).await?;
                let timeout = phase.connect.connect_timeout;
                let facts = read_facts(&mut client, address, timeout).await?;
                reached.push((&phase.connect, Some(facts)));
            }
        }
        let others: Vec<Option<ServerFacts>> = workload
            .phases
            .iter()
            .map(|p| reached.iter().find(|(c, _)| *c == &p.connect)?.1.clone())
            .collect();
        if let Some(b) = &workload.barrier {
            super::barrier::check(b).await?;
        }
        // Every phase's drills are resolved (replicas found) before any traffic.
        let mut plans = Vec::with_capacity(workload.phases.len());
        for phase in &workload.phases {
            plans.push(prepare_drills(phase).await?);
        }
        Ok::<_, Error>((facts, plans, others))
    })?;
    drop(rt);
    phase_end.prepare(workload)?;
    // Listening before any traffic: an address that cannot be bound is an error now. It
    // closes when the run ends (dropped with this frame).
    let endpoint = match workload.prometheus() {
        Some((address, field)) => Some(crate::observe::Endpoint::start(address, &field)?),
        None => None,
    };

    // Its host resolved before any traffic; everything handed over is sent before the
    // run returns (dropped with this frame).
    let statsd = match workload.statsd() {
        Some((settings, field)) => Some(crate::observe::StatsdSender::start(settings, &field)?),
        None => None,
    };

    let mut report = Report {
        schema_version: SCHEMA_VERSION,
        respload_version: env!("CARGO_PKG_VERSION").to_string(),
        started_at,
        seed,
        server,
        workload: workload.redacted(),
        host: host_name(),
        shard: workload.shard.clone(),
        start_at: workload.start_at,
        ..Report::default()
    };
    // The dashboard too, its page showing what is known before the first row.
    let dashboard = match workload.dashboard() {
        Some((address, field)) => Some(crate::observe::Dashboard::start(address, &field, &report)?),
        None => None,
    };
    let mut measured: Option<(Recorder, Vec<String>)> = None;
    let mut stopped: Option<Stopped> = None;
    let share = workload
        .shard
        .as_ref()
        .map_or(1.0, crate::report::ShardOf::share);
    // Phases in step across hosts: the barrier before phase `i`, when it has one.
    let gate = |i: usize| gate_of(workload, barrier_id.as_deref(), i);
    // The barrier this host leaves without running its phase, closed for the others so
    // that they stop at once rather than wait out the timeout.
    let mut left_at: Option<usize> = None;
    for (i, phase) in workload.phases.iter().enumerate() {
        if stop.load(Ordering::Relaxed) {
            left_at = Some(i);
            break;
        }
        let mut start_at = workload.start_at.filter(|_| i == 0);
        let mut barrier_wait_s = None;
        if let Some(gate) = gate(i) {
            match gate.meet(stop) {
                Ok(Passed::At { instant, waited_s }) => {
                    start_at = Some(instant);
                    barrier_wait_s = Some(waited_s);
                }
                Ok(Passed::Stopped) => break,
                Err(e) if report.phases.is_empty() => return Err(e),
                Err(e) => {
                    report.error = Some(e.to_string());
                    break;
                }
            }
        }
        let phase_seed = phase.spec.seed.unwrap_or(seed);
        let plans_i = std::mem::take(&mut plans[i]);
        let started = if phase.spec.slo.is_some() {
            run_search(phase, i, phase_seed, stop, tx)
        } else {
            let options = PhaseOptions {
                start_at,
                late_start_ok: barrier_wait_s.is_some(),
                abort: AbortCheck::new(
                    phase,
                    workload.thresholds.as_ref(),
                    measured.as_ref(),
                    report.duration_s,
                    share,
                ),
                metrics: endpoint.as_ref().map(|e| Arc::clone(&e.metrics)),
                dashboard: dashboard.as_ref().map(|d| Arc::clone(&d.live)),
                statsd: statsd.as_ref().and_then(crate::observe::StatsdSender::feed),
            };
            match super::replay::prefill(phase, stop) {
                Ok(prefilled) => {
                    run_phase(phase, i, plans_i, phase_seed, options, stop, tx).map(|mut o| {
                        if let Some(plan) = &phase.replay {
                            let mut f = super::replay::fidelity(plan, &o.report);
                            f.prefill = prefilled;
                            o.report.replay = Some(f);
                        }
                        o
                    })
                }
                Err(e) => Err(e),
            }
        };
        let mut outcome = match started {
            Ok(mut outcome) => {
                outcome.report.server = others[i].take();
                outcome.report.barrier_wait_s = barrier_wait_s;
                outcome
            }
            // No phase finished: the caller gets the error, as for an unreachable server.
            Err(e) if report.phases.is_empty() => {
                if let Some(next) = gate(i + 1) {
                    next.abandon(&format!("shard {} failed: {e}", next.shard.0));
                }
                return Err(e);
            }
            // The earlier phases' report is kept (a server that went away between phases,
            // the rare failure of a phase after it started).
            Err(e) => {
                report.error = Some(format!("phase `{}` failed: {e}", phase.spec.name));
                left_at = Some(i + 1);
                break;
            }
        };
        if let Err(e) = phase_end.phase_end(phase, &outcome.report, started_at) {
            outcome.report.output_error = Some(e);
        }
        if i == 0 {
            report.start_skew_ms = outcome.start_skew_ms;
        }
        stopped = stopped.or(outcome.stopped.take());
        if outcome.report.slo.is_some() {
            report.slo.clone_from(&outcome.report.slo);
        }
        if outcome.report.measured {
            let labels: Vec<String> = phase.commands.iter().map(|c| c.label.clone()).collect();
            merge_by_label(&mut measured, &outcome.recorder, labels);
        }
        report.add_phase(outcome.report);
    }
    if let Some(next) = left_at.and_then(gate) {
        let why = match &report.error {
            Some(e) => format!("shard {} failed: {e}", next.shard.0),
            None => format!(
                "shard {} was stopped (interrupted, or by a threshold with abort_on_fail)",
                next.shard.0
            ),
        };
        next.abandon(&why);
    }
    // A threshold that stopped the run set the stop flag: a verdict, not an interruption.
    report.interrupted =
        report.error.is_some() || (stop.load(Ordering::Relaxed) && stopped.is_none());
    report.end_phases();
    if let Some((rec, labels)) = &measured {
        let (totals, commands) = summarize(rec, labels, report.duration_s);
        report.totals = totals;
        report.commands = commands;
        report.nodes = crate::stats::node_stats(rec, report.duration_s);
        report.unsent = crate::report::Unsent::of(rec.unsent.as_deref());
        report.client_lag_ms = rec.client_lag.as_deref().map(crate::stats::latency_of);
    }
    report.thresholds = thresholds_of(workload);
    if let Some(s) = stopped {
        for t in report.thresholds.iter_mut().filter(|t| t.name == s.name) {
            t.stopped_run = true;
        }
        report.stopped_by = Some(s.why);
    }
    report.judge_thresholds();
    if let Some(d) = &dashboard {
        d.live.finish(&report);
    }
    Ok(report)
}

/// The report's entries for the workload's thresholds: the run's, then each phase's.
fn thresholds_of(workload: &Workload) -> Vec<crate::report::Threshold> {
    let mut out = workload
        .thresholds
        .as_ref()
        .map(|t| t.entries(None))
        .unwrap_or_default();
    for p in &workload.phases {
        if let Some(t) = &p.spec.thresholds {
            out.extend(t.entries(Some(&p.spec.name)));
        }
    }
    out
}

/// This machine's name, as a merged report lists its hosts (empty when unknown).
fn host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|s| s.trim().to_string())
        .ok()
        .or_else(|| std::env::var("HOSTNAME").ok())
        .or_else(|| std::env::var("COMPUTERNAME").ok())
        .unwrap_or_default()
}
