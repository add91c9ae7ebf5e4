//! One connection's task: keep up to `pipeline` requests in flight, write them, frame the
//! replies, record each with its own start and end time; on failure, count what was in
//! flight and reconnect.
//!
//! Timing: a request starts at the clock reading taken just before the write that carries
//! it, and ends at the reading taken when the read that delivered the last byte of its reply
//! returned. One reading per write and one per read: replies that arrived in one read
//! arrived together.

use super::control::{ConnCtl, Interrupt, Shared};
use super::generator::Generator;
use super::pacer::Pacer;
use super::pending::Pending;
use super::retry::Retries;
use super::timer::Deadline;
use crate::net::{Client, Stream};
use crate::resp::{Framer, Reply};
use crate::spec::Retry;
use std::collections::VecDeque;
use std::future::poll_fn;
use std::future::Future;
use std::rc::Rc;
use std::task::Poll;
use std::time::{Duration, Instant};

/// Retry settings that keep each request's bytes until its reply and resend none.
fn keep_without_resending() -> Retry {
    Retry {
        attempts: Some(0),
        on: Vec::new(),
        delay: crate::spec::SpecDuration(Duration::ZERO),
        backoff: 1.0,
        queue: 0,
    }
}

/// Why a connection stopped carrying traffic.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Failure {
    /// The server closed the connection, or the socket failed.
    Connection,
    /// The reply stream was not valid RESP.
    Protocol,
    /// Interrupted by the housekeeping tick.
    Interrupted(Interrupt),
    /// `keepalive = false`: the replies are in; close and open a new connection.
    Recycle,
}

/// Read buffer of a busy connection: one read takes a whole pipeline's replies.
pub(super) const READ_BUFFER: usize = 64 * 1024;
/// Read buffer a connection starts with once it needs one of its own; it grows to
/// [`READ_BUFFER`] on the first read that fills it, so thousands of idle-ish connections
/// stay small (the zeroed 64 KiB would be resident from the start).
pub(super) const FIRST_READ_BUFFER: usize = 4 * 1024;

/// The state of one connection.
pub struct Connection {
    generator: Generator,
    /// Open loop: the schedule of intended send times, and the wait for them.
    pacer: Option<(Pacer, Deadline)>,
    /// Open loop: when the last measured request went out, less any wait for room (for the
    /// arrivals sample).
    last_sent: Option<Instant>,
    /// Open loop: since when a request could be written (the connection up, its pipeline
    /// with room): a request due before waited for the server, not for the client.
    room_at: Instant,
    /// Open loop: how late the client sent the requests whose replies made that room (the
    /// latest of them, when one read answered several), which a request held back for it
    /// inherits in the arrivals sample.
    room_late: Duration,
    /// The latest `own_late_ns` of the requests the last read answered.
    answered_late: u32,
    shared: Rc<Shared>,
    ctl: Rc<ConnCtl>,
    framer: Framer,
    inflight: VecDeque<Pending>,
    wbuf: Vec<u8>,
    /// The connection's own read buffer: empty until a read leaves a partial reply (until
    /// then it reads into the worker's shared scratch buffer), then at least
    /// [`FIRST_READ_BUFFER`] bytes for good.
    rbuf: Vec<u8>,
    rstart: usize,
    rend: usize,
    now: Instant,
    /// Requests started on the current stream (`load.reconnect.every`).
    sent_on_stream: u32,
    /// `load.retry`: copies of the requests in flight, and those waiting to be resent.
    retries: Option<Box<Retries>>,
    /// Its first slot in a recorder's per-connection counters (`output.client_stats`).
    client_slot: usize,
}

