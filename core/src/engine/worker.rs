//! A worker thread: a single-threaded async runtime owning its share of the connections,
//! plus a 20 ms housekeeping tick that flushes interval stats, enforces the deadline and the
//! reply timeout, and measures its own lateness (loop lag).

use super::cluster::{Cluster, ClusterClient};
use super::connection::{Connection, READ_BUFFER};
use super::control::{ConnCtl, Interrupt, Shared, TaskEnd};
use super::feed::{Cursor, Feed};
use super::generator::Generator;
use super::keys::Sequence;
use super::pacer::Pacer;
use super::rng::Rng;
use super::timer::PaceTimer;
use super::values::{value_pool, ValueSource};
use crate::net::{Client, Stream};
use crate::plan::{CompiledCommand, Phase};
use crate::spec::ConnectionsRamp;
use crate::stats::{GapSample, Recorder};
use crate::{Error, Result};
use std::cell::{Cell, RefCell};
use std::future::Future as _;
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, Sender};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How often the housekeeping tick runs.
const TICK: Duration = Duration::from_millis(20);
/// How long in-flight requests may still finish after `stop()` before they are cut off.
const ABORT_GRACE: Duration = Duration::from_millis(300);
/// Interval of the timeline.
pub const INTERVAL: Duration = Duration::from_secs(1);
/// Mixed into the run's seed for pacing, so the request stream is the same open or closed.
const PACING_SEED: u64 = 0x5041_4345_5f52_4154;
/// Mixed into the seed of the connections' start pauses (`load.open_jitter`).
const JITTER_SEED: u64 = 0x4a49_5454_4552_5f53;

/// A worker's gauges over one interval, read as they change (connections) or at every tick
/// (requests waiting to be sent).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Gauges {
    /// Most connections open at once.
    pub connected: u32,
    /// Open loop: most requests due but not yet written, at one tick.
    pub waiting: u64,
    /// Open loop: the longest a due request had waited to be written, at one tick.
    pub behind: Duration,
    /// Reconnections after lost connections since the last interval.
    pub reconnects: u64,
}

impl Gauges {
    /// Add another worker's gauges of the same interval (its connections and waiting
    /// requests are its own; the longest wait is the worst of both).
    pub fn add(&mut self, other: &Gauges) {
        self.connected += other.connected;
        self.waiting += other.waiting;
        self.behind = self.behind.max(other.behind);
        self.reconnects += other.reconnects;
    }
}

/// What a worker tells the phase's aggregator.
pub enum WorkerMsg {
    /// Connections are up (or the error that kept them down).
    Ready(Result<()>),
    /// One interval's measurements.
    Interval {
        /// Worker index.
        thread: usize,
        /// Interval index from the start of measurement.
        index: u64,
        /// What was measured.
        recorder: Recorder,
        /// Its connections and requests waiting to be sent.
        gauges: Gauges,
    },
    /// The worker is done; this carries its last, partial interval.
    Done {
        /// Worker index.
        thread: usize,
        /// Index of the last interval.
        index: u64,
        /// What was measured in it.
        recorder: Recorder,
        /// Its connections and requests waiting to be sent.
        gauges: Gauges,
        /// When its last connection ended.
        ended: Instant,
        /// User and system CPU seconds it used while running.
        cpu: (f64, f64),
        /// Its CPU time over the wall-clock time it ran (0 to 1).
        busy: f64,
        /// Open loop: a sample of the gaps between its connections' sends.
        gaps: GapSample,
        /// Worst tick lateness.
        lag: Duration,
        /// Reconnections.
        reconnects: u64,
        /// Per fault drill (by event index): the requests finished while it was active.
        windows: Vec<(usize, Recorder)>,
    },
}

/// The coordinator's go-ahead.
pub enum Go {
    /// Start: measurement begins at `measure_start`, new requests stop at `deadline`.
    Start {
        /// End of warm-up.
        measure_start: Instant,
        /// End of the measured duration.
        deadline: Option<Instant>,
    },
    /// Give up (another worker could not connect).
    Cancel,
}

