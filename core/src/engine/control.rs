//! State shared by the connection tasks of one worker thread (single-threaded: `Cell`s, no
//! locks), and the per-connection control block the housekeeping tick uses to interrupt a
//! connection blocked in a read or write.

use super::pacer::{Pacer, Staircase};
use super::timer::PaceTimer;
use crate::plan::ConnectOptions;
use crate::stats::{GapSample, Recorder};
use std::cell::{Cell, OnceCell, RefCell};
use std::future::Future;
use std::rc::Rc;
use std::task::{Poll, Waker};
use std::time::{Duration, Instant};

/// Why a connection's pending I/O was cut short.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Interrupt {
    /// Nothing to report.
    None,
    /// No reply within the timeout: fail the requests in flight, reconnect.
    Timeout,
    /// The run is being stopped: fail the requests in flight, end.
    Abort,
}

/// A connection's control block.
#[derive(Debug)]
pub struct ConnCtl {
    interrupt: Cell<Interrupt>,
    waker: RefCell<Option<Waker>>,
    /// When the connection last wrote or read.
    pub last_progress: Cell<Instant>,
    /// Whether it is waiting for replies.
    pub waiting: Cell<bool>,
    /// Connections its task holds open (counted in [`Shared::connected`]), so that a task
    /// ended by a panic still counts them out.
    open: Cell<u32>,
    /// Open loop: when its next request not yet written is due, and the seconds between its
    /// requests; the worker counts from it the requests waiting to be sent.
    schedule: Cell<Option<(Instant, f64)>>,
    /// Open loop along a rate ramp: the schedule's start and its staircase, so that requests
    /// due across a step are counted at each step's rate.
    ramp: OnceCell<(Instant, Staircase)>,
}

impl ConnCtl {
    /// A fresh control block.
    pub fn new(now: Instant) -> Self {
        ConnCtl {
            interrupt: Cell::new(Interrupt::None),
            waker: RefCell::new(None),
            last_progress: Cell::new(now),
            waiting: Cell::new(false),
            open: Cell::new(0),
            schedule: Cell::new(None),
            ramp: OnceCell::new(),
        }
    }

    /// Note where the connection's open-loop schedule stands: its next request is due at
    /// `due`, the ones after it every `gap` seconds.
    #[inline]
    pub fn scheduled(&self, due: Instant, gap: f64) {
        self.schedule.set(Some((due, gap)));
    }

    /// Note that the schedule follows a rate ramp: `staircase`, from `start`.
    pub fn ramped(&self, start: Instant, staircase: Staircase) {
        // Set once, when the connection's pacer is made.
        let _ = self.ramp.set((start, staircase));
    }

    /// Requests due by `now` but not yet written, and how long the oldest of them has been
    /// due (open loop: the pipeline is full, the connection is down, or the thread is busy).
    /// Counted from the schedule's gaps (each step's own along a ramp): exact for even
    /// arrivals, the expected number for Poisson ones.
    pub fn backlog(&self, now: Instant) -> (u64, Duration) {
        match self.schedule.get() {
            Some((due, gap)) if due <= now => {
                let late = now - due;
                let gaps = match self.ramp.get() {
                    Some((start, stairs)) => {
                        let secs = |t: Instant| t.saturating_duration_since(*start).as_secs_f64();
                        stairs.gaps_between(secs(due), secs(now))
                    }
                    None => late.as_secs_f64() / gap,
                };
                (1 + gaps as u64, late)
            }
            _ => (0, Duration::ZERO),
        }
    }

    /// Take a pending interrupt, if any, before polling I/O; else remember who to wake.
    #[inline]
    pub fn check(&self, waker: &Waker) -> Interrupt {
        let i = self.interrupt.replace(Interrupt::None);
        if i == Interrupt::None {
            let mut slot = self.waker.borrow_mut();
            if !slot.as_ref().is_some_and(|w| w.will_wake(waker)) {
                *slot = Some(waker.clone());
            }
        }
        i
    }

    /// `fut`'s output, or `None` if the connection is aborted or `give_up()` turns true first
    /// (looked at whenever the connection is woken): a connect or handshake that hangs, up to
    /// its timeout, must not hold up the end of the run.
    pub async fn unless_stopped<F: Future>(
        &self,
        give_up: impl Fn() -> bool,
        fut: F,
    ) -> Option<F::Output> {
        let mut fut = std::pin::pin!(fut);
        std::future::poll_fn(|cx| {
            let mut why = self.check(cx.waker());
            if why == Interrupt::Timeout {
                // Taken without leaving the waker: look again so a later stop reaches us.
                why = self.check(cx.waker());
            }
            if why == Interrupt::Abort || give_up() {
                return Poll::Ready(None);
            }
            fut.as_mut().poll(cx).map(Some)
        })
        .await
    }

