//! A logical client of the cluster ([`ClusterClient`]): one connection per node it talks to,
//! each with its pipeline, backlog and retries.

use super::pending::{Pending, Retry};
use super::redirect::redirect;
use super::route::request_slot;
use super::topology::Cluster;
use super::{ASKING, BACKOFF_MAX, BACKOFF_MIN, MAX_FAILED_IN_A_ROW, MAX_TRIES, SENT_COMPACT};
use crate::engine::connection::{
    grow_after_a_full_read, keep_partial, settle_read_buffer, MAX_REPLY, READ_BUFFER,
};
use crate::engine::control::{ConnCtl, Interrupt, Shared};
use crate::engine::generator::Generator;
use crate::engine::pacer::Pacer;
use crate::engine::timer::Deadline;
use crate::net::{Client, Stream};
use crate::resp::{Framer, Reply};
use crate::stats::CommandRecorder;
use std::collections::VecDeque;
use std::future::{poll_fn, Future};
use std::rc::Rc;
use std::task::Poll;
use std::time::{Duration, Instant};

/// One connection of a client, to one node.
struct Node {
    stream: Option<Stream>,
    ever_connected: bool,
    framer: Framer,
    inflight: VecDeque<Pending>,
    wbuf: Vec<u8>,
    /// The bytes of the requests in flight, in order, from `sent_head` (for retries).
    sent: Vec<u8>,
    sent_head: usize,
    /// Empty until a read ends inside a reply: until then the node reads into the worker's
    /// scratch buffer (as a standalone connection does), so thousands of clients, each with a
    /// connection to every node, hold no read buffers.
    rbuf: Vec<u8>,
    rstart: usize,
    rend: usize,
    /// Requests generated while the pipeline was full, in order: their entries, and their
    /// bytes in `backlog` from `backlog_head`.
    queued: VecDeque<Pending>,
    backlog: Vec<u8>,
    backlog_head: usize,
    down_until: Option<Instant>,
    backoff: Duration,
    /// `batch`: the write buffer holds a batch being built (its first request found nothing
    /// in flight); cleared once it is written. A retry queued meanwhile does not open one.
    building: bool,
}

impl Node {
    fn new(stream: Option<Stream>) -> Node {
        Node {
            ever_connected: stream.is_some(),
            stream,
            framer: Framer::new(),
            inflight: VecDeque::new(),
            wbuf: Vec::new(),
            sent: Vec::new(),
            sent_head: 0,
            rbuf: Vec::new(),
            rstart: 0,
            rend: 0,
            queued: VecDeque::new(),
            backlog: Vec::new(),
            backlog_head: 0,
            down_until: None,
            backoff: BACKOFF_MIN,
            building: false,
        }
    }

    fn down(&self, now: Instant) -> bool {
        self.stream.is_none() && self.down_until.is_some_and(|d| now < d)
    }

    /// Whether a request may join the write buffer now: the pipeline has room, nothing waits
    /// before it, and with `batch`, nothing is in flight or a batch is being built.
    fn has_room(&self, pipeline: usize, batch: bool) -> bool {
        self.inflight.len() < pipeline
            && self.queued.is_empty()
            && (!batch || self.inflight.is_empty() || self.building)
    }

    /// Move backlogged requests into the write buffer while the pipeline has room (with
    /// `batch`, only once every reply is in). In closed loop their latency starts `now`; in
    /// open loop it stays at the intended send time.
    fn promote(&mut self, pipeline: usize, now: Instant, open: bool, batch: bool) {
        if batch {
            if !self.inflight.is_empty() {
                return;
            }
            self.building = true;
        }
        while self.inflight.len() < pipeline {
            let Some(p) = self.queued.pop_front() else {
                break;
            };
            let bytes = &self.backlog[self.backlog_head..self.backlog_head + p.len as usize];
            self.wbuf.extend_from_slice(bytes);
            self.sent.extend_from_slice(bytes);
            self.backlog_head += p.len as usize;
            let intended = if open { p.intended } else { now };
            self.inflight.push_back(Pending {
                intended,
                start: now,
                ..p
            });
        }
        if self.queued.is_empty() {
            self.backlog.clear();
            self.backlog_head = 0;
        } else if self.backlog_head >= SENT_COMPACT {
            self.backlog.copy_within(self.backlog_head.., 0);
            self.backlog
                .truncate(self.backlog.len() - self.backlog_head);
            self.backlog_head = 0;
        }
    }
}

