//! A replay planned: one pass over the trace before any traffic, to learn what the replay
//! will send (its commands, clients, counts per connection, time span), what it skips and
//! why, and which keys it reads before writing them (the prefill).
//!
//! The engine then streams the trace again, once per worker thread, with the same rules
//! ([`ReplayPlan::classify`], [`ReplayPlan::encode`]), so what it sends is what was counted
//! here.

use crate::resp::encode::{write_array_header, write_bulk, write_bulk_header};
use crate::spec::{Replay, ReplayShare, READ_COMMANDS};
use crate::trace::{Format, Malformed, Record, TraceArg, TraceReader};
use crate::{Error, Result};
use std::collections::{BTreeMap, HashMap, HashSet};

/// The most distinct command names one replay reports apart; the rest share `OTHER`.
pub const MAX_REPLAY_LABELS: usize = 1000;

/// What a replay will send, learnt from a pass over its trace.
#[derive(Debug)]
pub struct ReplayPlan {
    /// The replay's settings.
    pub spec: Replay,
    /// The trace's format.
    pub format: Format,
    /// Labels of the commands replayed (upper case), by index; `SELECT` included when a
    /// record's db differs from the connection's.
    pub labels: Vec<String>,
    index: HashMap<Vec<u8>, u16>,
    other: Option<u16>,
    /// Each recorded client's connection (when each client gets its own).
    clients: Option<HashMap<String, u32>>,
    /// Connections the replay opens.
    pub connections: u32,
    /// Requests each connection sends in the first pass (SELECTs it adds included).
    pub per_connection: Vec<u64>,
    /// Requests each connection sends in every later pass (`loops`): a pass starts on the
    /// database the one before ended on, so its first command may need a `SELECT` the first
    /// pass did not, or not need one it did.
    pub per_connection_again: Vec<u64>,
    /// Requests sent in the first pass.
    pub requests: u64,
    /// Commands of the trace (replayable or not; malformed lines not).
    pub traced: u64,
    /// The first and last recorded instants (microseconds).
    pub span_us: (u64, u64),
    /// The speed: recorded offsets are divided by it.
    pub speed: f64,
    /// Commands not replayed, by reason (`dropped: FLUSHALL`, ...).
    pub skipped: BTreeMap<String, u64>,
    /// Commands of the trace the other hosts replay (`replay.share`), per pass.
    pub others: u64,
    /// Malformed lines of the trace, and the first of them.
    pub malformed: (u64, Vec<Malformed>),
    /// The database connections start on (the target's).
    pub db: u32,
    /// The keys read before written, as a trace of SETs to send first (closed loop).
    pub prefill: Option<Prefill>,
}

/// The keys a trace reads before it writes them, written before the measured replay.
#[derive(Debug, Clone, PartialEq)]
pub struct Prefill {
    /// Each key (as recorded, rewritten when sent) and its value size: the size of the
    /// trace's first later write of it, else `replay.prefill_size`.
    pub keys: Vec<(Vec<u8>, u64)>,
    /// Reading commands whose keys are not prefilled (not strings), by name: how many keys.
    pub not_prefilled: BTreeMap<String, u64>,
}

/// Which arguments of a command are keys, so that key rewriting finds them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum KeyRule {
    None,
    First,
    All,
    Pairs,
    Two,
    /// `numkeys` at this position, the keys after it (EVAL, FCALL, ZUNION...).
    Counted(usize),
    /// A destination first, then `numkeys` at position 2 (ZUNIONSTORE ...).
    DestCounted,
    AfterFirst,
}

fn key_rule(upper: &[u8]) -> KeyRule {
    match upper {
        b"PING" | b"ECHO" | b"INFO" | b"SELECT" | b"DBSIZE" | b"TIME" | b"MULTI" | b"EXEC"
        | b"DISCARD" | b"LASTSAVE" | b"COMMAND" | b"SWAPDB" | b"RANDOMKEY" | b"SCAN" | b"KEYS"
        | b"PUBLISH" | b"SPUBLISH" | b"UNWATCH" | b"ROLE" | b"LOLWUT" | b"MEMORY" | b"SLOWLOG"
        | b"LATENCY" | b"OBJECT" | b"PUBSUB" | b"READONLY" | b"READWRITE" => KeyRule::None,
        b"MGET" | b"DEL" | b"UNLINK" | b"EXISTS" | b"TOUCH" | b"WATCH" | b"SINTER" | b"SUNION"
        | b"SDIFF" | b"SINTERSTORE" | b"SUNIONSTORE" | b"SDIFFSTORE" | b"PFCOUNT" | b"PFMERGE"
        | b"RENAME" | b"RENAMENX" => KeyRule::All,
        b"MSET" | b"MSETNX" => KeyRule::Pairs,
        b"RPOPLPUSH" | b"LMOVE" | b"SMOVE" | b"COPY" | b"GEOSEARCHSTORE" => KeyRule::Two,
        b"EVAL" | b"EVALSHA" | b"EVAL_RO" | b"EVALSHA_RO" | b"FCALL" | b"FCALL_RO" => {
            KeyRule::Counted(2)
        }
        // `ZUNION numkeys key ...`: the count comes first.
        b"ZUNION" | b"ZINTER" | b"ZDIFF" | b"SINTERCARD" | b"ZINTERCARD" | b"LMPOP" | b"ZMPOP" => {
            KeyRule::Counted(1)
        }
        b"ZUNIONSTORE" | b"ZINTERSTORE" | b"ZDIFFSTORE" => KeyRule::DestCounted,
        b"BITOP" => KeyRule::AfterFirst,
        _ => KeyRule::First,
    }
}