impl Connection {
    /// A connection that will generate with `generator`, paced by `pacer` in open loop.
    pub fn new(
        generator: Generator,
        pacer: Option<Pacer>,
        shared: Rc<Shared>,
        ctl: Rc<ConnCtl>,
        client_slot: usize,
    ) -> Self {
        let pipeline = shared.pipeline;
        // `output.failed_keys` needs the requests' bytes too: kept, never resent.
        let keep_only = shared.failed.is_some().then(keep_without_resending);
        let retries = shared
            .retry
            .as_ref()
            .or(keep_only.as_ref())
            .map(|r| Box::new(Retries::new(r, pipeline)));
        Connection {
            generator,
            pacer: pacer.map(|p| (p, Deadline::new(shared.pace_timer.as_ref()))),
            last_sent: None,
            room_at: Instant::now(),
            room_late: Duration::ZERO,
            answered_late: 0,
            shared,
            ctl,
            framer: Framer::new(),
            inflight: VecDeque::with_capacity(pipeline),
            // Grows to the largest batch on the first requests, then stays: thousands of
            // low-rate connections each write a few dozen bytes at a time.
            wbuf: Vec::new(),
            rbuf: Vec::new(),
            rstart: 0,
            rend: 0,
            now: Instant::now(),
            sent_on_stream: 0,
            retries,
            client_slot,
        }
    }

    /// Run until there is nothing more to send and nothing in flight, or until aborted.
    ///
    /// Not an `async fn`: its body would hold `self` twice (the argument, and the local it
    /// is moved into), doubling every connection task's size; the block uses it in place.
    #[allow(clippy::manual_async_fn)] // on purpose, see above
    pub fn run(mut self, first: Stream) -> impl Future<Output = ()> {
        async move {
            let mut stream = Some(first);
            self.shared.opened(&self.ctl, 1);
            loop {
                let Some(s) = stream.as_mut() else {
                    match self.reconnect().await {
                        Some(s) => {
                            self.sent_on_stream = 0;
                            stream = Some(s);
                            continue;
                        }
                        None => break,
                    }
                };
                match self.drive(s).await {
                    Ok(()) => break,
                    Err(Failure::Recycle) => {
                        stream = None; // closes the socket
                        self.shared.closed(&self.ctl, 1);
                        // A failed connect falls back to reconnecting with backoff, counted.
                        let attempt = self
                            .ctl
                            .unless_stopped(|| self.finished(), connect(&self.shared));
                        let Some(attempt) = attempt.await else {
                            break; // the run stopped meanwhile
                        };
                        if let Ok(client) = attempt {
                            self.shared.opened(&self.ctl, 1);
                            self.now = Instant::now();
                            self.room_at = self.now;
                            self.room_late = Duration::ZERO;
                            self.sent_on_stream = 0;
                            stream = Some(client.into_stream());
                        }
                    }
                    Err(failure) => {
                        // An interrupted read leaves the flag set: an idle connection would
                        // then be timed out again and again.
                        self.ctl.waiting.set(false);
                        stream = None;
                        self.shared.closed(&self.ctl, 1);
                        let kind: &[u8] = match failure {
                            Failure::Connection => b"CONNECTION",
                            Failure::Protocol => b"PROTOCOL",
                            Failure::Interrupted(Interrupt::Timeout) => b"TIMEOUT",
                            Failure::Interrupted(_) | Failure::Recycle => b"ABORTED",
                        };
                        self.fail_inflight(kind);
                        if failure == Failure::Interrupted(Interrupt::Abort) {
                            break;
                        }
                    }
                }
            }
            if let Some((p, _)) = &mut self.pacer {
                self.shared.count_unsent(p);
            }
            // Requests still waiting to be resent failed for good.
            if let Some(r) = self.retries.as_deref_mut() {
                let mut rec = self.shared.recorder.borrow_mut();
                for (p, kind, bytes) in r.abandon() {
                    if let Some(log) = &self.shared.failed {
                        log.log(
                            p.cmd as usize,
                            self.shared.key_index[p.cmd as usize],
                            &bytes,
                            &kind,
                            p.tries,
                        );
                    }
                    if !p.measured {
                        continue;
                    }
                    let c = &mut rec.commands[p.cmd as usize];
                    c.ops += 1;
                    c.errors += 1;
                    c.bytes_sent += p.sent as u64;
                    c.error_kinds.add(&kind, 1);
                }
            }
            // The task's `TaskEnd` counts it out, and its connection if it is still open.
        }
    }