/// What became of a request offered to a node.
enum Placed {
    /// Written to the node's write buffer or its backlog.
    Sent,
    /// The node's backlog is full: the request waits in `parked`.
    Full,
    Failed,
}

/// A logical client of the cluster: one connection per node it talks to.
pub struct ClusterClient {
    generator: Generator,
    /// Open loop: the schedule of intended send times.
    pacer: Option<Pacer>,
    /// Open loop: the wait for the next intended send time.
    deadline: Option<Deadline>,
    shared: Rc<Shared>,
    ctl: Rc<ConnCtl>,
    cluster: Rc<Cluster>,
    /// This client's index: which replica of each primary it reads from.
    pick: usize,
    /// Bound clients (`{node_tag}`): the primary this client talks to.
    home: Option<usize>,
    nodes: Vec<Node>,
    /// The request just generated.
    req: Vec<u8>,
    /// A generated request waiting for room on its node (its bytes in `req`).
    parked: Option<(usize, Pending)>,
    retries: VecDeque<Retry>,
    now: Instant,
    next_read: usize,
}

impl ClusterClient {
    /// Client number `pick`, generating with `generator` (paced by `pacer` in open loop),
    /// starting with `streams` (node index, stream).
    pub fn new(
        generator: Generator,
        pacer: Option<Pacer>,
        shared: Rc<Shared>,
        ctl: Rc<ConnCtl>,
        (cluster, pick): (Rc<Cluster>, usize),
        streams: Vec<(usize, Stream)>,
    ) -> Self {
        let deadline = pacer
            .as_ref()
            .map(|_| Deadline::new(shared.pace_timer.as_ref()));
        let home = cluster.home(pick);
        let mut generator = generator;
        if let Some(home) = home {
            generator.tag_keys_for(cluster.slots_of(home));
        }
        let mut c = ClusterClient {
            home,
            generator,
            pacer,
            deadline,
            shared,
            ctl,
            cluster,
            pick,
            nodes: Vec::new(),
            req: Vec::new(),
            parked: None,
            retries: VecDeque::new(),
            now: Instant::now(),
            next_read: 0,
        };
        for (i, s) in streams {
            c.ensure_node(i);
            c.nodes[i] = Node::new(Some(s));
        }
        c
    }

    fn ensure_node(&mut self, i: usize) {
        while self.nodes.len() <= i {
            self.nodes.push(Node::new(None));
        }
    }

    /// Run until there is nothing more to send and nothing in flight, or until aborted.
    ///
    /// Not an `async fn`: its future would hold the client twice (the argument, and the local
    /// it is moved into: 640 bytes more in every client's task); the block uses it in place.
    #[allow(clippy::manual_async_fn)] // on purpose, see above
    pub fn run(mut self) -> impl Future<Output = ()> {
        async move {
            let open = self.nodes.iter().filter(|n| n.stream.is_some()).count() as u32;
            self.shared.opened(&self.ctl, open);
            loop {
                let outcome = self.drive().await;
                // An interrupted read leaves the flag set: an idle client would then be timed
                // out again and again.
                self.ctl.waiting.set(false);
                match outcome {
                    Ok(()) => break,
                    Err(Interrupt::Timeout) => {
                        for i in 0..self.nodes.len() {
                            if !self.nodes[i].inflight.is_empty() {
                                self.node_failed(i, b"TIMEOUT");
                                self.nodes[i].down_until = None;
                            }
                        }
                    }
                    Err(_) => {
                        for i in 0..self.nodes.len() {
                            self.node_failed(i, b"ABORTED");
                        }
                        let mut rec = self.shared.recorder.borrow_mut();
                        let parked = self.parked.take().map(|(_, p)| (p, self.req.clone()));
                        for (p, req) in parked
                            .into_iter()
                            .chain(self.retries.drain(..).map(|r| (r.p, r.bytes)))
                        {
                            if let (Some(log), false) = (&self.shared.failed, p.asking) {
                                let key = self.shared.key_index[p.cmd as usize];
                                log.log(p.cmd as usize, key, &req, b"ABORTED", p.tries.into());
                            }
                            if p.measured {
                                let c = &mut rec.commands[p.cmd as usize];
                                c.ops += 1;
                                c.errors += 1;
                                c.error_kinds.add(b"ABORTED", 1);
                            }
                        }
                        break;
                    }
                }
            }
            if let Some(p) = &mut self.pacer {
                self.shared.count_unsent(p);
            }
            // The task's `TaskEnd` counts it out, and the node connections still open.
        }
    }

