//! Open-loop send timers: how a connection waits for its next intended send time.
//!
//! tokio's timer wheel has a 1 ms tick, so a request waiting on it goes out up to 2 ms late:
//! on a fast server that lateness, not the server, was most of open-loop latency. With
//! `load.pacing = "precise"` each worker thread has one `timerfd` (Linux) with 1 us of timer
//! slack, registered with the thread's runtime and armed at an absolute time: the earliest
//! deadline of its connections less the *lead*, the median of the timer's own wake-up delays
//! seen so far (at most [`MAX_LEAD`]; tens of microseconds on a virtual machine). When it
//! fires, the driver task wakes the connections whose firing time has come; one woken before
//! its deadline polls until the deadline, yielding to the runtime in between so replies are
//! still read. `spin` is the same with a fixed lead of [`SPIN_AHEAD`]: on time nearly always,
//! for more polling. `coarse` keeps tokio's timer. Elsewhere than Linux (no timerfd) every
//! mode is `coarse`.

use crate::spec::Pacing;
use std::cell::{Cell, RefCell};
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};
use tokio::time::Sleep;

/// With `spin`, how long before a deadline the timer fires and the connection starts polling.
pub const SPIN_AHEAD: Duration = Duration::from_micros(50);

/// With `precise`, the most the timer is set early to make up for its wake-up delay.
pub const MAX_LEAD: Duration = Duration::from_micros(50);

/// How far one observation moves the lead's median estimate (nanoseconds).
const LEAD_STEP_NS: u64 = 1_000;

/// A worker thread's deadlines: connections register theirs, the driver task wakes them.
pub struct PaceTimer {
    /// `spin`: a fixed lead; else it follows the timer's wake-up delays.
    spin: bool,
    /// How long before a deadline the timer fires (nanoseconds).
    lead_ns: Cell<u64>,
    inner: RefCell<Inner>,
    fd: io::TimerIo,
}

#[derive(Default)]
struct Inner {
    /// (firing time, deadline, slot): an entry is stale once its slot's deadline changed.
    heap: BinaryHeap<Reverse<(Instant, Instant, u32)>>,
    slots: Vec<Slot>,
    /// What the timer is armed for.
    armed: Option<Instant>,
}

#[derive(Default)]
struct Slot {
    deadline: Option<Instant>,
    /// Whether the heap holds an entry for `deadline` that has not fired.
    queued: bool,
    waker: Option<Waker>,
}

impl std::fmt::Debug for PaceTimer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PaceTimer")
            .field("spin", &self.spin)
            .field("lead_ns", &self.lead_ns.get())
            .finish()
    }
}

impl PaceTimer {
    /// A timer for one worker thread (`spin` with `Pacing::Spin`); `None` for
    /// `Pacing::Coarse`, or when the system refuses a timer (the connections then use tokio's).
    /// Must be called within the worker's runtime; the returned driver future must be
    /// spawned on it.
    pub fn new(pacing: Pacing) -> Option<(Rc<PaceTimer>, impl Future<Output = ()>)> {
        if pacing == Pacing::Coarse || !cfg!(target_os = "linux") {
            return None;
        }
        linux::fine_timer_slack();
        let fd = linux::TimerFd::new().ok()?;
        let spin = pacing == Pacing::Spin;
        let timer = Rc::new(PaceTimer {
            spin,
            lead_ns: Cell::new(if spin {
                SPIN_AHEAD.as_nanos() as u64
            } else {
                0
            }),
            inner: RefCell::default(),
            fd: io::register(fd)?,
        });
        let driver = Rc::clone(&timer).drive();
        Some((timer, driver))
    }

    /// A waiting place for one connection.
    pub fn slot(self: &Rc<Self>) -> Deadline {
        let mut inner = self.inner.borrow_mut();
        inner.slots.push(Slot::default());
        Deadline::Precise {
            timer: Rc::clone(self),
            slot: (inner.slots.len() - 1) as u32,
        }
    }

    /// When the timer should fire for a connection due at `at`.
    fn fire_at(&self, at: Instant) -> Instant {
        let lead = Duration::from_nanos(self.lead_ns.get());
        at.checked_sub(lead).unwrap_or(at)
    }

    /// Whether a connection due at `at` should poll again at once rather than sleep: the
    /// timer has fired for it.
    fn spins(&self, slot: u32, at: Instant, now: Instant) -> bool {
        let inner = self.inner.borrow();
        let s = &inner.slots[slot as usize];
        (s.deadline == Some(at) && !s.queued) || self.fire_at(at) <= now
    }

    fn register(&self, slot: u32, at: Instant, waker: &Waker) {
        let fire = self.fire_at(at);
        let mut inner = self.inner.borrow_mut();
        let s = &mut inner.slots[slot as usize];
        match &mut s.waker {
            Some(w) if w.will_wake(waker) => {}
            w => *w = Some(waker.clone()),
        }
        if s.deadline == Some(at) && s.queued {
            return;
        }
        s.deadline = Some(at);
        s.queued = true;
        inner.heap.push(Reverse((fire, at, slot)));
        if inner.armed.is_none_or(|a| fire < a) {
            inner.armed = Some(fire);
            self.arm(fire);
        }
    }