/// Everything a worker needs, moved into its thread.
pub struct WorkerSetup {
    /// Worker index.
    pub thread: usize,
    /// The phase.
    pub phase: Phase,
    /// Phase index (for seeds).
    pub phase_index: usize,
    /// Global index of this worker's first connection (for seeds).
    pub first_connection: usize,
    /// Connections to open.
    pub connections: usize,
    /// Connections in the whole phase (for parallel key slices).
    pub total_connections: usize,
    /// Worker threads in the phase (connections open round-robin over them in a ramp).
    pub threads: usize,
    /// Measured requests for this thread (`u64::MAX`: no limit).
    pub budget: u64,
    /// The run's seed.
    pub seed: u64,
    /// The run-wide sequential key counters.
    pub sequence: Arc<super::keys::SequenceCounters>,
    /// Set by `stop()`.
    pub stop: Arc<AtomicBool>,
    /// When the phase has fault drills: bit `i` is set while event `i` is active.
    pub drills: Option<Arc<AtomicU64>>,
    /// To the aggregator.
    pub tx: Sender<WorkerMsg>,
    /// From the aggregator: interval recorders it has merged and cleared, for reuse.
    pub recycled: Receiver<Recorder>,
    /// From the coordinator.
    pub go: Receiver<Go>,
    /// `output.failed_keys`: the phase's file of the requests that failed for good.
    pub failed: Option<Arc<super::failed::FailedKeys>>,
}

/// The body of a worker thread.
pub fn run_worker(setup: WorkerSetup) {
    let tx = setup.tx.clone();
    let rt = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            let _ = tx.send(WorkerMsg::Ready(Err(Error::Internal(format!(
                "runtime: {e}"
            )))));
            return;
        }
    };
    let local = tokio::task::LocalSet::new();
    local.block_on(&rt, worker(setup));
}

