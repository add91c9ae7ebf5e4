//! Per-thread recorders: one [`CommandRecorder`] per command, touched only by its worker
//! thread (no locks), merged by the aggregator once per interval.

use crate::report::ClientCounts;
use hdrhistogram::Histogram;

/// Highest latency the histograms hold, in nanoseconds (one hour); longer ones saturate.
pub const MAX_LATENCY_NS: u64 = 3_600_000_000_000;
/// Significant digits of every latency histogram.
pub const SIGNIFICANT_DIGITS: u8 = 3;
/// At most this many distinct error kinds are told apart; further kinds count as `OTHER`.
const MAX_ERROR_KINDS: usize = 32;

/// A new empty latency histogram (nanoseconds, 1 ns to 1 h, 3 significant digits).
pub fn new_histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, MAX_LATENCY_NS, SIGNIFICANT_DIGITS)
        .expect("constant histogram bounds are valid")
}

/// Counts of errors by kind (`WRONGTYPE`, `CONNECTION`, ...), in order of first appearance,
/// each with the first error reply of its kind (empty for kinds that are not replies).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ErrorKinds(Vec<(Box<str>, u64, Box<str>)>);

/// The longest first error reply kept for a kind, in bytes.
const MAX_ERROR_MESSAGE: usize = 512;

impl ErrorKinds {
    /// Count `n` errors of `kind`; allocates only the first time a kind is seen.
    pub fn add(&mut self, kind: &[u8], n: u64) {
        self.add_reply(kind, &[], n);
    }

    /// Count `n` error replies of `kind`, `reply` being the reply from its first word on
    /// (`WRONGTYPE Operation against ...\r\n`): kept, to its line's end, when `kind` is new
    /// (the only time this allocates).
    pub fn add_reply(&mut self, kind: &[u8], reply: &[u8], n: u64) {
        if let Some(slot) = self.0.iter_mut().find(|(k, ..)| k.as_bytes() == kind) {
            slot.1 += n;
            return;
        }
        let name: Box<str> = if self.0.len() >= MAX_ERROR_KINDS {
            "OTHER".into()
        } else {
            String::from_utf8_lossy(kind).to_ascii_uppercase().into()
        };
        match self.0.iter_mut().find(|(k, ..)| *k == name) {
            Some(slot) => slot.1 += n,
            None => {
                let line = reply.split(|&c| c == b'\r').next().unwrap_or_default();
                let line = &line[..line.len().min(MAX_ERROR_MESSAGE)];
                let message = String::from_utf8_lossy(line).into();
                self.0.push((name, n, message));
            }
        }
    }

    /// Add every count of `other` (a kind's first reply stays the earlier one).
    pub fn merge(&mut self, other: &ErrorKinds) {
        for (k, n, message) in &other.0 {
            self.add_reply(k.as_bytes(), message.as_bytes(), *n);
            if let Some(slot) = self.0.iter_mut().find(|(name, ..)| name == k) {
                if slot.2.is_empty() {
                    slot.2 = message.clone();
                }
            }
        }
    }

    /// Iterate over (kind, count).
    pub fn iter(&self) -> impl Iterator<Item = (&str, u64)> {
        self.0.iter().map(|(k, n, _)| (&**k, *n))
    }

    /// Iterate over (kind, first error reply of that kind), for the kinds that are replies.
    pub fn first_replies(&self) -> impl Iterator<Item = (&str, &str)> {
        self.0
            .iter()
            .filter(|(.., m)| !m.is_empty())
            .map(|(k, _, m)| (&**k, &**m))
    }
}

/// A latency histogram with exact moments, in nanoseconds.
#[derive(Debug, Clone)]
pub struct Timings {
    /// Every recorded latency.
    pub histogram: Histogram<u64>,
    /// Exact sum (ns), for an exact mean.
    pub sum_ns: u128,
    /// Exact sum of squares (ns²), for the standard deviation.
    pub sum_sq: f64,
    /// Exact smallest (ns), `u64::MAX` when none.
    pub min_ns: u64,
    /// Exact largest (ns).
    pub max_ns: u64,
}

impl Default for Timings {
    fn default() -> Self {
        Timings {
            histogram: new_histogram(),
            sum_ns: 0,
            sum_sq: 0.0,
            min_ns: u64::MAX,
            max_ns: 0,
        }
    }
}