    /// Count every request in flight as failed with `kind`, and reset the reply framing.
    fn fail_inflight(&mut self, kind: &[u8]) {
        let mut rec = self.shared.recorder.borrow_mut();
        for p in self.inflight.drain(..) {
            if let Some(r) = self.retries.as_deref_mut() {
                let failed = |bytes: &[u8]| {
                    if let Some(log) = &self.shared.failed {
                        log.log(
                            p.cmd as usize,
                            self.shared.key_index[p.cmd as usize],
                            bytes,
                            kind,
                            p.tries,
                        );
                    }
                };
                if r.settle(&p, Some(kind), Instant::now(), failed) {
                    if p.measured {
                        rec.commands[p.cmd as usize].retries += 1;
                    }
                    continue;
                }
            }
            if p.measured {
                let c = &mut rec.commands[p.cmd as usize];
                c.ops += 1;
                c.errors += 1;
                c.bytes_sent += p.sent as u64;
                c.error_kinds.add(kind, 1);
            }
        }
        self.framer.reset();
        self.rstart = 0;
        self.rend = 0;
        // A buffer grown for a long reply (or a server that never ended one) is given back.
        if self.rbuf.len() > READ_BUFFER {
            self.rbuf = Vec::new();
        }
    }

    /// Reconnect with exponential backoff (`load.reconnect`); `None` when the run no longer
    /// needs this connection, or it gave up after `attempts` failed attempts.
    async fn reconnect(&mut self) -> Option<Stream> {
        let policy = self.shared.reconnect;
        let mut backoff = policy.delay.0;
        let mut failed = 0u32;
        loop {
            if self.finished() || (policy.attempts > 0 && failed >= policy.attempts) {
                return None;
            }
            let mut sleep = std::pin::pin!(tokio::time::sleep(backoff));
            let ctl = Rc::clone(&self.ctl);
            let woke = poll_fn(|cx| match ctl.check(cx.waker()) {
                Interrupt::Abort => Poll::Ready(false),
                _ => sleep.as_mut().poll(cx).map(|_| true),
            })
            .await;
            if !woke {
                return None;
            }
            let attempt = self
                .ctl
                .unless_stopped(|| self.finished(), connect(&self.shared));
            if let Ok(client) = attempt.await? {
                self.shared.reconnects.set(self.shared.reconnects.get() + 1);
                self.shared.opened(&self.ctl, 1);
                self.now = Instant::now();
                self.room_at = self.now;
                self.room_late = Duration::ZERO;
                return Some(client.into_stream());
            }
            failed = failed.saturating_add(1);
            backoff = backoff.mul_f64(policy.backoff).min(policy.max_delay.0);
        }
    }

    /// Generate requests until the pipeline is full or nothing more may start (in open loop:
    /// nothing more is due); returns how many were added.
    #[inline]
    fn fill(&mut self) -> usize {
        let shared = &*self.shared;
        let mut added = 0;
        // Requests due to be resent go first; while too many wait, nothing new starts.
        if let Some(r) = self.retries.as_deref_mut() {
            while self.inflight.len() < shared.pipeline && !shared.stopping.get() {
                let Some(p) = r.take_due(self.now, &mut self.wbuf) else {
                    break;
                };
                self.inflight.push_back(p);
                added += 1;
            }
            if r.full() {
                return added;
            }
        }
        // 0: never reconnects (the count then only wraps, unread).
        let every = shared.reconnect.every.unwrap_or(0);
        while self.inflight.len() < shared.pipeline
            && !shared.stopping.get()
            && !self.generator.exhausted()
            && (every == 0 || self.sent_on_stream < every)
        {
            let intended = match &mut self.pacer {
                Some((p, _)) if shared.after_end(p.due()) => break,
                Some((p, _)) if p.due() > self.now => break,
                Some((p, _)) if p.waiting() => {
                    // A replay looking again: due now, or later (then the loop ends).
                    p.refresh();
                    continue;
                }
                Some((p, _)) => p.due(),
                None => self.now,
            };
            let measured = intended >= shared.measure_start;
            if measured && !shared.claim() {
                break;
            }
            let before = self.wbuf.len();
            let cmd = self.generator.next(&mut self.wbuf, shared.budget.get());
            if let Some(r) = self.retries.as_deref_mut() {
                r.keep(&self.wbuf[before..]);
            }
            self.inflight.push_back(Pending {
                cmd: cmd as u16,
                measured,
                sent: (self.wbuf.len() - before) as u32,
                start: self.now,
                intended,
                tries: 0,
                own_late_ns: 0,
            });
            if let Some((p, _)) = &mut self.pacer {
                p.advance();
            }
            self.sent_on_stream = self.sent_on_stream.wrapping_add(1);
            added += 1;
        }
        added
    }