    fn inflight(&self) -> usize {
        self.nodes.iter().map(|n| n.inflight.len()).sum()
    }

    fn finished(&self) -> bool {
        self.shared.starts_no_more() || self.generator.exhausted()
    }

    async fn drive(&mut self) -> std::result::Result<(), Interrupt> {
        let open = self.pacer.is_some();
        loop {
            if open {
                // One clock reading per pass tells which intended send times have come.
                self.now = Instant::now();
            }
            let idle = self.inflight() == 0;
            self.dispatch_retries();
            self.fill();
            if let Some(p) = &self.pacer {
                self.ctl.scheduled(p.due(), p.gap());
            }
            self.flush().await?;
            if idle {
                self.ctl.last_progress.set(Instant::now());
            }
            if self.inflight() == 0 {
                if self.parked.is_none() && self.retries.is_empty() && self.finished() {
                    return Ok(());
                }
                // Waiting for the next request's time (open loop), however far: an idle
                // client sleeps until then, not in steps of BACKOFF_MIN (3,000 clients at one
                // request a second each woke 100 times a second). Else (closed loop, a parked
                // request, or no more requests to start) for the next pass, BACKOFF_MIN
                // away: after a pass whose requests all failed (nodes down), a pause. A
                // retry's time may come first.
                let mut wake = self.now + BACKOFF_MIN;
                let mut due = false;
                if let Some(p) = &self.pacer {
                    if !self.finished() && self.parked.is_none() {
                        wake = p.due();
                        due = true;
                    }
                }
                if let Some(r) = self.retries.iter().map(|r| r.due).min() {
                    if r < wake {
                        (wake, due) = (r, false);
                    }
                }
                self.sleep_until(wake, due).await?;
                self.now = Instant::now();
                continue;
            }
            self.ctl.waiting.set(true);
            let got = self.read_any().await?;
            self.ctl.waiting.set(false);
            self.now = Instant::now();
            let Some((i, read)) = got else {
                continue; // the next request is due
            };
            match read {
                Some(n) if n > 0 => {
                    let node = &mut self.nodes[i];
                    node.rend += n;
                    let owed = node.inflight.len();
                    grow_after_a_full_read(&mut node.rbuf, node.rend);
                    if !self.process(i) {
                        self.node_failed(i, b"PROTOCOL");
                    } else if self.nodes[i].inflight.len() < owed {
                        // The reply timeout runs from the last whole reply: bytes trickling
                        // in without ending one do not hold it off.
                        self.ctl.last_progress.set(self.now);
                    }
                }
                _ => self.node_failed(i, b"CONNECTION"),
            }
        }
    }

    /// Sleep until `t`, or, when `t` is the next request's time (`due`), until no more may
    /// start: the run stops, or the `requests` budget is spent (the worker then wakes every
    /// client).
    async fn sleep_until(&mut self, t: Instant, due: bool) -> std::result::Result<(), Interrupt> {
        let mut sleep = std::pin::pin!(tokio::time::sleep_until(t.into()));
        let ctl = &*self.ctl;
        let shared = &*self.shared;
        // The next request's time on the pacing timer; a retry's or a pause on tokio's.
        let mut deadline = self.deadline.as_mut().filter(|_| due);
        // Due after the phase's end: nothing to wait for but the stop (the worker wakes us).
        let after_end = due && shared.after_end(t);
        poll_fn(|cx| match ctl.check(cx.waker()) {
            Interrupt::None if due && shared.starts_no_more() => Poll::Ready(Ok(())),
            Interrupt::None if after_end => Poll::Pending,
            Interrupt::None => match deadline.as_mut() {
                Some(d) => d.poll_at(cx, t).map(Ok),
                None => sleep.as_mut().poll(cx).map(Ok),
            },
            why => Poll::Ready(Err(why)),
        })
        .await
    }