    /// Wake the connection without interrupting it, so it looks at the shared state again
    /// (an open-loop connection sleeping until its next request notices the run stopping).
    pub fn wake(&self) {
        if let Some(w) = self.waker.borrow_mut().take() {
            w.wake();
        }
    }

    /// Interrupt the connection's pending I/O (an abort is never downgraded to a timeout).
    pub fn interrupt(&self, why: Interrupt) {
        if self.interrupt.get() != Interrupt::Abort {
            self.interrupt.set(why);
        }
        if let Some(w) = self.waker.borrow_mut().take() {
            w.wake();
        }
    }
}

/// State shared by one worker thread's connections.
#[derive(Debug)]
pub struct Shared {
    /// This interval's measurements.
    pub recorder: RefCell<Recorder>,
    /// Measured requests this thread may still send (`u64::MAX`: no limit).
    pub budget: Cell<u64>,
    /// Set when no new requests may start (deadline, stop); in-flight ones still finish.
    pub stopping: Cell<bool>,
    /// Requests started at or after this instant are measured (the end of warm-up).
    pub measure_start: Instant,
    /// Open loop: the end of the measured duration, when the phase has one. A request due
    /// at or after it is not due in this phase: never sent, rather than sent until the
    /// worker's tick notices the end.
    pub due_before: Option<Instant>,
    /// Reply timeout.
    pub timeout: Duration,
    /// Requests in flight per connection.
    pub pipeline: usize,
    /// `load.keepalive`: false opens a new connection for each batch of requests.
    pub keepalive: bool,
    /// `load.refill = "batch"`: a connection sends its next requests only once every reply
    /// of the previous ones is in.
    pub batch: bool,
    /// `load.idle`: hold the connections, send nothing.
    pub idle: bool,
    /// `load.reconnect`: reopen after every N requests; waits and attempts after a loss.
    pub reconnect: crate::spec::Reconnect,
    /// `load.retry`: resend failed requests.
    pub retry: Option<crate::spec::Retry>,
    /// `output.failed_keys`: the file of the requests that failed for good.
    pub failed: Option<std::sync::Arc<super::failed::FailedKeys>>,
    /// Whether each command (by index) reads, for hit/miss counting.
    pub reads: Box<[bool]>,
    /// Whether each command (by index) follows `{cursor}`: its replies give the next cursor.
    pub cursors: Box<[bool]>,
    /// Whether each command (by index) may be served by a replica (`target.read_from`).
    pub read_only: Box<[bool]>,
    /// Cluster mode: the argument each command (by index) is routed by, its first key
    /// (`None`: it has none, any node serves it).
    pub key_index: Box<[Option<usize>]>,
    /// How to (re)connect.
    pub connect: ConnectOptions,
    /// Reconnections made.
    pub reconnects: Cell<u64>,
    /// Connections open now.
    pub connected: Cell<u32>,
    /// Most connections open at once since [`Shared::take_most_connected`] last read it:
    /// kept as they open, so a peak shorter than the housekeeping tick is not missed.
    pub most_connected: Cell<u32>,
    /// Connection tasks still running.
    pub live: Cell<u32>,
    /// When the last connection task ended.
    pub ended: Cell<Option<Instant>>,
    /// Read buffer ([`READ_BUFFER`](super::connection::READ_BUFFER) bytes) shared by the
    /// connections that have no partial reply pending and no buffer of their own yet:
    /// thousands of low-rate connections whose replies arrive whole need none. A `Vec`, as
    /// io_uring hands its receive buffers over by swapping (its length may change then).
    pub scratch: RefCell<Vec<u8>>,
    /// Open loop with `precise` or `spin` pacing: the worker's send timer.
    pub pace_timer: Option<Rc<PaceTimer>>,
    /// When the phase stopped taking new requests (its deadline, or the stop): measured
    /// requests due before it and never sent are counted as unsent.
    pub stop_at: Cell<Option<Instant>>,
    /// Open loop: a sample of the gaps between measured sends, for the arrivals check.
    pub gaps: RefCell<GapSample>,
}

/// Unsent requests a connection lists one by one at the end of a phase; more are counted
/// from its schedule's gap.
const MAX_UNSENT_LISTED: u64 = 1_000_000;

/// Held by every connection task: when the task ends, however it ends, one fewer is live.
/// A panic in a task (a bug) then ends only that task: the worker, which waits for every task
/// to end, still finishes the phase and reports, rather than wait for ever. The report shows
/// it as one `INTERNAL` error (the requests the task had in flight are not accounted for).
pub struct TaskEnd {
    shared: Rc<Shared>,
    ctl: Option<Rc<ConnCtl>>,
    /// Set when the task's future completed (not when it was dropped mid-way by a panic).
    completed: bool,
}