impl Timings {
    /// Record one latency.
    #[inline]
    pub fn record(&mut self, ns: u64) {
        let ns = ns.max(1);
        self.histogram.saturating_record(ns);
        self.sum_ns += ns as u128;
        self.sum_sq += (ns as f64) * (ns as f64);
        self.min_ns = self.min_ns.min(ns);
        self.max_ns = self.max_ns.max(ns);
    }

    /// Record `n` equal latencies (replies read together, of requests written together).
    #[inline]
    pub fn record_n(&mut self, ns: u64, n: u64) {
        let ns = ns.max(1);
        self.histogram.saturating_record_n(ns, n);
        self.sum_ns += ns as u128 * n as u128;
        self.sum_sq += (ns as f64) * (ns as f64) * n as f64;
        self.min_ns = self.min_ns.min(ns);
        self.max_ns = self.max_ns.max(ns);
    }

    /// Forget every latency, keeping the histogram's memory.
    pub fn clear(&mut self) {
        self.histogram.reset();
        self.sum_ns = 0;
        self.sum_sq = 0.0;
        self.min_ns = u64::MAX;
        self.max_ns = 0;
    }

    /// Add `other` into these.
    pub fn merge(&mut self, other: &Timings) {
        // Bounds are identical, so adding cannot fail.
        let _ = self.histogram.add(&other.histogram);
        self.sum_ns += other.sum_ns;
        self.sum_sq += other.sum_sq;
        self.min_ns = self.min_ns.min(other.min_ns);
        self.max_ns = self.max_ns.max(other.max_ns);
    }
}

/// Everything measured about one command over some span of time.
#[derive(Debug, Clone, Default)]
pub struct CommandRecorder {
    /// Latency of every reply received (error replies included): from the intended send
    /// time in open loop, else from the write that carried the request.
    pub latency: Timings,
    /// Service time in open loop: from the actual write to the reply (`None` in closed loop,
    /// where it equals `latency`).
    pub service: Option<Box<Timings>>,
    /// Send lag in open loop: from the intended send time to the actual write (`None` in
    /// closed loop, where requests have no intended time).
    pub send_lag: Option<Box<Timings>>,
    /// Requests finished: replies received plus requests failed without a reply.
    pub ops: u64,
    /// Replies with a value, for commands that read.
    pub hits: u64,
    /// Nil or empty replies, for commands that read.
    pub misses: u64,
    /// Error replies and requests failed without reply (connection lost, timeout).
    pub errors: u64,
    /// Errors by kind.
    pub error_kinds: ErrorKinds,
    /// Request bytes written.
    pub bytes_sent: u64,
    /// Reply bytes read.
    pub bytes_received: u64,
    /// Cluster mode: redirections followed (MOVED, ASK) and TRYAGAIN / CLUSTERDOWN retries.
    /// A request that succeeds after a redirection counts once in `ops`, as a success.
    pub redirects: u64,
    /// `load.retry`: resends of failed requests (a request counts once in `ops`).
    pub retries: u64,
}

impl CommandRecorder {
    /// Record the latency of one reply.
    #[inline]
    pub fn record_latency(&mut self, ns: u64) {
        self.latency.record(ns);
    }

    /// Record the latency of `n` replies with equal latencies.
    #[inline]
    pub fn record_latency_n(&mut self, ns: u64, n: u64) {
        self.latency.record_n(ns, n);
    }

    /// Record the service time of one reply (open loop).
    #[inline]
    pub fn record_service(&mut self, ns: u64) {
        self.service.get_or_insert_with(Default::default).record(ns);
    }

    /// Record the send lag of one reply's request (open loop).
    #[inline]
    pub fn record_send_lag(&mut self, ns: u64) {
        self.send_lag
            .get_or_insert_with(Default::default)
            .record(ns);
    }

    /// Forget everything recorded, keeping the histograms' memory for reuse.
    pub fn clear(&mut self) {
        self.latency.clear();
        if let Some(s) = &mut self.service {
            s.clear();
        }
        if let Some(s) = &mut self.send_lag {
            s.clear();
        }
        self.ops = 0;
        self.hits = 0;
        self.misses = 0;
        self.errors = 0;
        self.error_kinds.0.clear();
        self.bytes_sent = 0;
        self.bytes_received = 0;
        self.redirects = 0;
        self.retries = 0;
    }