async fn worker(s: WorkerSetup) {
    // `load.io = "uring"`: this thread's ring, before any connection opens (the handshakes
    // go through it too); removed when the worker ends.
    #[cfg(target_os = "linux")]
    let _ring = match s.phase.spec.load.io {
        crate::spec::Io::Uring => match crate::net::uring::install(s.connections) {
            Ok(r) => Some(r),
            Err(e) => {
                let _ = s.tx.send(WorkerMsg::Ready(Err(Error::spec(
                    format!("{}load.io", s.phase.prefix),
                    format!(
                        "\"uring\": no io_uring here ({e}): allowed is \"epoll\" (the default)"
                    ),
                ))));
                return;
            }
        },
        crate::spec::Io::Epoll => None,
    };
    // Open every connection that starts with the phase before it starts, so set-up is not
    // measured; with a connection ramp, the others open at their step.
    let ramp = s.phase.spec.load.connections_ramp;
    let (now_local, later): (Vec<usize>, Vec<usize>) =
        (0..s.connections).partition(|&l| opens_at_step(&s, ramp, l) == 0);
    let (cluster, links, failure) = open_links(&s, &now_local).await;
    // A replay's trace, opened again for this thread's connections.
    let feed = match &s.phase.replay {
        Some(plan) => Feed::new(
            Arc::clone(plan),
            s.first_connection,
            s.connections,
            Instant::now(),
        )
        .map(|f| Some(Rc::new(RefCell::new(f))))
        .map_err(|reason| Error::spec(format!("{}replay.file", s.phase.prefix), reason)),
        None => Ok(None),
    };
    let (feed, failure) = match feed {
        Ok(f) => (f, failure),
        Err(e) => (None, failure.or(Some(e))),
    };
    let ready = match failure {
        Some(e) => Err(e),
        None => Ok(()),
    };
    let failed = ready.is_err();
    if s.tx.send(WorkerMsg::Ready(ready)).is_err() || failed {
        return;
    }
    let (measure_start, deadline) = match s.go.recv() {
        Ok(Go::Start {
            measure_start,
            deadline,
        }) => (measure_start, deadline),
        _ => return,
    };
    let cpu_start = thread_cpu();
    let wall_start = Instant::now();
    let load = &s.phase.spec.load;
    let pace_timer = match load.open_loop() {
        true => PaceTimer::new(load.pacing).map(|(timer, driver)| {
            tokio::task::spawn_local(driver);
            timer
        }),
        false => None,
    };
    let commands: Rc<[CompiledCommand]> = s.phase.commands.clone().into();
    // `output.client_stats`: every recorder also counts per connection of this thread.
    let per_client = s.phase.spec.output.client_stats.is_some();
    let new_recorder = || Recorder::with_clients(commands.len(), s.connections, per_client);
    let shared = Rc::new(Shared {
        recorder: RefCell::new(new_recorder()),
        budget: Cell::new(s.budget),
        stopping: Cell::new(false),
        measure_start,
        due_before: deadline,
        timeout: s.phase.spec.load.timeout.0,
        pipeline: s.phase.spec.load.pipeline as usize,
        keepalive: s.phase.spec.load.keepalive,
        batch: s.phase.spec.load.refill == crate::spec::Refill::Batch,
        idle: s.phase.spec.load.idle,
        reconnect: s.phase.spec.load.reconnect,
        retry: s.phase.spec.load.retry.clone(),
        failed: s.failed.clone(),
        reads: commands.iter().map(|c| c.reads).collect(),
        cursors: {
            let mut c = vec![false; commands.len()];
            for e in s.phase.mix.iter().filter(|e| e.cursor.is_some()) {
                for &i in &e.steps {
                    c[i] = true;
                }
            }
            c.into()
        },
        read_only: commands.iter().map(|c| c.read_only()).collect(),
        // A replay's commands are labels alone: their keys' places come from the trace's rules.
        key_index: match &s.phase.replay {
            Some(plan) => (0..commands.len()).map(|i| plan.key_index(i)).collect(),
            None => commands.iter().map(|c| c.key_index()).collect(),
        },
        connect: s.phase.connect.clone(),
        reconnects: Cell::new(0),
        connected: Cell::new(0),
        most_connected: Cell::new(0),
        live: Cell::new((links.len() + later.len()) as u32),
        ended: Cell::new(None),
        scratch: RefCell::new(vec![0; READ_BUFFER]),
        pace_timer,
        stop_at: Cell::new(None),
        gaps: RefCell::new(GapSample::new(s.seed ^ PACING_SEED ^ s.thread as u64)),
    });
    let mut pool_rng = Rng::for_stream(s.seed, s.phase_index as u64, u64::MAX - s.thread as u64);
    let total = s.total_connections as f64;
    let spawner = Rc::new(Spawner {
        phase: s.phase.clone(),
        phase_index: s.phase_index,
        seed: s.seed,
        total_connections: s.total_connections,
        first_connection: s.first_connection,
        commands: Rc::clone(&commands),
        pool: value_pool(&s.phase.spec.values, &mut pool_rng),
        key_span: s.phase.spec.keys.count(),
        sequence: Rc::new(Sequence::new(s.sequence.clone())),
        shared: Rc::clone(&shared),
        cluster,
        ramp_rates: load
            .rate_steps()
            .map(|(rates, _)| rates.iter().map(|rate| rate / total).collect()),
        feed,
    });
    let now = Instant::now();
    // Open loop: the connections' schedules start with the phase, not when this thread got
    // to them (the go-ahead's delivery, the value pool): requests due meanwhile go at once,
    // their lateness in the send lag, rather than never falling due.
    let warmup = load.warmup.map_or(Duration::ZERO, |w| w.0);
    let phase_start = measure_start.checked_sub(warmup).unwrap_or(measure_start);
    if let Some(f) = &spawner.feed {
        f.borrow_mut().start(phase_start);
    }
    let mut ctls = Vec::with_capacity(s.connections);
    for (l, link) in links {
        let ctl = Rc::new(ConnCtl::new(now));
        ctls.push(Rc::clone(&ctl));
        let end = TaskEnd::new(&shared, Some(&ctl));
        let client = spawner.client(s.first_connection + l, link, ctl, phase_start.min(now));
        tokio::task::spawn_local(async move {
            client.await;
            end.complete();
        });
    }
    for l in later {
        let ctl = Rc::new(ConnCtl::new(now));
        ctls.push(Rc::clone(&ctl));
        let step = opens_at_step(&s, ramp, l);
        let at = measure_start + ramp.map_or(Duration::ZERO, |r| r.step_duration.0 * step);
        let spawner = Rc::clone(&spawner);
        let index = s.first_connection + l;
        let end = TaskEnd::new(&shared, Some(&ctl));
        tokio::task::spawn_local(async move {
            if let Some(link) = spawner.open_later(&ctl, at, index).await {
                spawner.client(index, link, ctl, Instant::now()).await
            }
            end.complete();
        });
    }

    let mut budget_spent = false;
    let mut next_flush = measure_start + INTERVAL;
    let mut index = 0u64;
    let mut stop_at: Option<Instant> = None;
    let mut lag = Duration::ZERO;
    // This interval's most requests waiting to be sent, and longest wait, seen at a tick.
    let mut backlog = (0u64, Duration::ZERO);
    // Reconnections already in a sent interval (those of the warm-up go in the first).
    let mut counted = 0u64;
    let mut ticker = tokio::time::interval(TICK);
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let fresh = || s.recycled.try_recv().unwrap_or_else(|_| new_recorder());
    let take = || shared.recorder.replace(fresh());
    // With fault drills, the recorder is also split whenever the set of active drills
    // changes (seen at the next tick), so each drill gets the requests finished during it.
    let mut drills = Drills {
        mask: 0,
        interval: new_recorder(),
        windows: Vec::new(),
    };
    let split = |d: &mut Drills| d.add(take());
    let finish_interval = |d: &mut Drills| match &s.drills {
        Some(_) => {
            split(d);
            std::mem::replace(&mut d.interval, fresh())
        }
        None => take(),
    };
    // Requests waiting count once measured, and while new ones may still start.
    let counting = |at: Instant| at >= measure_start && !shared.starts_no_more();
    while shared.live.get() > 0 {
        let planned = ticker.tick().await;
        let now = Instant::now();
        lag = lag.max(now.saturating_duration_since(planned.into_std()));
        let stop_requested = s.stop.load(Ordering::Relaxed);
        let past_deadline = deadline.is_some_and(|d| now >= d);
        if (stop_requested || past_deadline) && !shared.stopping.get() {
            shared.stopping.set(true);
            stop_at = Some(now);
            // Requests due up to the deadline should have gone; after it none were due.
            let due_until = deadline
                .filter(|_| past_deadline)
                .map_or(now, |d| d.min(now));
            if shared.budget.get() > 0 {
                shared.stop_at.set(Some(due_until));
            }
            ctls.iter().for_each(|c| c.wake());
        }
        if let Some(at) = stop_at {
            let grace = if stop_requested {
                ABORT_GRACE
            } else {
                shared.timeout
            };
            if now.duration_since(at) >= grace {
                ctls.iter().for_each(|c| c.interrupt(Interrupt::Abort));
            }
        }
        for c in &ctls {
            if c.waiting.get() && now.duration_since(c.last_progress.get()) >= shared.timeout {
                c.interrupt(Interrupt::Timeout);
            }
        }
        if let Some(mask) = &s.drills {
            let m = mask.load(Ordering::Relaxed);
            if m != drills.mask {
                split(&mut drills);
                drills.mask = m;
            }
        }
        if let Some(c) = &spawner.cluster {
            c.maintain();
        }
        if !budget_spent && shared.budget.get() == 0 {
            // Connections asleep until their next request (open loop) or their ramp step will
            // send nothing more: wake them to end.
            budget_spent = true;
            ctls.iter().for_each(|c| c.wake());
        }
        while now >= next_flush && shared.live.get() > 0 {
            // Read at the boundary itself: what was still due by then waited across it (all
            // of it when this thread stalled past it, as nothing was sent meanwhile).
            if counting(next_flush) {
                read_waiting(&ctls, next_flush, &mut backlog);
            }
            let _ = s.tx.send(WorkerMsg::Interval {
                thread: s.thread,
                index,
                recorder: finish_interval(&mut drills),
                gauges: gauges(&shared, &mut backlog, &mut counted),
            });
            index += 1;
            next_flush += INTERVAL;
        }
        if counting(now) {
            read_waiting(&ctls, now, &mut backlog);
        }
    }
    let ended = shared.ended.get().unwrap_or_else(Instant::now);
    // The last, partial interval (or the only one, when the run ended within warm-up).
    let last = ended.saturating_duration_since(measure_start).as_nanos() / INTERVAL.as_nanos();
    let cpu_end = thread_cpu();
    let cpu = (cpu_end.0 - cpu_start.0, cpu_end.1 - cpu_start.1);
    let wall = wall_start.elapsed().as_secs_f64();
    let _ = s.tx.send(WorkerMsg::Done {
        thread: s.thread,
        index: index.max(last as u64),
        recorder: finish_interval(&mut drills),
        gauges: gauges(&shared, &mut backlog, &mut counted),
        ended,
        cpu,
        busy: if wall > 0.0 {
            ((cpu.0 + cpu.1) / wall).min(1.0)
        } else {
            0.0
        },
        gaps: shared.gaps.take(),
        lag,
        reconnects: shared.reconnects.get(),
        windows: drills.windows,
    });
}