impl TaskEnd {
    /// The guard of a task of `shared`'s, with its control block when it has one.
    pub fn new(shared: &Rc<Shared>, ctl: Option<&Rc<ConnCtl>>) -> Self {
        TaskEnd {
            shared: Rc::clone(shared),
            ctl: ctl.map(Rc::clone),
            completed: false,
        }
    }

    /// The task's work is done: end it as completed. (A method taking the guard by value, so
    /// that the task's future owns the whole guard, not only a field of it.)
    pub fn complete(mut self) {
        self.completed = true;
    }
}

impl Drop for TaskEnd {
    fn drop(&mut self) {
        if let Some(ctl) = &self.ctl {
            ctl.waiting.set(false);
            // An ended connection has nothing waiting to be sent.
            ctl.schedule.set(None);
            // Its connections are closed now (dropped with the task), whether or not the task
            // got to say so.
            self.shared.closed(ctl, ctl.open.get());
        }
        if !self.completed {
            // `try_`: the panic may have struck while the recorder was borrowed.
            if let Ok(mut rec) = self.shared.recorder.try_borrow_mut() {
                if let Some(c) = rec.commands.first_mut() {
                    c.ops += 1;
                    c.errors += 1;
                    c.error_kinds.add(b"INTERNAL", 1);
                }
            }
        }
        self.shared.task_ended();
    }
}

impl Shared {
    /// A connection task ended: one fewer live, and the end of the last one is noted.
    pub fn task_ended(&self) {
        self.live.set(self.live.get() - 1);
        let now = Instant::now();
        if self.ended.get().is_none_or(|e| e < now) {
            self.ended.set(Some(now));
        }
    }

    /// `ctl`'s task opened `n` connections.
    #[inline]
    pub fn opened(&self, ctl: &ConnCtl, n: u32) {
        ctl.open.set(ctl.open.get() + n);
        let now = self.connected.get() + n;
        self.connected.set(now);
        self.most_connected.set(self.most_connected.get().max(now));
    }

    /// The most connections open at once since the last call (or the start), and a new
    /// count from those open now.
    pub fn take_most_connected(&self) -> u32 {
        self.most_connected.replace(self.connected.get())
    }

    /// `ctl`'s task closed `n` of its connections.
    #[inline]
    pub fn closed(&self, ctl: &ConnCtl, n: u32) {
        ctl.open.set(ctl.open.get() - n);
        self.connected.set(self.connected.get() - n);
    }

    /// Open loop: whether a request due at `at` falls after the measured duration's end,
    /// so that it is neither sent nor waited for.
    #[inline]
    pub fn after_end(&self, at: Instant) -> bool {
        self.due_before.is_some_and(|end| at >= end)
    }

    /// No request may start any more: the phase is stopping, or the budget is spent.
    #[inline]
    pub fn starts_no_more(&self) -> bool {
        self.stopping.get() || self.budget.get() == 0
    }

    /// At the end of an open-loop connection: record the measured requests its schedule had
    /// due before the phase stopped and that it never sent, each with how long it had been due.
    pub fn count_unsent(&self, pacer: &mut Pacer) {
        let Some(stop) = self.stop_at.get() else {
            return; // ended by its budget, or still running: nothing was left unsent
        };
        let mut unsent = crate::stats::Timings::default();
        let mut n = 0u64;
        while pacer.due() < stop {
            if pacer.waiting() {
                // A replay's look-again time, not a request: read on, or nothing more was due.
                pacer.refresh();
                if pacer.waiting() {
                    break;
                }
                continue;
            }
            let due = pacer.due();
            if due >= self.measure_start {
                unsent.record(stop.duration_since(due).as_nanos() as u64);
                n += 1;
                if n == MAX_UNSENT_LISTED {
                    // A connection down for long at a high rate: the rest by its gaps, each
                    // at the least wait (still a lower bound).
                    let rest = stop.duration_since(due).as_secs_f64() / pacer.gap();
                    unsent.record_n(1, rest as u64);
                    break;
                }
            }
            pacer.advance();
        }
        if n > 0 {
            let mut rec = self.recorder.borrow_mut();
            rec.unsent
                .get_or_insert_with(Default::default)
                .merge(&unsent);
        }
    }