    /// Queue the retries that are due on their nodes.
    fn dispatch_retries(&mut self) {
        let mut k = 0;
        while k < self.retries.len() {
            if self.retries[k].due > self.now {
                k += 1;
                continue;
            }
            let Some(r) = self.retries.remove(k) else {
                break;
            };
            let node = r.node.unwrap_or_else(|| {
                let key = self.shared.key_index[r.p.cmd as usize];
                match (key, self.home) {
                    (None, Some(home)) => home,
                    _ => self.cluster.route(request_slot(&r.bytes, key)),
                }
            });
            self.ensure_node(node);
            if self.nodes[node].down(self.now) {
                self.fail(node, r.p, b"CONNECTION", &r.bytes);
                continue;
            }
            let n = &mut self.nodes[node];
            if r.asking {
                n.wbuf.extend_from_slice(ASKING);
                n.sent.extend_from_slice(ASKING);
                n.inflight.push_back(Pending {
                    asking: true,
                    len: ASKING.len() as u32,
                    ..r.p
                });
            }
            n.wbuf.extend_from_slice(&r.bytes);
            n.sent.extend_from_slice(&r.bytes);
            n.inflight.push_back(Pending {
                start: self.now,
                ..r.p
            });
        }
    }

    /// Generate requests until one finds its node's pipeline full, or nothing more may start.
    fn fill(&mut self) {
        if let Some((node, p)) = self.parked.take() {
            match self.place(node, p) {
                Placed::Full => {
                    self.parked = Some((node, p));
                    return;
                }
                Placed::Failed => return,
                Placed::Sent => {}
            }
        }
        let shared = Rc::clone(&self.shared);
        let mut failed_in_a_row = 0;
        // Closed loop: requests waiting to be retried count as in flight, so a client whose
        // requests all get TRYAGAIN (a slot in migration) waits instead of piling up retries.
        let retry_room = shared.pipeline * self.nodes.len().max(1);
        while !shared.stopping.get() && !self.generator.exhausted() {
            if self.pacer.is_none() && self.retries.len() >= retry_room {
                break;
            }
            let intended = match &mut self.pacer {
                Some(p) if shared.after_end(p.due()) => break,
                Some(p) if p.due() > self.now => break,
                Some(p) if p.waiting() => {
                    // A replay looking again: due now, or later (then the loop ends).
                    p.refresh();
                    continue;
                }
                Some(p) => p.due(),
                None => self.now,
            };
            let measured = intended >= shared.measure_start;
            if measured && !shared.claim() {
                break;
            }
            self.req.clear();
            let cmd = self.generator.next(&mut self.req, shared.budget.get());
            let key = shared.key_index[cmd];
            let slot = request_slot(&self.req, key);
            let node = match (key, self.home) {
                // A bound client sends what has no key to its home, as redis-benchmark does.
                (None, Some(home)) => home,
                // A keyless step of a chain (a transaction's MULTI, EXEC) goes to the node
                // of the chain's key, with its keyed steps.
                (None, None) => match self.generator.chain_slot() {
                    Some(chain_slot) => self.cluster.route(chain_slot),
                    None => self.cluster.route(slot),
                },
                _ if self.cluster.replica_reads && shared.read_only[cmd] => self.read_node(slot),
                _ => self.cluster.route(slot),
            };
            let p = Pending {
                cmd: cmd as u16,
                measured,
                asking: false,
                tries: 0,
                len: self.req.len() as u32,
                intended,
                start: self.now,
            };
            if let Some(p) = &mut self.pacer {
                p.advance();
            }
            match self.place(node, p) {
                Placed::Sent => failed_in_a_row = 0,
                Placed::Full => {
                    self.parked = Some((node, p));
                    break;
                }
                // A request for a node that is down fails at once and the next one goes on, so
                // the live nodes keep their load; only a run of failures (most nodes down)
                // pauses this client until the next pass, instead of spinning on errors.
                Placed::Failed => {
                    failed_in_a_row += 1;
                    if failed_in_a_row >= MAX_FAILED_IN_A_ROW {
                        break;
                    }
                }
            }
        }
    }

    /// The node to read `slot` from: this client's replica of its owner, or the owner when
    /// there is none or its connection is down.
    fn read_node(&self, slot: u16) -> usize {
        let n = self.cluster.route_read(slot, self.pick);
        match self.nodes.get(n) {
            Some(node) if node.down(self.now) => self.cluster.route(slot),
            _ => n,
        }
    }