/// Whether argument `i` of `rec` (command `upper`) is a key.
fn is_key(rule: KeyRule, rec: &Record, i: usize) -> bool {
    let count_at = |at: usize| -> usize {
        match rec.arg(at) {
            Some(TraceArg::Bytes(b)) => std::str::from_utf8(b)
                .ok()
                .and_then(|s| s.parse().ok())
                .unwrap_or(0),
            _ => 0,
        }
    };
    match rule {
        KeyRule::None => false,
        KeyRule::First => i == 1,
        KeyRule::All => i >= 1,
        KeyRule::Pairs => i % 2 == 1,
        KeyRule::Two => i == 1 || i == 2,
        KeyRule::Counted(at) => i > at && i <= at + count_at(at),
        KeyRule::DestCounted => i == 1 || (i > 2 && i <= 2 + count_at(2)),
        KeyRule::AfterFirst => i >= 2,
    }
}

/// String reads: their keys are prefilled with SET.
const STRING_READS: &[&[u8]] = &[b"GET", b"MGET", b"GETEX", b"GETRANGE", b"STRLEN", b"SUBSTR"];
/// Writes that set a string's value (its size, for the prefill): `SET key value`.
const STRING_SETS: &[&[u8]] = &[b"SET", b"SETNX", b"GETSET", b"SETEX", b"PSETEX"];

/// 64-bit FNV-1a: keys remembered by hash (8 bytes each, whatever their length), and the
/// names `key_hash` writes.
pub fn fnv1a(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= b as u64;
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

/// Whether the recorded client named `client` falls to `share`. Its name is mixed apart
/// from the hash that spreads clients over connections ([`fnv1a`] modulo their count), so a
/// share's clients still spread over all of its connections.
pub fn in_share(share: ReplayShare, client: &str) -> bool {
    let z = super::shard::mix(fnv1a(client.as_bytes()));
    z % u64::from(share.of.max(1)) == u64::from(share.index)
}

/// A record's command name, upper case, into `out` (empty for none or a size).
fn upper_name(rec: &Record, out: &mut Vec<u8>) {
    out.clear();
    if let Some(name) = rec.name() {
        out.extend(name.iter().map(u8::to_ascii_uppercase));
    }
}

/// What the scan of a trace found for one record: its label and connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Classified {
    /// Index into [`ReplayPlan::labels`].
    pub cmd: u16,
    /// The connection (global index).
    pub conn: u32,
}