    fn clear(&self, slot: u32) {
        self.inner.borrow_mut().slots[slot as usize].deadline = None;
    }

    /// Wake every connection whose firing time has come; returns the next firing time.
    fn fire(&self, now: Instant) -> Option<Instant> {
        let mut inner = self.inner.borrow_mut();
        let Inner { heap, slots, .. } = &mut *inner;
        while let Some(&Reverse((fire, at, slot))) = heap.peek() {
            if fire > now {
                break;
            }
            heap.pop();
            let s = &mut slots[slot as usize];
            // Stale unless the slot still waits for this deadline.
            if s.deadline == Some(at) && s.queued {
                s.queued = false;
                if let Some(w) = s.waker.take() {
                    w.wake();
                }
            }
        }
        let next = heap.peek().map(|Reverse((t, _, _))| *t);
        inner.armed = next;
        next
    }

    /// With `precise`: move the lead towards the median of the timer's wake-up delays (up
    /// when this one was later than the lead, down when earlier), within [`MAX_LEAD`].
    fn learn(&self, delay: Duration) {
        if self.spin {
            return;
        }
        let lead = self.lead_ns.get();
        let next = match delay.as_nanos() as u64 > lead {
            true => (lead + LEAD_STEP_NS).min(MAX_LEAD.as_nanos() as u64),
            false => lead.saturating_sub(LEAD_STEP_NS),
        };
        self.lead_ns.set(next);
    }

    fn arm(&self, at: Instant) {
        io::timer(&self.fd).arm(at);
    }

    /// The driver: wait for the timer, wake who is due, re-arm.
    async fn drive(self: Rc<Self>) {
        loop {
            if !io::fired(&self.fd).await {
                return;
            }
            let now = Instant::now();
            let armed = self.inner.borrow().armed;
            if let Some(t) = armed.filter(|t| *t <= now) {
                self.learn(now - t);
            }
            // The connections woken run after this task yields, in this pass of the runtime.
            if let Some(next) = self.fire(now) {
                self.arm(next);
            }
        }
    }
}

/// One connection's wait for its next send time, on the worker's [`PaceTimer`] or, with
/// `coarse` pacing, on a tokio timer of its own.
pub enum Deadline {
    /// On the worker's precise timer.
    Precise {
        /// The worker's timer.
        timer: Rc<PaceTimer>,
        /// This connection's place in it.
        slot: u32,
    },
    /// tokio's millisecond timer.
    Coarse(Pin<Box<Sleep>>),
}

impl Deadline {
    /// The wait of a connection: on `timer` when there is one, else on tokio's.
    pub fn new(timer: Option<&Rc<PaceTimer>>) -> Self {
        match timer {
            Some(t) => t.slot(),
            None => Deadline::Coarse(Box::pin(tokio::time::sleep(Duration::ZERO))),
        }
    }

    /// Ready once `at` has come.
    pub fn poll_at(&mut self, cx: &mut Context<'_>, at: Instant) -> Poll<()> {
        match self {
            Deadline::Coarse(sleep) => {
                if sleep.deadline().into_std() != at {
                    sleep.as_mut().reset(at.into());
                }
                sleep.as_mut().poll(cx)
            }
            Deadline::Precise { timer, slot } => {
                let now = Instant::now();
                if at <= now {
                    timer.clear(*slot);
                    return Poll::Ready(());
                }
                if timer.spins(*slot, at, now) {
                    // Poll again after the runtime has looked at the sockets.
                    cx.waker().wake_by_ref();
                    return Poll::Pending;
                }
                timer.register(*slot, at, cx.waker());
                Poll::Pending
            }
        }
    }
}

/// The timer registered with the runtime: a descriptor in its reactor on Unix; off Unix (where
/// [`PaceTimer::new`] never makes one) the stand-in timer itself.
#[cfg(unix)]
mod io {
    use super::linux::TimerFd;
    use tokio::io::unix::AsyncFd;

    pub type TimerIo = AsyncFd<TimerFd>;

    pub fn register(fd: TimerFd) -> Option<TimerIo> {
        // SAFETY: the `TimerFd` owns its descriptor, which stays open (and is the one
        // `as_raw_fd` gives) until it is dropped with the `AsyncFd`.
        unsafe { AsyncFd::register_with_interest(fd, tokio::io::Interest::READABLE) }.ok()
    }

    pub fn timer(io: &TimerIo) -> &TimerFd {
        io.get_ref()
    }

    /// Wait until the timer has fired; false when the runtime is going away.
    pub async fn fired(io: &TimerIo) -> bool {
        let Ok(mut guard) = io.readable().await else {
            return false;
        };
        // Not read: re-arming the timer resets its expiry count (one system call fewer per
        // wake), and the runtime's readiness is edge-triggered.
        guard.clear_ready();
        true
    }
}