    /// Add `other` into this one.
    pub fn merge(&mut self, other: &CommandRecorder) {
        self.latency.merge(&other.latency);
        // A cleared recorder keeps its (empty) service timings: they add nothing.
        if let Some(s) = other.service.as_deref().filter(|s| !s.histogram.is_empty()) {
            self.service.get_or_insert_with(Default::default).merge(s);
        }
        if let Some(s) = other
            .send_lag
            .as_deref()
            .filter(|s| !s.histogram.is_empty())
        {
            self.send_lag.get_or_insert_with(Default::default).merge(s);
        }
        self.ops += other.ops;
        self.hits += other.hits;
        self.misses += other.misses;
        self.errors += other.errors;
        self.error_kinds.merge(&other.error_kinds);
        self.bytes_sent += other.bytes_sent;
        self.bytes_received += other.bytes_received;
        self.redirects += other.redirects;
        self.retries += other.retries;
    }
}

/// Width of one bucket of [`SuccessMarks`], in nanoseconds (10 ms).
pub const MARK_BUCKET_NS: u64 = 10_000_000;

const NO_MARK: (u64, u64) = (u64::MAX, 0);

/// When successful replies arrived, per 10 ms bucket: the first and the last read that
/// delivered one (nanoseconds since the start of measurement). Merging keeps the earliest and
/// the latest per bucket, so the stretches without any success (over all connections) are
/// found exactly, from a few bytes per bucket.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SuccessMarks {
    base: u64,
    slots: Vec<(u64, u64)>,
}

impl SuccessMarks {
    /// A read at `ns` delivered at least one successful reply.
    #[inline]
    pub fn mark(&mut self, ns: u64) {
        self.put(ns / MARK_BUCKET_NS, ns, ns);
    }

    fn put(&mut self, bucket: u64, first: u64, last: u64) {
        if self.slots.is_empty() {
            self.base = bucket;
        } else if bucket < self.base {
            // Rare: an earlier bucket merged in later.
            let n = (self.base - bucket) as usize;
            self.slots.splice(0..0, std::iter::repeat_n(NO_MARK, n));
            self.base = bucket;
        }
        let i = (bucket - self.base) as usize;
        if i >= self.slots.len() {
            self.slots.resize(i + 1, NO_MARK);
        }
        let s = &mut self.slots[i];
        s.0 = s.0.min(first);
        s.1 = s.1.max(last);
    }

    /// Add `other`'s marks.
    pub fn merge(&mut self, other: &SuccessMarks) {
        for (b, (first, last)) in other.iter() {
            self.put(b, first, last);
        }
    }

    /// Whether nothing was marked.
    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }

    /// (bucket index, (first ns, last ns)) of every bucket with a mark, in order.
    pub fn iter(&self) -> impl Iterator<Item = (u64, (u64, u64))> + '_ {
        self.slots
            .iter()
            .enumerate()
            .filter(|(_, s)| s.0 != u64::MAX)
            .map(move |(i, s)| (self.base + i as u64, *s))
    }

    /// Remove and return, in order, the marked buckets below `bucket`.
    pub fn take_below(&mut self, bucket: u64) -> Vec<(u64, u64)> {
        if self.slots.is_empty() || bucket <= self.base {
            return Vec::new();
        }
        let n = ((bucket - self.base) as usize).min(self.slots.len());
        let out: Vec<(u64, u64)> = self.slots.drain(..n).filter(|s| s.0 != u64::MAX).collect();
        self.base += n as u64;
        if self.slots.is_empty() {
            self.base = 0;
        }
        out
    }
}

/// One thread's (or the merged) recorders, one per command of the mix, in spec order.
#[derive(Debug, Clone, Default)]
pub struct Recorder {
    /// Indexed like the phase's command list.
    pub commands: Vec<CommandRecorder>,
    /// Cluster mode: per node (`host:port`), the requests it answered last (or failed on).
    pub nodes: Vec<(Box<str>, CommandRecorder)>,
    /// When successful replies arrived (measured requests only).
    pub marks: SuccessMarks,
    /// Open loop: requests due (measured) but never sent when the phase stopped, each
    /// recorded with how long it had been due then (a lower bound of its latency).
    pub unsent: Option<Box<Timings>>,
    /// Open loop: the client's own lateness per measured request, from the moment it could
    /// be written (its intended send time, or later, when its connection's pipeline had room
    /// again or the connection was back) to its write.
    pub client_lag: Option<Box<Timings>>,
    /// With `output.client_stats`: per connection of the thread and command (slot
    /// `connection * commands + command`), what it finished in this interval; empty
    /// otherwise. Cleared, not reallocated, between intervals.
    pub clients: Vec<ClientCounts>,
}