impl ReplayPlan {
    /// Read the trace once and plan its replay; `db` is the database connections start on.
    /// `prefill` asks for the keys read before written.
    pub fn scan(spec: &Replay, prefix: &str, db: u32, prefill: bool) -> Result<ReplayPlan> {
        let format = match spec.format.as_deref() {
            None => None,
            Some(f) => Some(Format::parse(f).ok_or_else(|| {
                Error::spec(
                    format!("{prefix}replay.format"),
                    format!("`{f}`: allowed are \"respload\", \"monitor\" and \"twitter\""),
                )
            })?),
        };
        let mut reader = TraceReader::open(&spec.file, format).map_err(|e| match e {
            Error::Spec { reason, .. } => Error::spec(format!("{prefix}replay.file"), reason),
            other => other,
        })?;
        let mut plan = ReplayPlan {
            spec: spec.clone(),
            format: reader.format(),
            labels: Vec::new(),
            index: HashMap::new(),
            other: None,
            clients: spec.connections.is_none().then(HashMap::new),
            connections: spec.connections.unwrap_or(0),
            per_connection: vec![0; spec.connections.unwrap_or(0) as usize],
            per_connection_again: Vec::new(),
            requests: 0,
            traced: 0,
            span_us: (u64::MAX, 0),
            speed: 1.0,
            skipped: BTreeMap::new(),
            others: 0,
            malformed: (0, Vec::new()),
            db,
            prefill: None,
        };
        let mut dbs: Vec<u32> = Vec::new();
        // The database of each connection's first command (whether a pass starts with SELECT).
        let mut first_db: Vec<Option<u32>> = Vec::new();
        let mut fill = prefill.then(PrefillScan::default);
        let (mut rec, mut name) = (Record::default(), Vec::new());
        while reader.next_record(&mut rec)? {
            plan.traced += 1;
            upper_name(&rec, &mut name);
            if !plan.replays(&name) {
                let what = String::from_utf8_lossy(&name).into_owned();
                *plan.skipped.entry(format!("dropped: {what}")).or_default() += 1;
                continue;
            }
            // Every host's records set the span: the hosts of a shared replay keep one clock.
            plan.span_us = (plan.span_us.0.min(rec.t_us), plan.span_us.1.max(rec.t_us));
            if !plan.has(&rec.client) {
                plan.others += 1;
                if let Some(f) = fill.as_mut() {
                    f.observe(&rec, &name, false);
                }
                continue;
            }
            let conn = plan.connection_of(&rec.client, true);
            let c = conn as usize;
            if plan.per_connection.len() <= c {
                plan.per_connection.resize(c + 1, 0);
                dbs.resize(c + 1, db);
            }
            if dbs.len() <= c {
                dbs.resize(c + 1, db);
            }
            if first_db.len() <= c {
                first_db.resize(c + 1, None);
            }
            first_db[c].get_or_insert(rec.db);
            if rec.db != dbs[c] {
                plan.label_of(b"SELECT");
                plan.per_connection[c] += 1;
                dbs[c] = rec.db;
            }
            if name == b"SELECT" {
                if let Some(TraceArg::Bytes(n)) = rec.arg(1) {
                    dbs[c] = std::str::from_utf8(n)
                        .ok()
                        .and_then(|s| s.parse().ok())
                        .unwrap_or(dbs[c]);
                }
            }
            plan.label_of(&name);
            plan.per_connection[c] += 1;
            if let Some(f) = fill.as_mut() {
                f.observe(&rec, &name, true);
            }
        }
        plan.requests = plan.per_connection.iter().sum();
        plan.connections = plan.per_connection.len().max(1) as u32;
        plan.per_connection.resize(plan.connections as usize, 0);
        plan.per_connection_again = (0..plan.per_connection.len())
            .map(|c| {
                let n = plan.per_connection[c];
                match first_db.get(c).copied().flatten() {
                    // Starting on the database the pass before ended on, not the target's.
                    Some(f) => n - u64::from(f != db) + u64::from(f != dbs[c]),
                    None => n,
                }
            })
            .collect();
        plan.malformed = (reader.malformed(), reader.malformed_lines().to_vec());
        if let (0, Some(share)) = (plan.requests, spec.share) {
            return Err(Error::spec(
                format!("{prefix}replay.share"),
                format!(
                    "share {} of {}: none of {}'s recorded clients falls to it ({} commands \
                     to replay, all the other shares'): split it over fewer hosts",
                    share.index, share.of, spec.file, plan.others
                ),
            ));
        }
        if plan.requests == 0 {
            return Err(Error::spec(
                format!("{prefix}replay.file"),
                format!(
                    "{}: no command to replay ({} traced, {} malformed lines, skipped: {})",
                    spec.file,
                    plan.traced,
                    plan.malformed.0,
                    plan.skipped_text()
                ),
            ));
        }
        plan.speed = match (spec.speed, spec.rate) {
            (Some(s), _) => s,
            // The rate asked for is the whole trace's: shared, each host's part of it.
            (None, Some(r)) => r / plan.whole_trace_rate(),
            (None, None) => 1.0,
        };
        plan.prefill = fill.and_then(|f| f.finish(spec.prefill_size));
        Ok(plan)
    }

    /// The trace's own mean rate (requests per second, over its span; its count when
    /// every record has one instant).
    pub fn trace_rate(&self) -> f64 {
        let span = self.span_us.1.saturating_sub(self.span_us.0) as f64 / 1e6;
        match span > 0.0 {
            true => self.requests as f64 / span,
            false => self.requests as f64,
        }
    }