/// Fold the requests waiting to be sent at `at` (summed over `ctls`; the longest wait) into
/// the interval's most.
fn read_waiting(ctls: &[Rc<ConnCtl>], at: Instant, backlog: &mut (u64, Duration)) {
    let (n, late) = ctls
        .iter()
        .map(|c| c.backlog(at))
        .fold((0, Duration::ZERO), |(n, l), (m, k)| (n + m, l.max(k)));
    *backlog = (backlog.0.max(n), backlog.1.max(late));
}

/// The interval's gauges; the next interval's start from now. `counted`: the reconnections
/// the intervals before had.
fn gauges(shared: &Shared, backlog: &mut (u64, Duration), counted: &mut u64) -> Gauges {
    let (waiting, behind) = std::mem::take(backlog);
    let reconnects = shared.reconnects.get();
    Gauges {
        connected: shared.take_most_connected(),
        waiting,
        behind,
        reconnects: reconnects - std::mem::replace(counted, reconnects),
    }
}

/// A worker's split of its measurements between the interval and the active fault drills.
struct Drills {
    /// The events active since the last split (bit per event index).
    mask: u64,
    /// The interval so far.
    interval: Recorder,
    /// Per event index, what finished while it was active.
    windows: Vec<(usize, Recorder)>,
}