#[cfg(not(unix))]
mod io {
    use super::linux::TimerFd;

    pub type TimerIo = TimerFd;

    pub fn register(fd: TimerFd) -> Option<TimerIo> {
        Some(fd)
    }

    pub fn timer(io: &TimerIo) -> &TimerFd {
        io
    }

    pub async fn fired(io: &TimerIo) -> bool {
        io.never()
    }
}

/// The timerfd; off Linux (where [`PaceTimer::new`] never makes one) a stand-in that builds.
#[cfg(target_os = "linux")]
mod linux {
    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
    use std::time::Instant;

    /// A `CLOCK_MONOTONIC` timerfd (the clock of `Instant` on Linux), non-blocking.
    pub struct TimerFd {
        fd: OwnedFd,
        /// The same moment read as an `Instant` and as a `timespec`, to convert between them.
        base: (Instant, libc::timespec),
    }

    impl TimerFd {
        pub fn new() -> std::io::Result<TimerFd> {
            // SAFETY: plain system calls; the descriptor is owned from here on.
            let raw = unsafe {
                libc::timerfd_create(
                    libc::CLOCK_MONOTONIC,
                    libc::TFD_NONBLOCK | libc::TFD_CLOEXEC,
                )
            };
            if raw < 0 {
                return Err(std::io::Error::last_os_error());
            }
            // SAFETY: `raw` is a new descriptor nobody else owns.
            let fd = unsafe { OwnedFd::from_raw_fd(raw) };
            let mut ts = libc::timespec {
                tv_sec: 0,
                tv_nsec: 0,
            };
            let now = Instant::now();
            // SAFETY: `ts` is a valid timespec to write.
            unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
            Ok(TimerFd {
                fd,
                base: (now, ts),
            })
        }

        /// Fire once at `at` (at once when it has passed).
        pub fn arm(&self, at: Instant) {
            let (i0, t0) = self.base;
            let ns = t0.tv_sec as i128 * 1_000_000_000
                + t0.tv_nsec as i128
                + match at.checked_duration_since(i0) {
                    Some(d) => d.as_nanos() as i128,
                    None => -(i0.duration_since(at).as_nanos() as i128),
                };
            // 0 would disarm the timer: a time in the past fires at once.
            let ns = ns.max(1);
            let spec = libc::itimerspec {
                it_interval: libc::timespec {
                    tv_sec: 0,
                    tv_nsec: 0,
                },
                it_value: libc::timespec {
                    tv_sec: (ns / 1_000_000_000) as libc::time_t,
                    tv_nsec: (ns % 1_000_000_000) as libc::c_long,
                },
            };
            // SAFETY: a valid descriptor and itimerspec; the old value is not asked for.
            unsafe {
                libc::timerfd_settime(
                    self.fd.as_raw_fd(),
                    libc::TFD_TIMER_ABSTIME,
                    &spec,
                    std::ptr::null_mut(),
                )
            };
        }
    }

    impl AsRawFd for TimerFd {
        fn as_raw_fd(&self) -> RawFd {
            self.fd.as_raw_fd()
        }
    }

    /// Timer slack of 1 us for the calling thread (the default 50 us would make every
    /// wake-up that late).
    pub fn fine_timer_slack() {
        // SAFETY: affects only the calling thread, a worker of ours.
        unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1000 as libc::c_ulong) };
    }
}

#[cfg(not(target_os = "linux"))]
mod linux {
    use std::time::Instant;

    /// Never made: there is no timerfd here.
    pub struct TimerFd(std::convert::Infallible);

    impl TimerFd {
        pub fn new() -> std::io::Result<TimerFd> {
            Err(std::io::ErrorKind::Unsupported.into())
        }
        pub fn arm(&self, _at: Instant) {
            match self.0 {}
        }
        #[cfg(not(unix))]
        pub fn never(&self) -> ! {
            match self.0 {}
        }
    }

    #[cfg(unix)]
    impl std::os::fd::AsRawFd for TimerFd {
        fn as_raw_fd(&self) -> std::os::fd::RawFd {
            match self.0 {}
        }
    }

    pub fn fine_timer_slack() {}
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    /// The thread's timer slack in nanoseconds.
    fn slack() -> i32 {
        // SAFETY: reads the calling thread's own setting.
        unsafe { libc::prctl(libc::PR_GET_TIMERSLACK) }
    }

    #[test]
    fn a_paced_worker_thread_gets_a_timer_slack_of_one_microsecond_and_only_it() {
        let ours = slack();
        let (before, after) = std::thread::spawn(|| {
            let before = slack();
            super::linux::fine_timer_slack();
            (before, slack())
        })
        .join()
        .unwrap();
        // The kernel's default is 50 us; a late wake-up by that much is what the call avoids.
        assert_eq!(after, 1000, "slack before the call: {before} ns");
        assert_eq!(slack(), ours, "the calling thread's slack changed");
    }
}