    /// Requests connections `conns` send over `passes` passes (every connection: `..`).
    pub fn requests_over(&self, conns: std::ops::Range<usize>, passes: u32) -> u64 {
        let end = conns.end.min(self.per_connection.len());
        let start = conns.start.min(end);
        let first: u64 = self.per_connection[start..end].iter().sum();
        let again: u64 = self.per_connection_again[start..end].iter().sum();
        first + again * u64::from(passes.saturating_sub(1))
    }

    /// The whole trace's mean rate, every share's commands counted (this host's
    /// [`ReplayPlan::trace_rate`] without `replay.share`).
    pub fn whole_trace_rate(&self) -> f64 {
        let span = self.span_us.1.saturating_sub(self.span_us.0) as f64 / 1e6;
        let n = (self.requests + self.others) as f64;
        match span > 0.0 {
            true => n / span,
            false => n,
        }
    }

    /// Whether the recorded client named `client` is this host's: every client without
    /// `replay.share`.
    fn has(&self, client: &str) -> bool {
        self.spec.share.is_none_or(|s| in_share(s, client))
    }

    /// The rate the replay runs at (the trace's mean rate times the speed).
    pub fn rate(&self) -> f64 {
        self.trace_rate() * self.speed
    }

    /// The skipped commands, as `reason: n, ...` (or `none`).
    pub fn skipped_text(&self) -> String {
        match self.skipped.is_empty() {
            true => "none".into(),
            false => self
                .skipped
                .iter()
                .map(|(k, v)| format!("{k} x{v}"))
                .collect::<Vec<_>>()
                .join(", "),
        }
    }

    fn replays(&self, upper: &[u8]) -> bool {
        match std::str::from_utf8(upper) {
            Ok(s) if !s.is_empty() => self.spec.replays(s),
            _ => false,
        }
    }

    fn label_of(&mut self, upper: &[u8]) -> u16 {
        if let Some(&i) = self.index.get(upper) {
            return i;
        }
        if self.labels.len() >= MAX_REPLAY_LABELS {
            if let Some(o) = self.other {
                return o;
            }
            let o = self.labels.len() as u16;
            self.labels.push("OTHER".into());
            self.other = Some(o);
            return o;
        }
        let i = self.labels.len() as u16;
        self.labels
            .push(String::from_utf8_lossy(upper).into_owned());
        self.index.insert(upper.to_vec(), i);
        i
    }

    /// The connection a recorded client's commands go on; `learn` adds an unseen client
    /// (the scan), else an unseen one gets none (`u32::MAX`).
    fn connection_of(&mut self, client: &str, learn: bool) -> u32 {
        match &mut self.clients {
            None => (fnv1a(client.as_bytes()) % self.connections.max(1) as u64) as u32,
            Some(map) => match map.get(client) {
                Some(&c) => c,
                None if learn => {
                    let c = map.len() as u32;
                    map.insert(client.to_string(), c);
                    c
                }
                None => u32::MAX,
            },
        }
    }

    /// The label and connection of a record, or `None` when it is not replayed (the same
    /// rule as the scan's); `name` is scratch space.
    pub fn classify(&self, rec: &Record, name: &mut Vec<u8>) -> Option<Classified> {
        upper_name(rec, name);
        if !self.replays(name) {
            return None;
        }
        if !self.has(&rec.client) {
            return None;
        }
        let cmd = match self.index.get(name.as_slice()) {
            Some(&i) => i,
            None => self.other?,
        };
        let conn = match &self.clients {
            None => (fnv1a(rec.client.as_bytes()) % self.connections.max(1) as u64) as u32,
            Some(map) => *map.get(rec.client.as_str())?,
        };
        Some(Classified { cmd, conn })
    }

    /// The argument a cluster client routes the requests of label `cmd` by: the command's
    /// first key by the rules that find keys to rewrite, `None` for a command without keys
    /// (sent to the owner of slot 0).
    pub fn key_index(&self, cmd: usize) -> Option<usize> {
        let label = self.labels.get(cmd)?;
        match key_rule(label.as_bytes()) {
            KeyRule::None => None,
            KeyRule::Counted(at) => Some(at + 1),
            KeyRule::AfterFirst => Some(2),
            KeyRule::First
            | KeyRule::All
            | KeyRule::Pairs
            | KeyRule::Two
            | KeyRule::DestCounted => Some(1),
        }
    }

    /// The label index of `SELECT` (present when some record needs one).
    pub fn select_label(&self) -> Option<u16> {
        self.index.get(b"SELECT".as_slice()).copied()
    }