    /// Offer the request in `req` to `node`.
    fn place(&mut self, node: usize, p: Pending) -> Placed {
        self.ensure_node(node);
        if self.nodes[node].down(self.now) {
            self.fail(node, p, b"CONNECTION", &self.req);
            return Placed::Failed;
        }
        let n = &mut self.nodes[node];
        let pipeline = self.shared.pipeline;
        if !n.has_room(pipeline, self.shared.batch) {
            if n.queued.len() >= pipeline {
                return Placed::Full;
            }
            n.backlog.extend_from_slice(&self.req);
            n.queued.push_back(p);
            return Placed::Sent;
        }
        n.building = self.shared.batch;
        n.wbuf.extend_from_slice(&self.req);
        n.sent.extend_from_slice(&self.req);
        n.inflight.push_back(Pending {
            start: self.now,
            ..p
        });
        Placed::Sent
    }

    /// Count `p` (its bytes `req`) as failed with `kind` on `node`, and log it to
    /// `output.failed_keys` (warm-up requests too, as a connection does).
    fn fail(&self, node: usize, p: Pending, kind: &[u8], req: &[u8]) {
        if p.asking {
            return;
        }
        if let Some(log) = &self.shared.failed {
            let key = self.shared.key_index[p.cmd as usize];
            log.log(p.cmd as usize, key, req, kind, p.tries.into());
        }
        if !p.measured {
            return;
        }
        let mut rec = self.shared.recorder.borrow_mut();
        let count = |c: &mut CommandRecorder| {
            c.ops += 1;
            c.errors += 1;
            c.error_kinds.add(kind, 1);
        };
        count(&mut rec.commands[p.cmd as usize]);
        count(rec.node(node, |i| self.cluster.name(i)));
    }

    /// Node `i`'s connection failed (or timed out): fail what it had in flight with `kind`,
    /// drop it, reconnect later with backoff, refresh the map.
    fn node_failed(&mut self, i: usize, kind: &[u8]) {
        let n = &mut self.nodes[i];
        let in_flight = n.inflight.len();
        let pending: Vec<Pending> = n.inflight.drain(..).chain(n.queued.drain(..)).collect();
        // Their bytes, for `output.failed_keys` only: the requests in flight were written
        // (`sent` from `sent_head`), the queued ones wait in `backlog` from `backlog_head`.
        let mut bytes = Vec::new();
        if self.shared.failed.is_some() {
            let mut at = n.sent_head;
            for (k, p) in pending.iter().enumerate() {
                if k == in_flight {
                    at = n.backlog_head;
                }
                let from = if k < in_flight { &n.sent } else { &n.backlog };
                let len = p.len as usize;
                bytes.push(from.get(at..at + len).unwrap_or_default().to_vec());
                at += len;
            }
        }
        n.backlog.clear();
        n.backlog_head = 0;
        let mut bytes = bytes.into_iter();
        for p in pending {
            let req = bytes.next().unwrap_or_default();
            self.fail(i, p, kind, &req);
        }
        let now = self.now;
        let n = &mut self.nodes[i];
        if n.stream.take().is_some() {
            self.shared.closed(&self.ctl, 1);
        }
        n.wbuf.clear();
        n.building = false;
        n.sent.clear();
        n.sent_head = 0;
        n.framer.reset();
        n.rstart = 0;
        n.rend = 0;
        // A buffer grown for a long reply (or a server that never ended one) is given back.
        if n.rbuf.len() > READ_BUFFER {
            n.rbuf = Vec::new();
        }
        n.down_until = Some(now + n.backoff);
        n.backoff = (n.backoff * 2).min(BACKOFF_MAX);
        self.cluster.mark_stale();
    }

    /// Connect where needed and write every node's queued requests.
    async fn flush(&mut self) -> std::result::Result<(), Interrupt> {
        for i in 0..self.nodes.len() {
            if self.nodes[i].wbuf.is_empty() {
                continue;
            }
            if self.nodes[i].stream.is_none() {
                // Boxed: inline, the connect future (its handshake state) would sit in
                // every client's task for a reconnect that may never come.
                let connect = self.cluster.connect_of(i);
                let attempt = Box::pin(Client::connect(&connect));
                let stopping = || self.shared.starts_no_more();
                let Some(attempt) = self.ctl.unless_stopped(stopping, attempt).await else {
                    return Err(Interrupt::Abort);
                };
                match attempt {
                    Ok(c) => {
                        let n = &mut self.nodes[i];
                        n.stream = Some(c.into_stream());
                        if n.ever_connected {
                            self.shared.reconnects.set(self.shared.reconnects.get() + 1);
                        }
                        n.ever_connected = true;
                        n.down_until = None;
                        n.backoff = BACKOFF_MIN;
                        self.shared.opened(&self.ctl, 1);
                    }
                    Err(_) => {
                        self.now = Instant::now();
                        self.node_failed(i, b"CONNECTION");
                        continue;
                    }
                }
            }
            self.nodes[i].building = false;
            match self.write_all(i).await {
                Ok(true) => self.nodes[i].wbuf.clear(),
                Ok(false) => {
                    self.now = Instant::now();
                    self.node_failed(i, b"CONNECTION");
                }
                Err(why) => return Err(why),
            }
        }
        Ok(())
    }