impl Drills {
    /// Hand `part` (finished since the last split) to the interval and the active drills.
    fn add(&mut self, part: Recorder) {
        let mut bits = self.mask;
        while bits != 0 {
            let i = bits.trailing_zeros() as usize;
            bits &= bits - 1;
            match self.windows.iter_mut().find(|(e, _)| *e == i) {
                Some((_, w)) => w.merge_commands(&part),
                None => {
                    let mut w = Recorder::new(part.commands.len());
                    w.merge_commands(&part);
                    self.windows.push((i, w));
                }
            }
        }
        self.interval.merge(&part);
    }
}

/// What one connection task starts with.
enum Link {
    /// A plain connection's stream.
    Plain(Stream),
    /// Cluster mode: a stream to each node it starts with (by node index).
    Cluster(Vec<(usize, Stream)>),
}

/// In which step of the connection ramp the worker's `local`-th connection opens (0: at the
/// start). Connections open round-robin over the worker threads, so every thread carries
/// its share of each step.
fn opens_at_step(s: &WorkerSetup, ramp: Option<ConnectionsRamp>, local: usize) -> u32 {
    let rank = local * s.threads + s.thread;
    ramp.map_or(0, |r| r.step_of(rank.min(u32::MAX as usize) as u32))
}

/// Everything a worker needs to start a connection task, at the start or later.
struct Spawner {
    phase: Phase,
    phase_index: usize,
    seed: u64,
    total_connections: usize,
    /// The global index of this thread's first connection.
    first_connection: usize,
    commands: Rc<[CompiledCommand]>,
    pool: Rc<[u8]>,
    key_span: u64,
    sequence: Rc<Sequence>,
    shared: Rc<Shared>,
    cluster: Option<Rc<Cluster>>,
    /// With a rate ramp: each step's rate for one connection.
    ramp_rates: Option<Arc<[f64]>>,
    /// A replay: this thread's share of the trace.
    feed: Option<Rc<RefCell<Feed>>>,
}