    /// Encode `rec` as a RESP request into `out`, its keys rewritten as the spec asks
    /// (`key_prefix`, `key_hash`) and each size placeholder written as that many bytes.
    pub fn encode(&self, rec: &Record, upper: &[u8], out: &mut Vec<u8>) {
        let rule = match self.spec.key_prefix.is_some() || self.spec.key_hash {
            true => key_rule(upper),
            false => KeyRule::None,
        };
        write_array_header(out, rec.len());
        for (i, arg) in rec.args().enumerate() {
            match arg {
                TraceArg::Size(n) => write_filler(out, n),
                TraceArg::Bytes(b) if is_key(rule, rec, i) => self.write_key(out, b),
                TraceArg::Bytes(b) => write_bulk(out, b),
            }
        }
    }

    fn write_key(&self, out: &mut Vec<u8>, key: &[u8]) {
        let prefix = self.spec.key_prefix.as_deref().unwrap_or("").as_bytes();
        let len = if self.spec.key_hash { 16 } else { key.len() };
        write_bulk_header(out, prefix.len() + len);
        self.rewrite_key(out, key);
        out.extend_from_slice(b"\r\n");
    }

    /// Append `key` as the replay sends it: with `key_prefix`, hashed with `key_hash`.
    pub fn rewrite_key(&self, out: &mut Vec<u8>, key: &[u8]) {
        out.extend_from_slice(self.spec.key_prefix.as_deref().unwrap_or("").as_bytes());
        if self.spec.key_hash {
            let h = fnv1a(key);
            for i in 0..16 {
                out.push(b"0123456789abcdef"[((h >> (60 - 4 * i)) & 0xf) as usize]);
            }
        } else {
            out.extend_from_slice(key);
        }
    }
}

/// Filler of a value whose size alone the trace holds.
const FILLER: [u8; 4096] = [b'x'; 4096];

fn write_filler(out: &mut Vec<u8>, n: u64) {
    let n = n.min(crate::spec::MAX_VALUE_SIZE as u64) as usize;
    write_bulk_header(out, n);
    let mut left = n;
    while left > 0 {
        let k = left.min(FILLER.len());
        out.extend_from_slice(&FILLER[..k]);
        left -= k;
    }
    out.extend_from_slice(b"\r\n");
}

/// The prefill's pass: which keys are read before any write, and the size of each one's
/// first later write.
#[derive(Default)]
struct PrefillScan {
    /// Keys seen (read or written), by hash.
    seen: HashSet<u64>,
    /// Keys to prefill, in first-read order, with the size learnt later (if any).
    keys: Vec<(Vec<u8>, Option<u64>)>,
    pending: HashMap<u64, usize>,
    not_prefilled: BTreeMap<String, u64>,
}

impl PrefillScan {
    /// Learn from one replayable record; `mine`: whether this host replays it (another
    /// host's first read of a key is that host's to prefill, its writes still count).
    fn observe(&mut self, rec: &Record, upper: &[u8], mine: bool) {
        let reads = READ_COMMANDS
            .iter()
            .any(|r| r.as_bytes().eq_ignore_ascii_case(upper));
        let string_read = STRING_READS.contains(&upper);
        let rule = key_rule(upper);
        if STRING_SETS.contains(&upper) {
            // SET key value / SETEX key ttl value: the first size learnt for a pending key.
            let at = if upper == b"SETEX" || upper == b"PSETEX" {
                3
            } else {
                2
            };
            if let Some(TraceArg::Bytes(key)) = rec.arg(1) {
                if let Some(&i) = self.pending.get(&fnv1a(key)) {
                    let size = match rec.arg(at) {
                        Some(TraceArg::Bytes(v)) => Some(v.len() as u64),
                        Some(TraceArg::Size(n)) => Some(n),
                        None => None,
                    };
                    if self.keys[i].1.is_none() {
                        self.keys[i].1 = size;
                    }
                }
            }
        }
        for i in 1..rec.len() {
            if !is_key(rule, rec, i) {
                continue;
            }
            let Some(TraceArg::Bytes(key)) = rec.arg(i) else {
                continue;
            };
            let h = fnv1a(key);
            if !self.seen.insert(h) || !mine {
                continue;
            }
            if string_read {
                self.pending.insert(h, self.keys.len());
                self.keys.push((key.to_vec(), None));
            } else if reads {
                let name = String::from_utf8_lossy(upper).into_owned();
                *self.not_prefilled.entry(name).or_default() += 1;
            }
        }
    }

    fn finish(self, default_size: u32) -> Option<Prefill> {
        (!self.keys.is_empty() || !self.not_prefilled.is_empty()).then(|| Prefill {
            keys: self
                .keys
                .into_iter()
                .map(|(k, size)| (k, size.unwrap_or(default_size as u64)))
                .collect(),
            not_prefilled: self.not_prefilled,
        })
    }
}
