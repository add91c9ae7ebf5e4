//! A replay's requests on one worker thread: the trace streamed from its file, each record
//! of this thread's connections encoded into that connection's queue with its intended send
//! time, read only as far ahead as the schedule needs (memory follows the rate, not the
//! trace's length).
//!
//! Every worker thread reads the whole trace and keeps its own connections' records: no
//! channel, lock or copy between threads, at the price of parsing each line once per thread.

use crate::plan::ReplayPlan;
use crate::trace::{Record, TraceReader};
use std::cell::RefCell;
use std::collections::VecDeque;
use std::rc::Rc;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How far ahead of the clock the trace is read (open loop): a connection with nothing
/// queued until then looks again at that time.
const AHEAD: Duration = Duration::from_millis(100);

/// The most request bytes a thread holds read ahead (open loop): a client behind its
/// schedule would otherwise hold everything due meanwhile. Reading waits instead; the
/// requests then go late, and their send lag says so, as they would have anyway.
const MAX_QUEUED: usize = 4 << 20;

/// When nothing more will come: far enough never to be reached.
const NEVER: Duration = Duration::from_secs(86_400 * 365);

/// One queued request: its intended offset (microseconds of the replay's own time, passes
/// laid end to end), its label, and the length of its bytes in the queue.
#[derive(Debug, Clone, Copy)]
struct Item {
    at_us: u64,
    cmd: u16,
    len: u32,
}

/// One connection's requests read and not yet sent.
#[derive(Debug, Default)]
struct Queue {
    bytes: Vec<u8>,
    head: usize,
    items: VecDeque<Item>,
}

impl Queue {
    /// Drop the first request; returns its length.
    fn pop(&mut self) -> usize {
        let len = self.items.pop_front().map_or(0, |it| it.len as usize);
        self.head += len;
        if self.items.is_empty() {
            self.bytes.clear();
            self.head = 0;
        } else if self.head > 64 * 1024 && self.head * 2 > self.bytes.len() {
            // Sent bytes are dropped now and then, in one move, not per request.
            self.bytes.drain(..self.head);
            self.head = 0;
        }
        len
    }
}

/// The trace as one worker thread replays it.
pub struct Feed {
    plan: Arc<ReplayPlan>,
    reader: Option<TraceReader>,
    rec: Record,
    name: Vec<u8>,
    /// Global index of this thread's first connection.
    first: usize,
    queues: Vec<Queue>,
    /// The database each connection is on, as the requests queued leave it.
    dbs: Vec<u32>,
    pass: u32,
    /// Added to a record's offset in the current pass.
    pass_offset_us: u64,
    /// Offset of the last record read.
    read_to_us: u64,
    /// Bytes of the requests queued, every connection's.
    queued: usize,
    start: Instant,
    /// Set once reading failed: the replay ends with what was read.
    pub failed: Option<String>,
}

impl std::fmt::Debug for Feed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Feed")
            .field("first", &self.first)
            .field("connections", &self.queues.len())
            .field("pass", &self.pass)
            .finish()
    }
}

impl Feed {
    /// The feed of connections `first .. first + n` of `plan`, its schedule starting at
    /// `start`; `None` with the reason when the trace cannot be opened again.
    pub fn new(
        plan: Arc<ReplayPlan>,
        first: usize,
        n: usize,
        start: Instant,
    ) -> Result<Feed, String> {
        let reader = open(&plan)?;
        let db = plan.db;
        Ok(Feed {
            plan,
            reader: Some(reader),
            rec: Record::default(),
            name: Vec::new(),
            first,
            queues: (0..n).map(|_| Queue::default()).collect(),
            dbs: vec![db; n],
            pass: 0,
            pass_offset_us: 0,
            read_to_us: 0,
            queued: 0,
            start,
            failed: None,
        })
    }

    /// The schedule's start (the phase's), once the run goes.
    pub fn start(&mut self, start: Instant) {
        self.start = start;
    }

    fn instant(&self, at_us: u64) -> Instant {
        let secs = at_us as f64 / 1e6 / self.plan.speed;
        self.start + Duration::from_secs_f64(secs.min(NEVER.as_secs_f64()))
    }

    /// The offset the schedule reaches at `t`.
    fn offset_at(&self, t: Instant) -> u64 {
        let secs = t.saturating_duration_since(self.start).as_secs_f64() * self.plan.speed;
        (secs * 1e6).min(u64::MAX as f64 / 2.0) as u64
    }

    /// Read records until one lies beyond offset `until_us`, or the trace ends.
    fn pump(&mut self, until_us: u64) {
        while self.reader.is_some() && self.read_to_us <= until_us && self.queued < MAX_QUEUED {
            self.read_one();
        }
    }