    /// Whether no more requests will start on this connection.
    fn finished(&self) -> bool {
        self.shared.starts_no_more() || self.generator.exhausted()
    }

    /// Carry traffic on `stream` until done (`Ok`) or it fails.
    async fn drive(&mut self, stream: &mut Stream) -> Result<(), Failure> {
        if self.shared.idle {
            return self.hold().await;
        }
        let open = self.pacer.is_some();
        let keepalive = self.shared.keepalive;
        let every = self.shared.reconnect.every.unwrap_or(0);
        // Top the pipeline up after every read, or (batches) only once it is empty.
        let eager = keepalive && !self.shared.batch;
        loop {
            if open {
                // One clock reading per pass tells which intended send times have come.
                self.now = Instant::now();
            }
            // Without keepalive a connection carries one batch (redis-benchmark -k 0).
            let added = if eager || self.inflight.is_empty() {
                self.fill()
            } else {
                0
            };
            if let Some((p, _)) = &self.pacer {
                self.ctl.scheduled(p.due(), p.gap());
            }
            if added > 0 {
                let t = Instant::now();
                let n = self.inflight.len();
                for p in self.inflight.range_mut(n - added..) {
                    p.start = t;
                }
                if let Some((pacer, _)) = &self.pacer {
                    self.record_open_loop_sends(t, added, pacer.gap());
                }
                if n == added {
                    // The reply timeout runs from the oldest request in flight.
                    self.ctl.last_progress.set(t);
                }
                self.write_all(stream).await?;
                self.wbuf.clear();
            }
            if self.inflight.is_empty() {
                if let Some(due) = self.retry_due() {
                    self.wait_retry(due).await?;
                    continue;
                }
                if !open || self.finished() {
                    return Ok(());
                }
                self.wait_due().await?;
                continue;
            }
            self.ctl.waiting.set(true);
            let n = self.read_some(stream).await?;
            self.ctl.waiting.set(false);
            let Some(n) = n else {
                continue; // the next request is due
            };
            if n == 0 {
                return Err(Failure::Connection);
            }
            // io_uring: when the completion that delivered the bytes was reaped.
            self.now = stream.read_at().unwrap_or_else(Instant::now);
            self.rend += n;
            let lean = self.rbuf.is_empty();
            if !lean {
                grow_after_a_full_read(&mut self.rbuf, self.rend);
            }
            let owed = self.inflight.len();
            self.answered_late = 0;
            self.process_replies(lean)?;
            if owed >= self.shared.pipeline && self.inflight.len() < owed {
                self.room_at = self.now; // the pipeline has room again
                self.room_late = Duration::from_nanos(self.answered_late.into());
            }
            if self.inflight.len() < owed {
                // The reply timeout runs from the last whole reply: bytes trickling in
                // without ending one do not hold it off.
                self.ctl.last_progress.set(self.now);
            }
            // Without keepalive after every batch; with `reconnect.every` after N requests.
            let recycle = !keepalive || (every > 0 && self.sent_on_stream >= every);
            if recycle && self.inflight.is_empty() && !self.finished() {
                return Err(Failure::Recycle);
            }
        }
    }

    /// When the next request waiting to be resent is due (`load.retry`), while the run
    /// still sends.
    fn retry_due(&self) -> Option<Instant> {
        let r = self.retries.as_deref()?;
        (!self.shared.stopping.get())
            .then(|| r.next_due())
            .flatten()
    }