    /// Take one request from the budget; false when it is spent.
    #[inline]
    pub fn claim(&self) -> bool {
        match self.budget.get() {
            0 => false,
            u64::MAX => true,
            n => {
                self.budget.set(n - 1);
                true
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::pacer::Pacer;
    use crate::engine::rng::Rng;
    use crate::spec::Arrivals;
    use std::sync::Arc;

    #[test]
    fn requests_waiting_across_ramp_steps_are_counted_at_each_steps_rate() {
        // One connection at 100/s for a second, then 1,000/s, then 250/s; a pacer opened
        // 0.4 s into the ramp.
        let origin = Instant::now();
        let start = origin + Duration::from_millis(400);
        let rates: Arc<[f64]> = vec![100.0, 1000.0, 250.0].into();
        let ramp = |phase| {
            let step = Duration::from_secs(1);
            Pacer::ramped(
                start,
                origin,
                step,
                &rates,
                Arrivals::Uniform,
                phase,
                Rng::new(1),
            )
        };
        for (phase, sent) in [(0.0, 0), (0.5, 30), (0.25, 59), (0.0, 61), (0.75, 1300)] {
            let mut p = ramp(phase);
            for _ in 0..sent {
                p.advance();
            }
            let ctl = ConnCtl::new(start);
            let (base, stairs) = p.staircase().unwrap();
            ctl.ramped(base, stairs);
            ctl.scheduled(p.due(), p.gap());
            for ms in [0.3, 250.3, 599.7, 900.3, 1600.3, 2100.3, 3000.3] {
                let now = start + Duration::from_secs_f64(ms / 1000.0);
                // The truth: the pacer's own intended times from its next one up to `now`.
                let mut q = p.clone();
                let mut due = 0;
                while q.due() <= now {
                    due += 1;
                    q.advance();
                }
                let (n, late) = ctl.backlog(now);
                assert_eq!(n, due, "phase {phase}, {sent} sent, at {ms} ms");
                assert_eq!(late, now.saturating_duration_since(p.due()));
            }
        }
        // Without a ramp the one gap counts.
        let ctl = ConnCtl::new(start);
        ctl.scheduled(start, 0.01);
        assert_eq!(ctl.backlog(start + Duration::from_millis(995)).0, 100);
    }

    #[test]
    fn a_task_that_panics_is_still_counted_out() {
        let shared = Rc::new(Shared {
            recorder: RefCell::new(Recorder::new(1)),
            budget: Cell::new(0),
            stopping: Cell::new(false),
            measure_start: Instant::now(),
            due_before: None,
            timeout: Duration::from_secs(1),
            pipeline: 1,
            keepalive: true,
            batch: false,
            idle: false,
            reconnect: crate::spec::Reconnect::default(),
            retry: None,
            failed: None,
            reads: Box::new([true]),
            cursors: Box::new([false]),
            read_only: Box::new([true]),
            key_index: Box::new([Some(1)]),
            connect: crate::spec::Target::default().resolve("").unwrap(),
            reconnects: Cell::new(0),
            connected: Cell::new(0),
            most_connected: Cell::new(0),
            live: Cell::new(2),
            ended: Cell::new(None),
            scratch: RefCell::new(Vec::new()),
            pace_timer: None,
            stop_at: Cell::new(None),
            gaps: RefCell::new(GapSample::default()),
        });
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let local = tokio::task::LocalSet::new();
        local.block_on(&rt, async {
            let ctl = Rc::new(ConnCtl::new(Instant::now()));
            ctl.waiting.set(true);
            let (s, c) = (Rc::clone(&shared), Rc::clone(&ctl));
            let bug = tokio::task::spawn_local(async move {
                let _end = TaskEnd::new(&s, Some(&c));
                s.opened(&c, 2);
                s.closed(&c, 1);
                tokio::task::yield_now().await;
                panic!("a bug in a connection task");
            });
            let s = Rc::clone(&shared);
            tokio::task::yield_now().await;
            assert_eq!(shared.connected.get(), 1, "the task's connection is open");
            assert_eq!(shared.take_most_connected(), 2, "both were open at once");
            assert_eq!(shared.take_most_connected(), 1, "from those open now");
            assert!(bug.await.unwrap_err().is_panic());
            assert_eq!(shared.live.get(), 1);
            assert!(!ctl.waiting.get());
            // The connection went with the task.
            assert_eq!(shared.connected.get(), 0);
            tokio::task::spawn_local(async move {
                TaskEnd::new(&s, None).complete();
            })
            .await
            .unwrap();
        });
        assert_eq!(shared.live.get(), 0);
        assert!(shared.ended.get().is_some());
        // The panic, and only it, shows in the report.
        let rec = shared.recorder.borrow();
        assert_eq!((rec.commands[0].ops, rec.commands[0].errors), (1, 1));
    }
}