impl Spawner {
    /// The task of connection `index` (global), on `link`; in open loop its schedule starts
    /// at `now`.
    fn client(
        &self,
        index: usize,
        link: Link,
        ctl: Rc<ConnCtl>,
        now: Instant,
    ) -> std::pin::Pin<Box<dyn std::future::Future<Output = ()>>> {
        let s = self;
        let index = index as u64;
        // Without distinct streams every connection replays connection 0's stream.
        let stream_index = if s.phase.spec.distinct_streams {
            index
        } else {
            0
        };
        let rng = Rng::for_stream(s.seed, s.phase_index as u64, stream_index);
        let mut generator = Generator::new(
            &s.phase,
            Rc::clone(&s.commands),
            ValueSource::new(&s.phase.spec.values, Rc::clone(&s.pool), s.key_span),
            Rc::clone(&s.sequence),
            rng,
            (index, s.total_connections as u64),
        );
        let load = &s.phase.spec.load;
        let total = s.total_connections as f64;
        let arrivals = load.arrivals.unwrap_or_default();
        let pacing = Rng::for_stream(s.seed ^ PACING_SEED, s.phase_index as u64, index);
        let stagger = index as f64 / total;
        let steps = load.rate_steps().map(|(_, step)| step);
        let pacer = match (&s.ramp_rates, steps, load.rate) {
            (Some(rates), Some(step), _) => Some(Pacer::ramped(
                now,
                s.shared.measure_start,
                step,
                rates,
                arrivals,
                stagger,
                pacing,
            )),
            (_, _, Some(rate)) => Some(Pacer::new(now, rate / total, arrivals, stagger, pacing)),
            _ => None,
        };
        let pacer = match &s.feed {
            // A replay is paced by its trace, always: the pacer drops each request sent.
            Some(feed) => {
                let cursor = Cursor::new(feed, index as usize);
                generator.replay(cursor.clone());
                let rate = load.rate.unwrap_or(1.0) / total;
                Some(Pacer::replayed(cursor, 1.0 / rate))
            }
            None => pacer,
        };
        if let Some((start, stairs)) = pacer.as_ref().and_then(Pacer::staircase) {
            ctl.ramped(start, stairs);
        }
        match (link, &s.cluster) {
            (Link::Cluster(streams), Some(cluster)) => Box::pin(
                ClusterClient::new(
                    generator,
                    pacer,
                    Rc::clone(&s.shared),
                    ctl,
                    (Rc::clone(cluster), index as usize),
                    streams,
                )
                .run(),
            ),
            (Link::Plain(stream), _) => {
                // Its counters in the recorders' per-connection slots (`output.client_stats`).
                let slot = (index as usize - self.first_connection) * self.commands.len();
                Box::pin(
                    Connection::new(generator, pacer, Rc::clone(&s.shared), ctl, slot).run(stream),
                )
            }
            // Not made (a cluster link needs the cluster view); ends at once.
            (Link::Cluster(_), None) => Box::pin(async {}),
        }
    }