    /// Write node `i`'s buffer: `Ok(false)` when the connection failed.
    async fn write_all(&mut self, i: usize) -> std::result::Result<bool, Interrupt> {
        let ctl = &*self.ctl;
        let n = &mut self.nodes[i];
        let Some(stream) = n.stream.as_mut() else {
            return Ok(false);
        };
        let buf = &n.wbuf;
        let mut written = 0;
        poll_fn(|cx| loop {
            if written == buf.len() {
                return Poll::Ready(Ok(true));
            }
            match ctl.check(cx.waker()) {
                Interrupt::None => {}
                why => return Poll::Ready(Err(why)),
            }
            match stream.poll_write_buf(cx, &buf[written..]) {
                Poll::Ready(Ok(0)) | Poll::Ready(Err(_)) => return Poll::Ready(Ok(false)),
                Poll::Ready(Ok(n)) => written += n,
                Poll::Pending => return Poll::Pending,
            }
        })
        .await
    }

    /// Read from whichever node with requests in flight has data first: `(node, Some(bytes))`
    /// (0: closed) or `(node, None)` when its connection failed; `None` in open loop when
    /// the next request fell due first.
    async fn read_any(&mut self) -> std::result::Result<Option<(usize, Option<usize>)>, Interrupt> {
        let ctl = &*self.ctl;
        let finished = self.finished();
        let mut due = match (&self.pacer, self.deadline.as_mut()) {
            (Some(p), Some(d))
                if self.parked.is_none() && !finished && !self.shared.after_end(p.due()) =>
            {
                Some((p.due(), d))
            }
            _ => None,
        };
        let shared = &*self.shared;
        let nodes = &mut self.nodes;
        let start = self.next_read;
        self.next_read = self.next_read.wrapping_add(1);
        poll_fn(|cx| match ctl.check(cx.waker()) {
            Interrupt::None => {
                let len = nodes.len();
                for k in 0..len {
                    let i = (start + k) % len;
                    let n = &mut nodes[i];
                    if n.inflight.is_empty() {
                        continue;
                    }
                    let Some(s) = n.stream.as_mut() else {
                        continue;
                    };
                    let mut scratch;
                    // io_uring may swap the buffer for its own (only when `end` is 0).
                    let (buf, end) = match n.rbuf.is_empty() {
                        false => (&mut n.rbuf, n.rend),
                        true => {
                            // Never fails: no other task runs while this one is polled, and
                            // the replies are framed before this task yields.
                            let Ok(sc) = shared.scratch.try_borrow_mut() else {
                                return Poll::Ready(Ok(Some((i, None))));
                            };
                            scratch = sc;
                            (&mut *scratch, 0)
                        }
                    };
                    match s.poll_read_vec(cx, buf, end) {
                        Poll::Ready(Ok(got)) => return Poll::Ready(Ok(Some((i, Some(got))))),
                        Poll::Ready(Err(_)) => return Poll::Ready(Ok(Some((i, None)))),
                        Poll::Pending => {}
                    }
                }
                match due.as_mut() {
                    Some((at, d)) if !shared.stopping.get() => d.poll_at(cx, *at).map(|_| Ok(None)),
                    _ => Poll::Pending,
                }
            }
            why => Poll::Ready(Err(why)),
        })
        .await
    }