    /// Nothing in flight, a resend due at `due`: wait for it (or for the run to stop).
    async fn wait_retry(&mut self, due: Instant) -> Result<(), Failure> {
        let mut sleep = std::pin::pin!(tokio::time::sleep_until(due.into()));
        let ctl = &*self.ctl;
        let shared = &*self.shared;
        poll_fn(|cx| match ctl.check(cx.waker()) {
            Interrupt::None if shared.stopping.get() => Poll::Ready(Ok(())),
            Interrupt::None => sleep.as_mut().poll(cx).map(Ok),
            why => Poll::Ready(Err(Failure::Interrupted(why))),
        })
        .await?;
        self.now = Instant::now();
        Ok(())
    }

    /// `idle`: keep the connection open, sending nothing, until the run stops.
    async fn hold(&mut self) -> Result<(), Failure> {
        let ctl = &*self.ctl;
        let shared = &*self.shared;
        poll_fn(|cx| match ctl.check(cx.waker()) {
            Interrupt::None if shared.stopping.get() => Poll::Ready(Ok(())),
            Interrupt::None => Poll::Pending,
            why => Poll::Ready(Err(Failure::Interrupted(why))),
        })
        .await
    }

    /// Open loop: for each measured request of the `added` just written at `t`, record the
    /// client's own lateness (from when it could have gone: its intended time, or when the
    /// connection had room), and offer the gap since the previous one's send to the arrivals
    /// sample, in units of the intended mean `gap` (seconds).
    ///
    /// The send time in that gap is the intended time plus the client's own lateness: a
    /// request held back because the pipeline was full went out when a reply made room, and
    /// its gap would otherwise follow the server's service times (M/D/1 bunches sends behind
    /// each reply), not the client's pacing, which is what the arrivals test judges. The
    /// room itself came late by as much as the client sent the request that made it, and a
    /// request held back inherits that. Sends that were not held back are timed as written,
    /// so a coarse timer or a saturated client still shows as bunched gaps.
    fn record_open_loop_sends(&mut self, t: Instant, added: usize, gap: f64) {
        let n = self.inflight.len();
        let mut rec = self.shared.recorder.borrow_mut();
        let lag = rec.client_lag.get_or_insert_with(Default::default);
        let mut gaps = self.shared.gaps.borrow_mut();
        // For the sample, a request held back behind one the client sent late (the machine
        // paused it, say) shares that lateness: the room came that much late, and a client
        // on time would have sent it that much earlier. Counted from the room alone it would
        // count as sent before the one it waited for, a gap of zero the client never made.
        // Along a queue that never empties the lateness adds up each request's reaction to
        // the reply before it, as the schedule of a client on time would have gained them;
        // the gaps, which the sample holds, are each the intended one plus that reaction.
        // The client's own lag (the report's `client_lag_ms`) counts from the room itself.
        let late_room = self
            .room_at
            .checked_sub(self.room_late)
            .unwrap_or(self.room_at);
        // A resend's wait is the retry's, not the client's lateness, nor a gap of its pacing.
        for p in self
            .inflight
            .range_mut(n - added..)
            .filter(|p| p.tries == 0)
        {
            let late = t.saturating_duration_since(p.intended.max(late_room));
            // Warm-up requests too: a measured one may be held back behind one.
            p.own_late_ns = u32::try_from(late.as_nanos()).unwrap_or(u32::MAX);
            if !p.measured {
                continue;
            }
            let own = t.saturating_duration_since(p.intended.max(self.room_at));
            lag.record(own.as_nanos() as u64);
            let sent = p.intended + late;
            if let Some(last) = self.last_sent {
                gaps.offer(sent.saturating_duration_since(last).as_secs_f64() / gap);
            }
            self.last_sent = Some(sent);
        }
    }

    /// Open loop with nothing in flight: sleep until the next request is due, or until no
    /// more may start (the run stops, or the `requests` budget is spent: the worker then
    /// wakes every connection).
    async fn wait_due(&mut self) -> Result<(), Failure> {
        let Some((pacer, deadline)) = self.pacer.as_mut() else {
            return Ok(());
        };
        let due = pacer.due();
        let ctl = &*self.ctl;
        let shared = &*self.shared;
        // Due after the phase's end: nothing to wait for but the stop (the worker wakes us).
        let after_end = shared.after_end(due);
        poll_fn(|cx| match ctl.check(cx.waker()) {
            Interrupt::None if shared.starts_no_more() => Poll::Ready(Ok(())),
            Interrupt::None if after_end => Poll::Pending,
            Interrupt::None => deadline.poll_at(cx, due).map(Ok),
            why => Poll::Ready(Err(Failure::Interrupted(why))),
        })
        .await
    }