impl Recorder {
    /// Empty recorders for `n` commands.
    pub fn new(n: usize) -> Self {
        Recorder {
            commands: (0..n).map(|_| CommandRecorder::default()).collect(),
            nodes: Vec::new(),
            marks: SuccessMarks::default(),
            unsent: None,
            client_lag: None,
            clients: Vec::new(),
        }
    }

    /// Empty recorders for `n` commands, counting per connection too for `connections`
    /// connections when `per_client` (`output.client_stats`).
    pub fn with_clients(n: usize, connections: usize, per_client: bool) -> Self {
        let mut r = Recorder::new(n);
        if per_client {
            r.clients = vec![ClientCounts::default(); n * connections];
        }
        r
    }

    /// Forget everything recorded, keeping the histograms' memory: a recorder is reused
    /// interval after interval rather than 270 KB per histogram allocated each second.
    pub fn clear(&mut self) {
        self.commands.iter_mut().for_each(CommandRecorder::clear);
        // Kept by name, cleared: a worker's node indexes stay valid, nothing is reallocated.
        self.nodes.iter_mut().for_each(|(_, r)| r.clear());
        self.marks = SuccessMarks::default();
        if let Some(u) = &mut self.unsent {
            u.clear();
        }
        if let Some(l) = &mut self.client_lag {
            l.clear();
        }
        self.clients.fill(ClientCounts::default());
    }

    /// The recorder of node `index` (in the recording thread's numbering); `names` gives the
    /// names of the nodes not yet seen, so indexes below its length are always present.
    #[inline]
    pub fn node(&mut self, index: usize, names: impl Fn(usize) -> String) -> &mut CommandRecorder {
        while self.nodes.len() <= index {
            let name = names(self.nodes.len()).into_boxed_str();
            self.nodes.push((name, CommandRecorder::default()));
        }
        &mut self.nodes[index].1
    }

    /// Add `other`'s per-node recorders into this one's, matching nodes by name.
    pub fn merge_nodes(&mut self, other: &Recorder) {
        for (name, r) in &other.nodes {
            match self.nodes.iter_mut().find(|(n, _)| n == name) {
                Some((_, mine)) => mine.merge(r),
                None => self.nodes.push((name.clone(), r.clone())),
            }
        }
    }

    /// Add `other` (same command list) into this one.
    pub fn merge(&mut self, other: &Recorder) {
        self.merge_commands(other);
        // Per-connection counters add up between recorders of one thread only.
        if self.clients.len() == other.clients.len() {
            for (a, b) in self.clients.iter_mut().zip(&other.clients) {
                a.add(b);
            }
        }
        self.merge_nodes(other);
        self.marks.merge(&other.marks);
        self.merge_client_lag(other);
        if let Some(u) = other.unsent.as_deref().filter(|u| !u.histogram.is_empty()) {
            self.unsent.get_or_insert_with(Default::default).merge(u);
        }
    }

    /// Add `other`'s client lateness only.
    pub fn merge_client_lag(&mut self, other: &Recorder) {
        if let Some(l) = other
            .client_lag
            .as_deref()
            .filter(|l| !l.histogram.is_empty())
        {
            self.client_lag
                .get_or_insert_with(Default::default)
                .merge(l);
        }
    }

    /// Add `other`'s per-command recorders (same command list) only.
    pub fn merge_commands(&mut self, other: &Recorder) {
        for (a, b) in self.commands.iter_mut().zip(&other.commands) {
            a.merge(b);
        }
    }

    /// All commands merged into one.
    pub fn total(&self) -> CommandRecorder {
        let mut t = CommandRecorder::default();
        for c in &self.commands {
            t.merge(c);
        }
        t
    }