    fn read_one(&mut self) {
        let Some(reader) = self.reader.as_mut() else {
            return;
        };
        match reader.next_record(&mut self.rec) {
            Ok(true) => {}
            Ok(false) => return self.next_pass(),
            Err(e) => {
                self.failed = Some(e.to_string());
                self.reader = None;
                return;
            }
        }
        let Some(c) = self.plan.classify(&self.rec, &mut self.name) else {
            return;
        };
        let at_us = self.rec.t_us.saturating_sub(self.plan.span_us.0) + self.pass_offset_us;
        self.read_to_us = self.read_to_us.max(at_us);
        let Some(local) = (c.conn as usize)
            .checked_sub(self.first)
            .filter(|&l| l < self.queues.len())
        else {
            return;
        };
        // A record on another database than the connection's: SELECT it first.
        if self.rec.db != self.dbs[local] {
            if let Some(select) = self.plan.select_label() {
                let q = &mut self.queues[local];
                let before = q.bytes.len();
                let db = self.rec.db.to_string();
                crate::resp::encode::encode_command(&mut q.bytes, &[b"SELECT", db.as_bytes()]);
                q.items.push_back(Item {
                    at_us,
                    cmd: select,
                    len: (q.bytes.len() - before) as u32,
                });
                self.queued += q.bytes.len() - before;
            }
            self.dbs[local] = self.rec.db;
        }
        if self.name == b"SELECT" {
            if let Some(crate::trace::TraceArg::Bytes(n)) = self.rec.arg(1) {
                if let Some(db) = std::str::from_utf8(n).ok().and_then(|s| s.parse().ok()) {
                    self.dbs[local] = db;
                }
            }
        }
        let q = &mut self.queues[local];
        let before = q.bytes.len();
        self.plan.encode(&self.rec, &self.name, &mut q.bytes);
        q.items.push_back(Item {
            at_us,
            cmd: c.cmd,
            len: (q.bytes.len() - before) as u32,
        });
        self.queued += q.bytes.len() - before;
    }

    /// The trace ended: start the next pass after one mean gap, or stop reading.
    fn next_pass(&mut self) {
        self.reader = None;
        if self.pass + 1 >= self.plan.spec.loops {
            return;
        }
        match open(&self.plan) {
            Ok(r) => {
                let (lo, hi) = self.plan.span_us;
                let gap = (hi - lo) / self.plan.requests.max(1);
                self.pass += 1;
                self.pass_offset_us += (hi - lo) + gap.max(1);
                self.reader = Some(r);
            }
            Err(e) => self.failed = Some(e),
        }
    }
}

fn open(plan: &ReplayPlan) -> Result<TraceReader, String> {
    TraceReader::open(&plan.spec.file, Some(plan.format)).map_err(|e| e.to_string())
}

/// One connection's view of its thread's feed.
#[derive(Debug, Clone)]
pub struct Cursor {
    feed: Rc<RefCell<Feed>>,
    local: usize,
}

impl Cursor {
    /// Connection `global`'s cursor on `feed`.
    pub fn new(feed: &Rc<RefCell<Feed>>, global: usize) -> Cursor {
        let local = global.saturating_sub(feed.borrow().first);
        Cursor {
            feed: Rc::clone(feed),
            local,
        }
    }

    /// Append the next request's bytes to `buf` (the pacer drops it once sent) and return
    /// its label. Called only with a request queued (see [`Cursor::due`]); without one it
    /// writes a PING, so that replies never fall out of step with requests.
    pub fn write(&self, buf: &mut Vec<u8>) -> u16 {
        let f = self.feed.borrow();
        match f
            .queues
            .get(self.local)
            .and_then(|q| Some((q, *q.items.front()?)))
        {
            Some((q, it)) => {
                buf.extend_from_slice(&q.bytes[q.head..q.head + it.len as usize]);
                it.cmd
            }
            None => {
                buf.extend_from_slice(b"*1\r\n$4\r\nPING\r\n");
                0
            }
        }
    }

    /// Drop the request just sent.
    pub fn pop(&self) {
        let mut f = self.feed.borrow_mut();
        if let Some(q) = f.queues.get_mut(self.local) {
            let n = q.pop();
            f.queued -= n;
        }
    }

    /// When the next request is due, and whether that is only when to look again (nothing
    /// queued yet, the trace read as far as the schedule needs).
    pub fn due(&self) -> (Instant, bool) {
        let mut f = self.feed.borrow_mut();
        if let Some(it) = f.queues.get(self.local).and_then(|q| q.items.front()) {
            return (f.instant(it.at_us), false);
        }
        // Nothing queued: read as far as the schedule needs (one clock reading, only here).
        let horizon = Instant::now() + AHEAD;
        let until = f.offset_at(horizon);
        f.pump(until);
        match f.queues.get(self.local).and_then(|q| q.items.front()) {
            Some(it) => (f.instant(it.at_us), false),
            None if f.reader.is_some() => (horizon, true),
            None => (horizon + NEVER, false),
        }
    }

    /// Whether nothing more will be sent on this connection.
    pub fn exhausted(&self) -> bool {
        let f = self.feed.borrow();
        f.queues
            .get(self.local)
            .is_none_or(|q| q.items.is_empty() && f.reader.is_none())
    }
}