    /// Frame and record every complete reply in the read buffer: the connection's own, or
    /// with `lean` the worker's scratch buffer, whose partial reply at the end (if any) then
    /// moves to an own buffer allocated for it.
    fn process_replies(&mut self, lean: bool) -> Result<(), Failure> {
        let shared = &*self.shared;
        // Never fails: the scratch buffer is only borrowed within one poll of one task.
        let scratch = match lean {
            true => Some(
                shared
                    .scratch
                    .try_borrow()
                    .map_err(|_| Failure::Connection)?,
            ),
            false => None,
        };
        let data: &[u8] = match &scratch {
            Some(s) => s,
            None => &self.rbuf,
        };
        let open = self.pacer.is_some();
        let mut guard = shared.recorder.borrow_mut();
        // A plain reference: its fields (commands, clients) are then borrowed apart.
        let rec = &mut *guard;
        // Whether this read delivered a successful measured reply (for the gap figures).
        let mut ok = false;
        // Replies framed from one read share its clock reading, and requests written
        // together share theirs: a run of equal latencies is recorded at once.
        let mut run: Option<(u16, u64, u64)> = None;
        // Requests written together share their start: one subtraction per write, not per reply.
        let mut since: Option<(Instant, u64)> = None;
        let outcome = loop {
            let buf = &data[self.rstart..self.rend];
            let (len, reply) = match self.framer.next(buf) {
                Ok(Some(r)) => r,
                Ok(None) => break Ok(()),
                Err(_) => break Err(Failure::Protocol),
            };
            if reply == Reply::Push {
                self.rstart += len;
                continue;
            }
            let Some(p) = self.inflight.pop_front() else {
                break Err(Failure::Protocol);
            };
            self.answered_late = self.answered_late.max(p.own_late_ns);
            let failed = matches!(reply, Reply::Error { .. });
            if let Some(r) = self.retries.as_deref_mut() {
                // A transient error: the request goes again, its reply not yet its last.
                let log = |bytes: &[u8]| {
                    if let Some(log) = &shared.failed {
                        log.log(
                            p.cmd as usize,
                            shared.key_index[p.cmd as usize],
                            bytes,
                            &buf[..len],
                            p.tries,
                        );
                    }
                };
                if r.settle(&p, failed.then(|| &buf[..len]), self.now, log) {
                    if p.measured {
                        rec.commands[p.cmd as usize].retries += 1;
                    }
                    self.rstart += len;
                    continue;
                }
            }
            if p.measured {
                let ns = match since {
                    Some((t, ns)) if t == p.intended => ns,
                    _ => {
                        let ns = self.now.duration_since(p.intended).as_nanos() as u64;
                        since = Some((p.intended, ns));
                        ns
                    }
                };
                match &mut run {
                    Some((cmd, v, n)) if *cmd == p.cmd && *v == ns => *n += 1,
                    _ => {
                        if let Some((cmd, v, n)) = run.replace((p.cmd, ns, 1)) {
                            rec.commands[cmd as usize].record_latency_n(v, n);
                        }
                    }
                }
                // A hit or a miss: a read command's value, or its nil or empty reply.
                let reads = shared.reads[p.cmd as usize];
                let hit = reads && matches!(reply, Reply::Value);
                let miss = reads && matches!(reply, Reply::Nil | Reply::Empty);
                let c = &mut rec.commands[p.cmd as usize];
                c.ops += 1;
                c.bytes_sent += p.sent as u64;
                c.bytes_received += len as u64;
                if open {
                    c.record_service(self.now.duration_since(p.start).as_nanos() as u64);
                    c.record_send_lag(
                        p.start.saturating_duration_since(p.intended).as_nanos() as u64
                    );
                }
                // `output.client_stats` only (otherwise there is no slot): this connection's
                // own counters, rolled into a row per second by the aggregator.
                if let Some(mine) = rec.clients.get_mut(self.client_slot + p.cmd as usize) {
                    mine.ops += 1;
                    mine.latency_ns += ns;
                    mine.bytes_sent += p.sent as u64;
                    mine.bytes_received += len as u64;
                    mine.errors += u64::from(matches!(reply, Reply::Error { .. }));
                    mine.hits += u64::from(hit);
                    mine.misses += u64::from(miss);
                }
                ok |= !matches!(reply, Reply::Error { .. });
                c.hits += u64::from(hit);
                c.misses += u64::from(miss);
                if let Reply::Error { kind } = reply {
                    c.errors += 1;
                    c.error_kinds
                        .add_reply(&buf[kind.clone()], &buf[kind.start..], 1);
                }
            }
            if shared.cursors[p.cmd as usize] {
                self.generator.follow_cursor(&buf[..len], failed);
            }
            self.rstart += len;
        };
        if let Some((cmd, v, n)) = run {
            rec.commands[cmd as usize].record_latency_n(v, n);
        }
        if ok {
            let ns = self.now.saturating_duration_since(shared.measure_start);
            rec.marks.mark(ns.as_nanos() as u64);
        }
        outcome?;
        if !lean {
            if !settle_read_buffer(&mut self.rbuf, &mut self.rstart, &mut self.rend, MAX_REPLY) {
                return Err(Failure::Protocol);
            }
        } else if let Some(own) = keep_partial(data, &mut self.rstart, &mut self.rend) {
            self.rbuf = own;
        }
        Ok(())
    }