    /// Finished requests over all commands.
    pub fn ops(&self) -> u64 {
        self.commands.iter().map(|c| c.ops).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_moments_and_merge() {
        let mut a = CommandRecorder::default();
        for ns in [1_000, 2_000, 3_000] {
            a.record_latency(ns);
        }
        let mut b = CommandRecorder::default();
        b.record_latency(10_000);
        b.error_kinds.add(b"wrongtype", 2);
        a.merge(&b);
        let mut n = CommandRecorder::default();
        n.record_latency_n(2_000, 3);
        assert_eq!((n.latency.sum_ns, n.latency.sum_sq), (6_000, 12e6));
        assert_eq!(n.latency.histogram.len(), 3);
        assert_eq!(n.latency.histogram.value_at_quantile(1.0), 2_000);
        assert_eq!(a.latency.sum_ns, 16_000);
        assert_eq!((a.latency.min_ns, a.latency.max_ns), (1_000, 10_000));
        assert_eq!(a.latency.histogram.len(), 4);
        assert_eq!(
            a.error_kinds.iter().collect::<Vec<_>>(),
            vec![("WRONGTYPE", 2)]
        );
        assert!(a.service.is_none());
        let mut c = CommandRecorder::default();
        c.record_service(500);
        a.merge(&c);
        assert_eq!(a.service.as_ref().map(|s| s.histogram.len()), Some(1));
        assert_eq!(a.service.as_ref().map(|s| s.sum_ns), Some(500));
    }

    #[test]
    fn a_cleared_recorder_records_afresh_and_merges_as_an_empty_one() {
        let mut r = Recorder::new(2);
        r.commands[0].record_latency(5_000);
        r.commands[0].record_service(4_000);
        r.commands[0].ops = 1;
        r.commands[1].errors = 3;
        r.commands[1].error_kinds.add(b"oom", 3);
        r.node(0, |_| "a:1".into()).ops = 1;
        r.marks.mark(7);
        r.clear();
        assert_eq!(r.ops(), 0);
        assert!(r.marks.is_empty());
        assert_eq!(r.nodes.len(), 1);
        assert_eq!((&*r.nodes[0].0, r.nodes[0].1.ops), ("a:1", 0));
        let c = &r.commands[0];
        assert_eq!((c.latency.histogram.len(), c.latency.sum_ns), (0, 0));
        assert_eq!((c.latency.min_ns, c.latency.max_ns), (u64::MAX, 0));
        assert_eq!(c.service.as_ref().map(|s| s.histogram.len()), Some(0));
        assert_eq!(r.commands[1].errors, 0);
        assert_eq!(r.commands[1].error_kinds.iter().count(), 0);
        // Its empty service timings do not make a closed-loop-looking total open-loop.
        let mut total = Recorder::new(2);
        total.merge(&r);
        assert!(total.commands[0].service.is_none());
        r.commands[0].record_latency(9_000);
        assert_eq!(r.commands[0].latency.min_ns, 9_000);
        total.merge(&r);
        assert_eq!(total.commands[0].latency.histogram.len(), 1);
    }

    #[test]
    fn success_marks_keep_the_first_and_last_per_bucket() {
        let mut a = SuccessMarks::default();
        for ns in [25_000_000, 21_000_000, 29_000_000, 71_000_000] {
            a.mark(ns);
        }
        let mut b = SuccessMarks::default();
        b.mark(5_000_000);
        b.mark(20_000_000);
        a.merge(&b);
        let got: Vec<_> = a.iter().collect();
        assert_eq!(
            got,
            vec![
                (0, (5_000_000, 5_000_000)),
                (2, (20_000_000, 29_000_000)),
                (7, (71_000_000, 71_000_000))
            ]
        );
        assert_eq!(
            a.take_below(3),
            vec![(5_000_000, 5_000_000), (20_000_000, 29_000_000)]
        );
        assert_eq!(a.iter().count(), 1);
        assert_eq!(a.take_below(100).len(), 1);
        assert!(a.is_empty());
    }

    #[test]
    fn error_kinds_are_bounded() {
        let mut k = ErrorKinds::default();
        for i in 0..100 {
            k.add(format!("E{i}").as_bytes(), 1);
        }
        assert_eq!(k.iter().count(), MAX_ERROR_KINDS + 1);
        assert_eq!(k.iter().map(|(_, n)| n).sum::<u64>(), 100);
    }
}