    /// Connection ramp: wait until `at`, then connect (retrying with backoff, as a lost
    /// connection does); `None` when the run stops or the budget is spent first.
    async fn open_later(&self, ctl: &ConnCtl, at: Instant, index: usize) -> Option<Link> {
        let shared = &*self.shared;
        let (mut when, mut backoff) = (at, Duration::from_millis(10));
        loop {
            let mut sleep = std::pin::pin!(tokio::time::sleep_until(when.into()));
            let go = std::future::poll_fn(|cx| match ctl.check(cx.waker()) {
                Interrupt::Abort => std::task::Poll::Ready(false),
                _ if shared.starts_no_more() => std::task::Poll::Ready(false),
                _ => sleep.as_mut().poll(cx).map(|_| true),
            })
            .await;
            if !go || shared.starts_no_more() {
                return None;
            }
            let attempt = async {
                match &self.cluster {
                    None => Client::connect(&self.phase.connect)
                        .await
                        .map(|c| Link::Plain(c.into_stream())),
                    Some(cluster) => {
                        let mut streams = Vec::new();
                        let mut result = Ok(());
                        for i in cluster.nodes_for(index) {
                            match Client::connect(&cluster.connect_of(i)).await {
                                Ok(c) => streams.push((i, c.into_stream())),
                                Err(e) => {
                                    result = Err(e);
                                    break;
                                }
                            }
                        }
                        result.map(|()| Link::Cluster(streams))
                    }
                }
            };
            let link = ctl
                .unless_stopped(|| shared.starts_no_more(), attempt)
                .await?;
            match link {
                Ok(link) => return Some(link),
                Err(_) => {
                    when = Instant::now() + backoff;
                    backoff = (backoff * 2).min(Duration::from_secs(1));
                }
            }
        }
    }
}

/// Open the worker's connections numbered `locals`: one per task, or in cluster mode one per
/// task and primary (after reading the slot map). Returns the cluster view (read even when
/// no connection opens now), the links with their local numbers, and the first failure.
async fn open_links(
    s: &WorkerSetup,
    locals: &[usize],
) -> (Option<Rc<Cluster>>, Vec<(usize, Link)>, Option<Error>) {
    let mut failure = None;
    let cluster = match &s.phase.connect.cluster {
        None => None,
        Some(_) => {
            let limit = super::fd_limit::open_files_limit();
            let loaded = Cluster::load(&s.phase.connect, s.phase.binds_connections_to_nodes())
                .await
                .and_then(|c| {
                    super::fd_limit::check_cluster(&s.phase, c.primaries().len(), limit)?;
                    Ok(c)
                });
            match loaded {
                Ok(c) => Some(c),
                Err(e) => return (None, Vec::new(), Some(e)),
            }
        }
    };
    let targets = |k: usize| -> Vec<(usize, crate::plan::ConnectOptions)> {
        match &cluster {
            None => vec![(0, s.phase.connect.clone())],
            Some(c) => c
                .nodes_for(s.first_connection + k)
                .into_iter()
                .map(|i| (i, c.connect_of(i)))
                .collect(),
        }
    };
    // `load.open_jitter` (memtier's per-thread start jitter): each connection opens a drawn
    // pause after the one before it.
    let mut rng = Rng::for_stream(s.seed ^ JITTER_SEED, s.phase_index as u64, s.thread as u64);
    let mut offset = Duration::ZERO;
    let mut offsets = Vec::with_capacity(locals.len());
    for j in 0..locals.len() {
        if let (Some([lo, hi]), true) = (s.phase.spec.load.open_jitter, j > 0) {
            let (lo, hi) = (lo.0.as_micros() as i64, hi.0.as_micros() as i64);
            offset += Duration::from_micros(rng.between(lo, hi) as u64);
        }
        offsets.push(offset);
    }
    let handles: Vec<Vec<_>> = locals
        .iter()
        .zip(offsets)
        .map(|(&l, after)| {
            targets(l)
                .iter()
                .map(|(i, connect)| {
                    let (i, connect) = (*i, connect.clone());
                    tokio::task::spawn_local(async move {
                        if !after.is_zero() {
                            tokio::time::sleep(after).await;
                        }
                        Client::connect(&connect)
                            .await
                            .map(|c| (i, c.into_stream()))
                    })
                })
                .collect()
        })
        .collect();
    let mut links = Vec::with_capacity(locals.len());
    for (&l, task) in locals.iter().zip(handles) {
        let mut streams = Vec::with_capacity(task.len());
        for h in task {
            match h.await {
                Ok(Ok(c)) => streams.push(c),
                Ok(Err(e)) => failure = failure.or(Some(e)),
                Err(e) => failure = failure.or(Some(Error::Internal(e.to_string()))),
            }
        }
        links.push(match (&cluster, streams.pop()) {
            (None, Some((_, stream))) => (l, Link::Plain(stream)),
            (None, None) => continue,
            (Some(_), last) => {
                streams.extend(last);
                (l, Link::Cluster(streams))
            }
        });
    }
    (cluster, links, failure)
}