    /// Read what the server sent: `Some(bytes)` (0: closed), or `None` in open loop when the
    /// next request fell due first and the pipeline has room for it.
    async fn read_some(&mut self, stream: &mut Stream) -> Result<Option<usize>, Failure> {
        let ctl = &*self.ctl;
        // No buffer of its own yet: read into the worker's scratch buffer (nothing is pending
        // in it between two reads of this connection).
        let lean = self.rbuf.is_empty();
        let (rbuf, rend) = (&mut self.rbuf, self.rend);
        let mut due = match &mut self.pacer {
            Some((pacer, deadline))
                if self.inflight.len() < self.shared.pipeline
                    && !self.shared.after_end(pacer.due()) =>
            {
                Some((pacer.due(), deadline))
            }
            _ => None,
        };
        let shared = &*self.shared;
        poll_fn(|cx| match ctl.check(cx.waker()) {
            Interrupt::None => {
                let mut scratch;
                // io_uring may swap the buffer for its own, the bytes then at its start: no
                // copy (either buffer is taken whole, so the swap only ever happens at 0).
                let (buf, end) = match lean {
                    false => (&mut *rbuf, rend),
                    true => {
                        // Never fails: no other task runs while this one is polled.
                        let Ok(s) = shared.scratch.try_borrow_mut() else {
                            return Poll::Ready(Err(Failure::Connection));
                        };
                        scratch = s;
                        (&mut *scratch, 0)
                    }
                };
                match stream.poll_read_vec(cx, buf, end) {
                    Poll::Ready(Ok(n)) => Poll::Ready(Ok(Some(n))),
                    Poll::Ready(Err(_)) => Poll::Ready(Err(Failure::Connection)),
                    Poll::Pending => match due.as_mut() {
                        Some((at, d)) if !shared.stopping.get() => {
                            d.poll_at(cx, *at).map(|_| Ok(None))
                        }
                        _ => Poll::Pending,
                    },
                }
            }
            why => Poll::Ready(Err(Failure::Interrupted(why))),
        })
        .await
    }

    async fn write_all(&mut self, stream: &mut Stream) -> Result<(), Failure> {
        let ctl = &*self.ctl;
        let mut written = 0;
        let buf = &self.wbuf;
        poll_fn(|cx| loop {
            if written == buf.len() {
                return Poll::Ready(Ok(()));
            }
            match ctl.check(cx.waker()) {
                Interrupt::None => {}
                why => return Poll::Ready(Err(Failure::Interrupted(why))),
            }
            match stream.poll_write_buf(cx, &buf[written..]) {
                Poll::Ready(Ok(0)) | Poll::Ready(Err(_)) => {
                    return Poll::Ready(Err(Failure::Connection))
                }
                Poll::Ready(Ok(n)) => written += n,
                Poll::Pending => return Poll::Pending,
            }
        })
        .await
    }
}