    /// Frame and record (or retry) every complete reply in node `i`'s read buffer; false on
    /// a protocol error.
    fn process(&mut self, i: usize) -> bool {
        let open = self.pacer.is_some();
        let ClusterClient {
            nodes,
            shared,
            cluster,
            retries,
            now,
            ..
        } = self;
        let now = *now;
        let n = &mut nodes[i];
        // No buffer of its own: the read went into the worker's scratch buffer.
        let lean = n.rbuf.is_empty();
        let scratch = match lean {
            true => match shared.scratch.try_borrow() {
                Ok(s) => Some(s),
                Err(_) => return false,
            },
            false => None,
        };
        let data: &[u8] = match &scratch {
            Some(s) => s,
            None => &n.rbuf,
        };
        let mut rec = shared.recorder.borrow_mut();
        // Whether this read delivered a successful measured reply (for the gap figures).
        let mut ok = false;
        loop {
            let buf = &data[n.rstart..n.rend];
            let (len, reply) = match n.framer.next(buf) {
                Ok(Some(r)) => r,
                Ok(None) => break,
                Err(_) => return false,
            };
            if reply == Reply::Push {
                n.rstart += len;
                continue;
            }
            let Some(p) = n.inflight.pop_front() else {
                return false;
            };
            let at = n.sent_head;
            n.sent_head += p.len as usize;
            if p.asking {
                n.rstart += len;
                continue;
            }
            if let Reply::Error { kind } = &reply {
                if p.tries < MAX_TRIES {
                    if let Some(retry) = redirect(&buf[..len], &buf[kind.clone()], i, cluster, now)
                    {
                        // Backoff doubles with each try.
                        let due = now + (retry.due - now) * (1u32 << p.tries);
                        if p.measured {
                            rec.commands[p.cmd as usize].redirects += 1;
                            // The node that redirected counts it: it shows where the map was
                            // stale.
                            rec.node(i, |k| cluster.name(k)).redirects += 1;
                        }
                        retries.push_back(Retry {
                            p: Pending {
                                tries: p.tries + 1,
                                ..p
                            },
                            bytes: n.sent[at..at + p.len as usize].to_vec(),
                            due,
                            ..retry
                        });
                        n.rstart += len;
                        continue;
                    }
                }
            }
            if p.measured {
                let latency = now.duration_since(p.intended).as_nanos() as u64;
                let service = open.then(|| now.duration_since(p.start).as_nanos() as u64);
                // Of the request's last try (its first, unless redirected).
                let lag = p.start.saturating_duration_since(p.intended).as_nanos() as u64;
                let reads = shared.reads[p.cmd as usize];
                let record = |c: &mut CommandRecorder| {
                    c.ops += 1;
                    c.bytes_sent += p.len as u64;
                    c.bytes_received += len as u64;
                    c.record_latency(latency);
                    if let Some(ns) = service {
                        c.record_service(ns);
                        c.record_send_lag(lag);
                    }
                    match &reply {
                        Reply::Error { kind } => {
                            c.errors += 1;
                            c.error_kinds
                                .add_reply(&buf[kind.clone()], &buf[kind.start..], 1);
                        }
                        Reply::Value if reads => c.hits += 1,
                        Reply::Nil | Reply::Empty if reads => c.misses += 1,
                        _ => {}
                    }
                };
                record(&mut rec.commands[p.cmd as usize]);
                record(rec.node(i, |k| cluster.name(k)));
                if open {
                    // Node pipelines are not tracked: the client's lateness is the send lag.
                    rec.client_lag
                        .get_or_insert_with(Default::default)
                        .record(lag);
                }
                ok |= !matches!(reply, Reply::Error { .. });
            }
            if let (Reply::Error { .. }, Some(log)) = (&reply, &shared.failed) {
                // Failed for good (a redirect was retried above): `output.failed_keys`.
                let req = n.sent.get(at..at + p.len as usize).unwrap_or_default();
                let key = shared.key_index[p.cmd as usize];
                log.log(p.cmd as usize, key, req, &buf[..len], p.tries.into());
            }
            n.rstart += len;
        }
        if ok {
            let ns = now.saturating_duration_since(shared.measure_start);
            rec.marks.mark(ns.as_nanos() as u64);
        }
        if n.inflight.is_empty() {
            n.sent.clear();
            n.sent_head = 0;
        } else if n.sent_head >= SENT_COMPACT {
            // A pipeline that never drains: drop the answered bytes now and then, so the
            // buffer stays bounded by what is in flight.
            n.sent.copy_within(n.sent_head.., 0);
            n.sent.truncate(n.sent.len() - n.sent_head);
            n.sent_head = 0;
        }
        if lean {
            if let Some(own) = keep_partial(data, &mut n.rstart, &mut n.rend) {
                n.rbuf = own;
            }
        } else if !settle_read_buffer(&mut n.rbuf, &mut n.rstart, &mut n.rend, MAX_REPLY) {
            return false;
        }
        n.promote(shared.pipeline, now, open, shared.batch);
        true
    }
}