/// User and system CPU seconds of the calling thread.
#[cfg(all(unix, not(target_vendor = "apple")))]
fn thread_cpu() -> (f64, f64) {
    // SAFETY: getrusage only writes into the zeroed struct we pass.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let rc = unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut usage) };
    if rc != 0 {
        return (0.0, 0.0);
    }
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    (secs(usage.ru_utime), secs(usage.ru_stime))
}

/// User and system CPU seconds of the calling thread. macOS has no `RUSAGE_THREAD`; Mach's
/// `thread_info` gives the same two times.
#[cfg(target_vendor = "apple")]
fn thread_cpu() -> (f64, f64) {
    // SAFETY: thread_info writes at most `count` integers into the zeroed struct we pass; the
    // port from pthread_mach_thread_np is the thread's own and needs no release.
    let mut info: libc::thread_basic_info = unsafe { std::mem::zeroed() };
    let mut count = libc::THREAD_BASIC_INFO_COUNT;
    let rc = unsafe {
        libc::thread_info(
            libc::pthread_mach_thread_np(libc::pthread_self()),
            libc::THREAD_BASIC_INFO as libc::thread_flavor_t,
            (&mut info as *mut libc::thread_basic_info).cast(),
            &mut count,
        )
    };
    if rc != libc::KERN_SUCCESS {
        return (0.0, 0.0);
    }
    let secs = |t: libc::time_value_t| t.seconds as f64 + t.microseconds as f64 / 1e6;
    (secs(info.user_time), secs(info.system_time))
}

/// User and system CPU seconds of the calling thread, from Windows' `GetThreadTimes`.
#[cfg(windows)]
fn thread_cpu() -> (f64, f64) {
    use windows_sys::Win32::Foundation::FILETIME;
    use windows_sys::Win32::System::Threading::{GetCurrentThread, GetThreadTimes};
    let zero = || FILETIME {
        dwLowDateTime: 0,
        dwHighDateTime: 0,
    };
    let (mut created, mut exited, mut kernel, mut user) = (zero(), zero(), zero(), zero());
    // SAFETY: GetThreadTimes writes the four structs we pass; the pseudo-handle of the
    // current thread needs no closing.
    let ok = unsafe {
        GetThreadTimes(
            GetCurrentThread(),
            &mut created,
            &mut exited,
            &mut kernel,
            &mut user,
        )
    };
    if ok == 0 {
        return (0.0, 0.0);
    }
    // FILETIME counts 100 ns units.
    let secs =
        |t: FILETIME| (u64::from(t.dwHighDateTime) << 32 | u64::from(t.dwLowDateTime)) as f64 / 1e7;
    (secs(user), secs(kernel))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reading_counts_what_was_due_by_its_instant_over_every_connection() {
        let t0 = Instant::now();
        let s = Duration::from_millis;
        let (a, b) = (Rc::new(ConnCtl::new(t0)), Rc::new(ConnCtl::new(t0)));
        // `a` owes a request since t0, one every 250 ms; `b` owes nothing before t0 + 2 s.
        a.scheduled(t0, 0.25);
        b.scheduled(t0 + s(2000), 0.25);
        let ctls = [a, b];
        // A thread that stalled from t0 to t0 + 1.5 s reads at the boundary it passed (1 s)
        // for the interval that ended there, then at the tick for the next one.
        let mut ended = (0, Duration::ZERO);
        read_waiting(&ctls, t0 + s(1000), &mut ended);
        assert_eq!(ended, (5, s(1000)));
        let mut next = (0, Duration::ZERO);
        read_waiting(&ctls, t0 + s(1500), &mut next);
        assert_eq!(next, (7, s(1500)));
        // An interval keeps its most.
        read_waiting(&ctls, t0 + s(500), &mut ended);
        assert_eq!(ended, (5, s(1000)));
        ctls[1].scheduled(t0, 0.5);
        read_waiting(&ctls, t0 + s(1000), &mut ended);
        assert_eq!(ended, (8, s(1000)));
    }
}