/// Open a new connection. Boxed: otherwise the connect future sits in every connection's
/// task from the start for a reconnect that may never come (docs/performance.md, "What the
/// code does, and what each was worth").
async fn connect(shared: &Shared) -> crate::Result<Client> {
    Box::pin(Client::connect(&shared.connect)).await
}

/// After the replies of a read into the worker's scratch buffer (`data`) were framed: the
/// cursors back to 0 when they were all whole, else the partial reply at the end copied
/// into a buffer of the connection's own, returned to be kept for good.
pub(super) fn keep_partial(data: &[u8], rstart: &mut usize, rend: &mut usize) -> Option<Vec<u8>> {
    let partial = &data[*rstart..*rend];
    let own = (!partial.is_empty()).then(|| {
        // Sized as the connection would have grown its own: full-size when this read would
        // have filled the small one.
        let size = match *rend >= FIRST_READ_BUFFER {
            true => READ_BUFFER,
            false => FIRST_READ_BUFFER,
        };
        let mut own = vec![0; size.max(2 * partial.len())];
        own[..partial.len()].copy_from_slice(partial);
        own
    });
    *rend = partial.len();
    *rstart = 0;
    own
}

/// A read that filled the first, small buffer: the connection is busy, give it the full one.
/// An empty buffer (the read went into the worker's scratch buffer, `end` > 0) stays empty.
#[inline]
pub(super) fn grow_after_a_full_read(buf: &mut Vec<u8>, end: usize) {
    if end == buf.len() && buf.len() < READ_BUFFER {
        buf.resize(READ_BUFFER, 0);
    }
}

/// The longest reply read (one RESP value, an aggregate with all its elements): a server
/// that sends more without ending its reply (a line without CRLF, an endless array) fails the
/// connection as a protocol error, rather than grow its buffer until memory runs out. A valid
/// reply this long (LRANGE or HGETALL of a 1 GiB collection) fails too: a load generator's
/// replies are far shorter. One bulk string is held to 512 MiB by the framer.
pub(super) const MAX_REPLY: usize = 1 << 30;

/// After framing: rewind an emptied read buffer; when a partial reply fills it to the end,
/// move that reply to the front, or grow the buffer (up to `max`) if it already starts there.
/// False when the partial reply already fills `max` bytes.
#[must_use]
pub(super) fn settle_read_buffer(
    buf: &mut Vec<u8>,
    start: &mut usize,
    end: &mut usize,
    max: usize,
) -> bool {
    if *start == *end {
        *start = 0;
        *end = 0;
    } else if *end == buf.len() {
        if *start > 0 {
            buf.copy_within(*start..*end, 0);
            *end -= *start;
            *start = 0;
        } else if buf.len() >= max {
            return false;
        } else {
            buf.resize((buf.len() * 2).min(max), 0);
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_partial_reply_grows_the_buffer_up_to_the_limit_only() {
        let mut buf = vec![0u8; 16];
        // Full from the front: grows (by doubling, held to the limit).
        let (mut start, mut end) = (0, 16);
        assert!(settle_read_buffer(&mut buf, &mut start, &mut end, 40));
        assert_eq!(buf.len(), 32);
        end = 32;
        assert!(settle_read_buffer(&mut buf, &mut start, &mut end, 40));
        assert_eq!(buf.len(), 40);
        // Full at the limit and not ended: the reply is refused.
        end = 40;
        assert!(!settle_read_buffer(&mut buf, &mut start, &mut end, 40));
        assert_eq!(buf.len(), 40);
        // A partial reply after answered ones moves to the front instead.
        (start, end) = (30, 40);
        assert!(settle_read_buffer(&mut buf, &mut start, &mut end, 40));
        assert_eq!((start, end, buf.len()), (0, 10, 40));
    }
}
