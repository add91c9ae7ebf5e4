//! A workload spec fitted to a trace: its command mix, how popular its keys are, its value
//! sizes, TTLs and rate, so that a run of the spec offers the server traffic like the traced.
//!
//! [`ModelBuilder`] reads a trace one record at a time; its memory grows with the distinct
//! keys (a count per key, held by a 64-bit hash of it), not with the records.
//! [`ModelBuilder::fit`] makes a [`Model`]: a spec that `Workload::from_json_str` accepts and
//! a [`Fit`] saying how close it is. Key popularity is fitted as Zipf by maximum likelihood,
//! and as hotset and uniform too; the spec gets whichever is closest to the trace's own
//! popularity curve. When none is within 2% of it, the most popular keys get their own
//! shares and the rest a Zipf tail fitted to them (an `empirical` distribution), if that is
//! closer.

use super::{Record, TraceArg};
use crate::spec::{MAX_RATE, MAX_TEMPLATE_ARGS, MAX_VALUE_SIZE, MIN_RATE, READ_COMMANDS};
use serde_json::{json, Map, Value as Json};
use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;
use std::hash::{BuildHasherDefault, Hasher};

/// Options of a fit.
#[derive(Debug, Clone)]
pub struct ModelOptions {
    /// Multiply the trace's rate by this (default 1); not a positive finite number: 1.
    pub rate_x: f64,
    /// Multiply the number of keys by this (default 1); not a positive finite number: 1.
    pub keys_x: f64,
    /// `target.url` of the spec (default none: the spec's default target).
    pub target_url: Option<String>,
    /// How many of the most popular keys the popularity error compares (default 1000; 0:
    /// all of them).
    pub top_keys: usize,
}

impl Default for ModelOptions {
    fn default() -> Self {
        ModelOptions {
            rate_x: 1.0,
            keys_x: 1.0,
            target_url: None,
            top_keys: 1000,
        }
    }
}

/// The trace's distinct keys by who touched them: the read and the write key spaces and
/// their overlap.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct KeySpaces {
    /// Keys only reading commands touched (never written in the trace: they existed before
    /// it, or were misses).
    pub read_only: u64,
    /// Keys only writing commands touched (never read back in the trace).
    pub written_only: u64,
    /// Keys both read and written.
    pub read_and_written: u64,
}

/// One command of the mix: its share of the trace and of the model.
#[derive(Debug, Clone, serde::Serialize)]
pub struct MixShare {
    /// The command name, upper-cased.
    pub name: String,
    /// Its share of the trace's commands (0 to 1).
    pub trace_share: f64,
    /// Its share of the model's picks (0 to 1; 0 when left out).
    pub model_share: f64,
    /// What the spec sends for it (`get`, a template, or why it is left out).
    pub modelled_as: String,
}

/// How close a model is to its trace.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Fit {
    /// Commands read (records with a command name).
    pub commands: u64,
    /// Distinct keys the commands touched.
    pub distinct_keys: u64,
    /// From the first command to the last, seconds.
    pub duration_s: f64,
    /// Commands per second over the trace.
    pub mean_rate: f64,
    /// The command mix, most frequent first.
    pub mix: Vec<MixShare>,
    /// The Zipf exponent fitted to the keys' popularity by maximum likelihood (none with
    /// fewer than 2 keys).
    pub zipf_exponent: Option<f64>,
    /// The Zipf exponents of reading and of writing commands' keys, when they differ enough
    /// for the spec to give each its own (`keys.reads`, `keys.writes`).
    pub zipf_reads_writes: Option<(f64, f64)>,
    /// The read and write key spaces: how many distinct keys only reading commands touched,
    /// how many only writing ones, and how many both.
    pub key_spaces: KeySpaces,
    /// Largest difference between the trace's and the model's cumulative share of accesses
    /// over the most popular keys (ranks 1 to `top_keys`), 0 to 1 (Kolmogorov-Smirnov
    /// style), for the distribution chosen over the trace's number of keys.
    pub popularity_error: f64,
    /// The key distribution chosen, the closest: `zipf`, `hotset`, `uniform`, `empirical`
    /// (the most popular keys' own shares and a fitted tail, when no single curve is within
    /// 2%), or `none` (no keys).
    pub popularity: String,
    /// Value sizes written (bytes, share), at most 16 buckets.
    pub sizes: Vec<(u64, f64)>,
    /// TTLs set (seconds, share), at most 16 buckets.
    pub ttls: Vec<(u64, f64)>,
    /// Commands per second, one entry per `rate_step_s` seconds of the trace.
    pub rate_profile: Vec<f64>,
    /// Seconds per entry of `rate_profile`: 1, more for traces longer than 10,000 s.
    pub rate_step_s: u64,
    /// What the spec could not express, one sentence each.
    pub notes: Vec<String>,
}

/// A fitted model: the spec and how close it is to the trace.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Model {
    /// A full spec (target, load, keys, values, commands) for `Workload::from_json_str`.
    pub spec: Json,
    /// How close it is.
    pub fit: Fit,
}

impl Model {
    /// The spec as TOML, with the fit summarized in comments at the top.
    pub fn to_toml(&self) -> String {
        let mut out = String::new();
        for line in self.summary().lines() {
            out.push_str(if line.is_empty() { "#" } else { "# " });
            out.push_str(line);
            out.push('\n');
        }
        // Section by section, in the order a reader looks for them (a whole document would
        // come out in alphabetical order).
        let Json::Object(spec) = &self.spec else {
            return out;
        };
        let order = ["target", "load", "keys", "values", "commands"];
        let rest = spec.keys().filter(|k| !order.contains(&k.as_str()));
        for key in order.iter().copied().chain(rest.map(String::as_str)) {
            let Some(v) = spec.get(key) else { continue };
            let mut one = Map::new();
            one.insert(key.to_string(), v.clone());
            out.push('\n');
            match toml::to_string(&one) {
                Ok(text) => out.push_str(&text),
                Err(e) => {
                    let _ = writeln!(out, "# `{key}` could not be written as TOML: {e}");
                }
            }
        }
        out
    }

    /// The fit in a few human-readable lines: the mix (trace and model), the key
    /// popularity, sizes, TTLs, rate, and what the spec could not express.
    pub fn summary(&self) -> String {
        let f = &self.fit;
        let mut s = String::new();
        let _ = writeln!(
            s,
            "respload model of a trace: {} commands, {} distinct keys, {:.1} s, {:.1} ops/s",
            f.commands, f.distinct_keys, f.duration_s, f.mean_rate
        );
        let _ = writeln!(s, "mix (trace -> model):");
        for m in &f.mix {
            let _ = writeln!(
                s,
                "  {:<16} {:>7.3}% -> {:>7.3}%  {}",
                m.name,
                m.trace_share * 100.0,
                m.model_share * 100.0,
                m.modelled_as
            );
        }
        let exponent = f
            .zipf_exponent
            .map_or("none".to_string(), |e| format!("{e:.3}"));
        let _ = writeln!(
            s,
            "keys: {} popularity (zipf exponent {exponent} by maximum likelihood), popularity \
             error {:.4}",
            f.popularity, f.popularity_error
        );
        if let Some((r, w)) = f.zipf_reads_writes {
            let _ = writeln!(s, "  reads zipf {r:.3}, writes zipf {w:.3}");
        }
        let k = &f.key_spaces;
        let _ = writeln!(
            s,
            "  key spaces: {} only read, {} only written, {} both",
            k.read_only, k.written_only, k.read_and_written
        );
        let list = |v: &[(u64, f64)], unit: &str| {
            v.iter()
                .map(|(x, p)| format!("{x}{unit} {:.1}%", p * 100.0))
                .collect::<Vec<_>>()
                .join(", ")
        };
        if !f.sizes.is_empty() {
            let _ = writeln!(s, "sizes: {}", list(&f.sizes, " B"));
        }
        if !f.ttls.is_empty() {
            let _ = writeln!(s, "ttls: {}", list(&f.ttls, " s"));
        }
        let (lo, hi) = f
            .rate_profile
            .iter()
            .fold((f64::INFINITY, 0.0f64), |(a, b), &x| (a.min(x), b.max(x)));
        if f.rate_profile.is_empty() {
            let _ = writeln!(s, "rate: {:.1} ops/s", f.mean_rate);
        } else {
            let _ = writeln!(
                s,
                "rate: mean {:.1} ops/s, per {} s from {lo:.1} to {hi:.1} ops/s",
                f.mean_rate, f.rate_step_s
            );
        }
        for n in &f.notes {
            let _ = writeln!(s, "note: {n}");
        }
        s
    }
}

/// Accumulates a trace, one record at a time (streaming; memory bounded by distinct keys,
/// not by records).
#[derive(Debug, Default)]
pub struct ModelBuilder {
    commands: u64,
    unnamed: u64,
    first_us: Option<u64>,
    last_us: u64,
    per_second: BTreeMap<u64, u64>,
    keys: HashMap<u64, [u64; 2], BuildHasherDefault<Prehashed>>,
    names: HashMap<Vec<u8>, CmdStats>,
    past_names: u64,
    sizes: BTreeMap<u64, u64>,
    ttls_s: BTreeMap<u64, u64>,
    dbs: BTreeMap<u32, u64>,
    prefix: Option<Vec<u8>>,
    example_bytes: usize,
    scratch_name: Vec<u8>,
    scratch_roles: Vec<Role>,
}

/// A command's spec entry and what it sends, or why it is left out.
type Modelled = Result<(Json, String), String>;

/// Distinct command names kept (a trace of garbage names must not grow without bound).
const MAX_NAMES: usize = 1000;
/// Example records kept per command name (the first of each argument count).
const MAX_EXAMPLES: usize = 4;
/// Argument counts tallied per command name.
const MAX_ARGCS: usize = 64;
/// Longest argument kept in an example; a longer one cannot be a literal of a template.
const MAX_LITERAL: usize = 4096;
/// Bytes of examples kept in all.
const EXAMPLE_BUDGET: usize = 16 << 20;
/// Buckets of the size and TTL lists.
const MAX_BUCKETS: usize = 16;
/// Entries of the rate profile.
const MAX_PROFILE: u64 = 10_000;
/// Distinct databases tallied.
const MAX_DBS: usize = 64;
/// Longest key prefix looked for.
const MAX_PREFIX: usize = 64;
/// Sum of the mix weights (each at most the spec's 1,000,000).
const WEIGHT_SCALE: f64 = 1_000_000.0;
/// The range over which the Zipf exponent is searched (the spec allows up to 5).
const ZIPF_RANGE: (f64, f64) = (0.01, 5.0);

#[derive(Debug, Default)]
struct CmdStats {
    count: u64,
    argc: BTreeMap<usize, u64>,
    examples: Vec<Vec<ExArg>>,
    ttl_ms: BTreeMap<u64, u64>,
    with_ttl: u64,
    /// Records shaped as the built-in of that name sends them.
    builtin_shape: u64,
}

#[derive(Debug, Clone)]
enum ExArg {
    Bytes(Vec<u8>),
    Long,
    Size,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Role {
    Name,
    Key,
    Value,
    TtlSecs,
    TtlMillis,
    Lit,
}

/// Keys are counted by a 64-bit hash already: the map need not hash it again.
#[derive(Debug, Default, Clone, Copy)]
struct Prehashed(u64);

impl Hasher for Prehashed {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(b);
        }
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = n;
    }
}

fn key_hash(arg: TraceArg<'_>) -> u64 {
    let mut h = std::hash::DefaultHasher::new();
    match arg {
        TraceArg::Bytes(b) => h.write(b),
        TraceArg::Size(n) => {
            h.write_u8(0xff);
            h.write_u64(n);
        }
    }
    h.finish()
}

/// What kind of command, for the model: one sent as traced (no key), one left out (it
/// changes the connection, blocks, or administers the server), or one on keys.
enum Kind {
    Plain,
    LeftOut(&'static str),
    Keyed,
}

const PLAIN: &[&[u8]] = &[
    b"PING",
    b"ECHO",
    b"INFO",
    b"TIME",
    b"DBSIZE",
    b"LASTSAVE",
    b"COMMAND",
    b"KEYS",
    b"SCAN",
    b"RANDOMKEY",
    b"PUBLISH",
    b"SPUBLISH",
    b"ROLE",
    b"LOLWUT",
];
const CONNECTION_STATE: &[&[u8]] = &[
    b"SELECT",
    b"AUTH",
    b"HELLO",
    b"MULTI",
    b"EXEC",
    b"DISCARD",
    b"WATCH",
    b"UNWATCH",
    b"SUBSCRIBE",
    b"PSUBSCRIBE",
    b"SSUBSCRIBE",
    b"UNSUBSCRIBE",
    b"PUNSUBSCRIBE",
    b"SUNSUBSCRIBE",
    b"MONITOR",
    b"QUIT",
    b"RESET",
    b"CLIENT",
    b"READONLY",
    b"READWRITE",
    b"ASKING",
];
const BLOCKING: &[&[u8]] = &[
    b"BLPOP",
    b"BRPOP",
    b"BRPOPLPUSH",
    b"BLMOVE",
    b"BLMPOP",
    b"BZPOPMIN",
    b"BZPOPMAX",
    b"BZMPOP",
    b"WAIT",
    b"WAITAOF",
    b"XREAD",
    b"XREADGROUP",
];
const ADMIN: &[&[u8]] = &[
    b"FLUSHDB",
    b"FLUSHALL",
    b"SHUTDOWN",
    b"DEBUG",
    b"CONFIG",
    b"SAVE",
    b"BGSAVE",
    b"BGREWRITEAOF",
    b"REPLICAOF",
    b"SLAVEOF",
    b"SWAPDB",
    b"MIGRATE",
    b"CLUSTER",
    b"FAILOVER",
    b"SYNC",
    b"PSYNC",
    b"REPLCONF",
    b"ACL",
    b"MODULE",
    b"SCRIPT",
    b"FUNCTION",
    b"SLOWLOG",
    b"LATENCY",
];
const NEEDS_SCRIPT: &[&[u8]] = &[b"EVALSHA", b"EVALSHA_RO", b"FCALL", b"FCALL_RO"];
const ALL_KEYS: &[&[u8]] = &[
    b"DEL",
    b"UNLINK",
    b"EXISTS",
    b"TOUCH",
    b"MGET",
    b"SINTER",
    b"SUNION",
    b"SDIFF",
    b"SINTERSTORE",
    b"SUNIONSTORE",
    b"SDIFFSTORE",
    b"PFCOUNT",
    b"PFMERGE",
    b"RENAME",
    b"RENAMENX",
];
const NUMKEYS_FIRST: &[&[u8]] = &[
    b"ZUNION",
    b"ZINTER",
    b"ZDIFF",
    b"SINTERCARD",
    b"LMPOP",
    b"ZMPOP",
];

fn kind(name: &[u8]) -> Kind {
    let is = |list: &[&[u8]]| list.contains(&name);
    if is(PLAIN) {
        Kind::Plain
    } else if is(CONNECTION_STATE) {
        Kind::LeftOut("left out: it changes the connection's state")
    } else if is(BLOCKING) {
        Kind::LeftOut("left out: it blocks the connection")
    } else if is(ADMIN) {
        Kind::LeftOut("left out: it administers the server")
    } else if is(NEEDS_SCRIPT) {
        Kind::LeftOut("left out: it needs a script or function loaded")
    } else {
        Kind::Keyed
    }
}

fn parse_u64(b: Option<&[u8]>) -> Option<u64> {
    let b = b?;
    if b.is_empty() || b.len() > 19 || !b.iter().all(u8::is_ascii_digit) {
        return None;
    }
    b.iter().try_fold(0u64, |n, &d| {
        n.checked_mul(10)?.checked_add(u64::from(d - b'0'))
    })
}

/// Each argument's role in a command named `name` (upper-cased) of `argc` arguments;
/// `word(i)` gives argument `i`'s bytes when it has them.
fn assign_roles<'a>(
    name: &[u8],
    argc: usize,
    word: impl Fn(usize) -> Option<&'a [u8]>,
    out: &mut Vec<Role>,
) {
    fn set(out: &mut [Role], i: usize, r: Role) {
        if let Some(x) = out.get_mut(i) {
            *x = r;
        }
    }
    out.clear();
    out.resize(argc, Role::Lit);
    if argc == 0 {
        return;
    }
    out[0] = Role::Name;
    if !matches!(kind(name), Kind::Keyed) {
        return;
    }
    let ttl_options = |out: &mut [Role], from: usize| {
        let mut i = from;
        while i + 1 < argc {
            let w = word(i).unwrap_or_default();
            if w.eq_ignore_ascii_case(b"EX") {
                set(out, i + 1, Role::TtlSecs);
                i += 1;
            } else if w.eq_ignore_ascii_case(b"PX") {
                set(out, i + 1, Role::TtlMillis);
                i += 1;
            }
            i += 1;
        }
    };
    let keys = |out: &mut [Role], from: usize, count: Option<u64>| {
        let n = count.map_or(0, |c| usize::try_from(c).unwrap_or(usize::MAX));
        for i in from..from.saturating_add(n).min(argc) {
            set(out, i, Role::Key);
        }
    };
    let is = |list: &[&[u8]]| list.contains(&name);
    match name {
        b"SET" => {
            set(out, 1, Role::Key);
            set(out, 2, Role::Value);
            ttl_options(out, 3);
        }
        b"GETEX" => {
            set(out, 1, Role::Key);
            ttl_options(out, 2);
        }
        b"SETNX" | b"GETSET" | b"APPEND" => {
            set(out, 1, Role::Key);
            set(out, 2, Role::Value);
        }
        b"SETEX" | b"PSETEX" => {
            set(out, 1, Role::Key);
            let unit = if name == b"SETEX" {
                Role::TtlSecs
            } else {
                Role::TtlMillis
            };
            set(out, 2, unit);
            set(out, 3, Role::Value);
        }
        b"SETRANGE" | b"LSET" => {
            set(out, 1, Role::Key);
            set(out, 3, Role::Value);
        }
        b"LINSERT" => {
            set(out, 1, Role::Key);
            set(out, 4, Role::Value);
        }
        b"EXPIRE" | b"PEXPIRE" => {
            set(out, 1, Role::Key);
            let unit = if name == b"EXPIRE" {
                Role::TtlSecs
            } else {
                Role::TtlMillis
            };
            set(out, 2, unit);
        }
        b"MSET" | b"MSETNX" => {
            for i in 1..argc {
                set(out, i, if i % 2 == 1 { Role::Key } else { Role::Value });
            }
        }
        b"HSET" | b"HMSET" | b"HSETNX" => {
            set(out, 1, Role::Key);
            for i in (3..argc).step_by(2) {
                set(out, i, Role::Value);
            }
        }
        b"LPUSH" | b"RPUSH" | b"LPUSHX" | b"RPUSHX" => {
            set(out, 1, Role::Key);
            for i in 2..argc {
                set(out, i, Role::Value);
            }
        }
        b"RPOPLPUSH" | b"LMOVE" | b"SMOVE" | b"COPY" => {
            set(out, 1, Role::Key);
            set(out, 2, Role::Key);
        }
        b"ZUNIONSTORE" | b"ZINTERSTORE" | b"ZDIFFSTORE" => {
            set(out, 1, Role::Key);
            keys(out, 3, parse_u64(word(2)));
        }
        b"EVAL" | b"EVAL_RO" => keys(out, 3, parse_u64(word(2))),
        b"OBJECT" | b"MEMORY" | b"XINFO" | b"XGROUP" => set(out, 2, Role::Key),
        _ if is(ALL_KEYS) => keys(out, 1, Some(argc as u64)),
        _ if is(NUMKEYS_FIRST) => keys(out, 2, parse_u64(word(1))),
        // As Redis Cluster routes a command it does not know: by its first argument.
        _ => set(out, 1, Role::Key),
    }
}

/// The built-in that sends what `name` does, and whether a record has its shape.
fn builtin_for(name: &[u8], roles: &[Role]) -> Option<(&'static str, bool)> {
    let argc = roles.len();
    Some(match name {
        b"GET" => ("get", argc == 2),
        b"PING" => ("ping", argc == 1),
        b"SET" => (
            "set",
            argc == 3 || (argc == 5 && matches!(roles[4], Role::TtlSecs | Role::TtlMillis)),
        ),
        b"MGET" => ("mget", argc == 11),
        b"MSET" => ("mset", argc == 21),
        _ => return None,
    })
}

/// `v` rounded to 3 significant digits: histograms of sizes and TTLs stay small.
fn round_sig(v: u64) -> u64 {
    if v < 1000 {
        return v;
    }
    let (mut x, mut scale) = (v, 1u64);
    while x >= 1000 {
        x /= 10;
        scale *= 10;
    }
    if (v - x * scale) * 2 >= scale {
        x += 1;
    }
    x.saturating_mul(scale)
}

fn tally(hist: &mut BTreeMap<u64, u64>, v: u64) {
    *hist.entry(round_sig(v)).or_default() += 1;
}

fn ttl_ms(role: Role, arg: Option<TraceArg<'_>>) -> Option<u64> {
    let n = match arg? {
        TraceArg::Bytes(b) => parse_u64(Some(b))?,
        TraceArg::Size(_) => return None,
    };
    match role {
        Role::TtlSecs => n.checked_mul(1000),
        _ => Some(n),
    }
}

impl ModelBuilder {
    /// An empty builder.
    pub fn new() -> Self {
        Self::default()
    }

    /// Count one command of the trace. Records without a command name are skipped.
    pub fn observe(&mut self, rec: &Record) {
        let Some(raw_name) = rec.name().filter(|n| !n.is_empty()) else {
            self.unnamed += 1;
            return;
        };
        self.commands += 1;
        let sec = rec.t_us / 1_000_000;
        *self.per_second.entry(sec).or_default() += 1;
        match self.first_us {
            Some(f) if f <= rec.t_us => {}
            _ => self.first_us = Some(rec.t_us),
        }
        self.last_us = self.last_us.max(rec.t_us);
        if self.dbs.len() < MAX_DBS || self.dbs.contains_key(&rec.db) {
            *self.dbs.entry(rec.db).or_default() += 1;
        }

        let mut name = std::mem::take(&mut self.scratch_name);
        name.clear();
        name.extend(raw_name.iter().map(u8::to_ascii_uppercase));
        let mut roles = std::mem::take(&mut self.scratch_roles);
        assign_roles(
            &name,
            rec.len(),
            |i| match rec.arg(i) {
                Some(TraceArg::Bytes(b)) => Some(b),
                _ => None,
            },
            &mut roles,
        );
        let reads = std::str::from_utf8(&name).is_ok_and(|n| READ_COMMANDS.contains(&n));
        let mut ttl = None;
        for (i, role) in roles.iter().enumerate() {
            let arg = rec.arg(i);
            match (role, arg) {
                (Role::Key, Some(a)) => {
                    let c = self.keys.entry(key_hash(a)).or_default();
                    c[usize::from(!reads)] += 1;
                    if let TraceArg::Bytes(b) = a {
                        self.common_prefix(b);
                    }
                }
                (Role::Value, Some(TraceArg::Bytes(b))) => tally(&mut self.sizes, b.len() as u64),
                (Role::Value, Some(TraceArg::Size(n))) => tally(&mut self.sizes, n),
                (Role::TtlSecs | Role::TtlMillis, a) => {
                    if let Some(ms) = ttl_ms(*role, a) {
                        tally(&mut self.ttls_s, ms.div_ceil(1000));
                        ttl = Some(ms);
                    }
                }
                _ => {}
            }
        }
        self.count_command(&name, rec, &roles, ttl);
        self.scratch_name = name;
        self.scratch_roles = roles;
    }

    fn common_prefix(&mut self, key: &[u8]) {
        match &mut self.prefix {
            None => self.prefix = Some(key[..key.len().min(MAX_PREFIX)].to_vec()),
            Some(p) => {
                let same = p.iter().zip(key).take_while(|(a, b)| a == b).count();
                p.truncate(same);
            }
        }
    }

    fn count_command(&mut self, name: &[u8], rec: &Record, roles: &[Role], ttl: Option<u64>) {
        if !self.names.contains_key(name) && self.names.len() >= MAX_NAMES {
            self.past_names += 1;
            return;
        }
        let stats = self.names.entry(name.to_vec()).or_default();
        stats.count += 1;
        let argc = roles.len();
        if stats.argc.len() < MAX_ARGCS || stats.argc.contains_key(&argc) {
            *stats.argc.entry(argc).or_default() += 1;
        }
        if let Some(ms) = ttl {
            stats.with_ttl += 1;
            tally(&mut stats.ttl_ms, ms);
        }
        if builtin_for(name, roles).is_some_and(|(_, shaped)| shaped) {
            stats.builtin_shape += 1;
        }
        let new_shape = stats.examples.len() < MAX_EXAMPLES
            && !stats.examples.iter().any(|e| e.len() == argc)
            && argc <= MAX_TEMPLATE_ARGS;
        if new_shape && self.example_bytes < EXAMPLE_BUDGET {
            let example: Vec<ExArg> = rec
                .args()
                .map(|a| match a {
                    TraceArg::Bytes(b) if b.len() <= MAX_LITERAL => ExArg::Bytes(b.to_vec()),
                    TraceArg::Bytes(_) => ExArg::Long,
                    TraceArg::Size(_) => ExArg::Size,
                })
                .collect();
            self.example_bytes += example
                .iter()
                .map(|a| match a {
                    ExArg::Bytes(b) => b.len() + 32,
                    _ => 32,
                })
                .sum::<usize>();
            stats.examples.push(example);
        }
    }

    /// Fit a spec to what was observed.
    pub fn fit(&self, opts: &ModelOptions) -> Model {
        let sane = |x: f64| if x.is_finite() && x > 0.0 { x } else { 1.0 };
        let (rate_x, keys_x) = (sane(opts.rate_x), sane(opts.keys_x));
        let mut notes = Vec::new();
        if self.unnamed > 0 {
            notes.push(format!(
                "{} records without a command name were skipped",
                self.unnamed
            ));
        }

        // Key popularity.
        let mut all: Vec<u64> = self.keys.values().map(|c| c[0] + c[1]).collect();
        all.sort_unstable_by(|a, b| b.cmp(a));
        let distinct = all.len() as u64;
        let key_spaces = self.key_spaces();
        // Noted when reads and writes go largely to different keys (a tenth of the keys each
        // way at least): a popular key space always has a tail read but never written.
        let tenth = |n: u64| n * 10 >= distinct.max(1);
        if tenth(key_spaces.read_only) && tenth(key_spaces.written_only) {
            let pct = |n: u64| n as f64 * 100.0 / distinct.max(1) as f64;
            notes.push(format!(
                "{:.0}% of the keys were only read and {:.0}% only written, {:.0}% both: the \
                 model draws reads and writes from one key range",
                pct(key_spaces.read_only),
                pct(key_spaces.written_only),
                pct(key_spaces.read_and_written)
            ));
        }
        let pop = popularity(&all, opts.top_keys);
        let key_count = ((distinct.max(1) as f64 * keys_x).round()).clamp(1.0, 1e18) as u64;
        let mut keys = Map::new();
        keys.insert("prefix".into(), json!(self.key_prefix()));
        keys.insert("range".into(), json!([0, key_count - 1]));
        keys.insert("distribution".into(), pop.chosen.to_json(key_count));
        let mut zipf_reads_writes = None;
        if let Choice::Zipf(_) = pop.chosen {
            let class = |i: usize| {
                let mut v: Vec<u64> = self
                    .keys
                    .values()
                    .map(|c| c[i])
                    .filter(|&c| c > 0)
                    .collect();
                v.sort_unstable_by(|a, b| b.cmp(a));
                (v.iter().sum::<u64>() >= 1000)
                    .then(|| fit_zipf(&v))
                    .flatten()
            };
            if let (Some(r), Some(w)) = (class(0), class(1)) {
                if (r - w).abs() > 0.1 {
                    let zipf = |s| json!({"kind": "zipf", "exponent": zipf_param(s)});
                    keys.insert("reads".into(), zipf(r));
                    keys.insert("writes".into(), zipf(w));
                    zipf_reads_writes = Some((r, w));
                }
            }
        }
        if let Choice::Empirical { shares, tail } = &pop.chosen {
            let tail = tail.map_or("uniform".to_string(), |s| format!("Zipf({s:.3})"));
            notes.push(format!(
                "no single curve is within {:.0}% of the keys' popularity: the {} most popular \
                 keys get their own shares ({:.1}% of the commands), the others a {tail} tail",
                CURVE_GOOD_ENOUGH * 100.0,
                shares.len(),
                shares.iter().sum::<f64>() * 100.0
            ));
        }
        if distinct > 0 && pop.error > 0.05 {
            notes.push(format!(
                "the keys' popularity is {:.0}% off at worst from the closest distribution ({})",
                pop.error * 100.0,
                pop.chosen.name()
            ));
        }

        // Values and TTLs.
        let sizes = buckets(&self.sizes, MAX_BUCKETS);
        let ttls = buckets(&self.ttls_s, MAX_BUCKETS);
        let mut values = Map::new();
        let size_of = |s: u64| s.clamp(1, u64::from(MAX_VALUE_SIZE));
        match sizes.as_slice() {
            [] => {}
            [(s, _)] => {
                values.insert("size".into(), json!(size_of(*s)));
            }
            many => {
                let list: Vec<Json> = many
                    .iter()
                    .map(|&(s, p)| json!([size_of(s), weight(p)]))
                    .collect();
                values.insert("size".into(), Json::Array(list));
            }
        }

        // Commands.
        let (commands, mix) = self.commands_of(key_count, &mut values, &mut notes);

        // Rate.
        let duration_s = match self.first_us {
            Some(f) => (self.last_us - f) as f64 / 1e6,
            None => 0.0,
        };
        let mean_rate = if duration_s > 0.0 {
            self.commands as f64 / duration_s
        } else {
            self.commands as f64
        };
        let (profile, step_s) = self.profile();
        let mut load = Map::new();
        let spec_duration = duration_s.clamp(0.001, 1e9);
        load.insert(
            "duration".into(),
            json!(if spec_duration >= 10.0 {
                format!("{}s", spec_duration.ceil() as u64)
            } else {
                format!("{}ms", (spec_duration * 1000.0).ceil() as u64)
            }),
        );
        let clamp_rate = |r: f64| round_to(r, 3).clamp(MIN_RATE, MAX_RATE);
        match rate_shape(&profile, step_s, mean_rate) {
            RateShape::Steady => {
                load.insert("rate".into(), json!(clamp_rate(mean_rate * rate_x)));
            }
            RateShape::Ramp {
                start,
                end,
                steps,
                step_duration,
            } => {
                let (start, end) = (clamp_rate(start * rate_x), clamp_rate(end * rate_x));
                let step = (end - start).abs() / (steps - 1) as f64;
                if step > 0.0 && step <= MAX_RATE {
                    load.insert(
                        "rate_ramp".into(),
                        json!({
                            "start": start,
                            "end": end,
                            "step": step,
                            "step_duration": format!("{step_duration}s"),
                        }),
                    );
                    notes.push(format!(
                        "the rate follows a trend, modelled as a ramp from {start:.1} to {end:.1} \
                         ops/s in {steps} steps"
                    ));
                } else {
                    load.insert("rate".into(), json!(clamp_rate(mean_rate * rate_x)));
                }
            }
            RateShape::Varies(by) => {
                let rates: Vec<f64> = profile.iter().map(|&r| clamp_rate(r * rate_x)).collect();
                load.insert(
                    "rate_profile".into(),
                    json!({ "rates": rates, "step_duration": format!("{step_s}s") }),
                );
                notes.push(format!(
                    "the rate varies by {:.0}% of its mean over the trace, not along a line: \
                     modelled as a rate profile, one rate per {step_s} s",
                    by * 100.0
                ));
            }
        }

        let mut target = Map::new();
        if let Some(url) = &opts.target_url {
            target.insert("url".into(), json!(url));
        } else if let [(db, _)] = self.dbs.iter().collect::<Vec<_>>().as_slice() {
            if **db != 0 {
                target.insert("db".into(), json!(db));
            }
        }

        let spec = json!({
            "target": target,
            "load": load,
            "keys": keys,
            "values": values,
            "commands": commands,
        });
        Model {
            spec,
            fit: Fit {
                commands: self.commands,
                distinct_keys: distinct,
                duration_s,
                mean_rate,
                mix,
                zipf_exponent: pop.exponent,
                zipf_reads_writes,
                key_spaces,
                popularity_error: pop.error,
                popularity: pop.chosen.name().into(),
                sizes,
                ttls,
                rate_profile: profile,
                rate_step_s: step_s,
                notes,
            },
        }
    }

    /// The distinct keys by the kind of commands that touched them.
    fn key_spaces(&self) -> KeySpaces {
        let mut k = KeySpaces::default();
        for [reads, writes] in self.keys.values() {
            match (*reads > 0, *writes > 0) {
                (true, false) => k.read_only += 1,
                (false, true) => k.written_only += 1,
                _ => k.read_and_written += 1,
            }
        }
        k
    }

    /// The keys' common text before their numbers or ids (`user:`), else `key:`.
    fn key_prefix(&self) -> String {
        let p = self.prefix.as_deref().unwrap_or_default();
        let cut = p
            .iter()
            .rposition(|c| !c.is_ascii_alphanumeric())
            .map_or(0, |i| i + 1);
        let p = &p[..cut];
        match std::str::from_utf8(p) {
            Ok(s) if !s.is_empty() && p.iter().all(|c| c.is_ascii_graphic()) => s.to_string(),
            _ => "key:".into(),
        }
    }

    /// The spec's commands and the mix they give; `values` gets `expiry` when the built-in
    /// SET carries the TTLs.
    fn commands_of(
        &self,
        key_count: u64,
        values: &mut Map<String, Json>,
        notes: &mut Vec<String>,
    ) -> (Vec<Json>, Vec<MixShare>) {
        let total = self.commands.max(1) as f64;
        let mut names: Vec<(&Vec<u8>, &CmdStats)> = self.names.iter().collect();
        names.sort_by(|a, b| b.1.count.cmp(&a.1.count).then(a.0.cmp(b.0)));
        let prefix = self.key_prefix();
        let mut chosen: Vec<(String, u64, Modelled)> = Vec::new();
        for (name, stats) in names {
            // Control characters escaped: the summary goes into TOML comments.
            let text: String = String::from_utf8_lossy(name)
                .chars()
                .flat_map(|c| {
                    let esc = c.is_control().then(|| c.escape_default());
                    esc.into_iter()
                        .flatten()
                        .chain((!c.is_control()).then_some(c))
                })
                .collect();
            let entry = if !name.iter().all(u8::is_ascii_graphic) {
                Err("left out: its name is not printable text".to_string())
            } else if let Kind::LeftOut(why) = kind(name) {
                Err(why.to_string())
            } else {
                self.command_of(name, stats, &prefix, key_count, values)
            };
            chosen.push((text, stats.count, entry));
        }
        let included: u64 = chosen.iter().filter(|c| c.2.is_ok()).map(|c| c.1).sum();
        let mut commands = Vec::new();
        let mut weights = Vec::new();
        for (_, count, entry) in &chosen {
            if let Ok((spec, _)) = entry {
                let w = weight(*count as f64 / included.max(1) as f64);
                let mut spec = spec.clone();
                spec["weight"] = json!(w);
                commands.push(spec);
                weights.push(w);
            }
        }
        let weight_sum: u64 = weights.iter().sum();
        let mut weights = weights.into_iter();
        let mut mix = Vec::new();
        for (name, count, entry) in chosen {
            let (model_share, modelled_as) = match entry {
                Ok((_, how)) => (
                    weights.next().unwrap_or(0) as f64 / weight_sum.max(1) as f64,
                    how,
                ),
                Err(why) => (0.0, why),
            };
            mix.push(MixShare {
                name,
                trace_share: count as f64 / total,
                model_share,
                modelled_as,
            });
        }
        if self.past_names > 0 {
            notes.push(format!(
                "{} commands past the first {MAX_NAMES} distinct names are left out",
                self.past_names
            ));
        }
        let left_out: f64 = mix
            .iter()
            .filter(|m| m.model_share == 0.0)
            .map(|m| m.trace_share)
            .sum::<f64>()
            + self.past_names as f64 / total;
        if left_out > 0.0 {
            notes.push(format!(
                "{:.2}% of the trace's commands are left out of the model (see the mix)",
                left_out * 100.0
            ));
        }
        if commands.is_empty() {
            notes.push("the trace has no command the model can send: the spec sends PING".into());
            commands.push(json!({"name": "ping"}));
        }
        (commands, mix)
    }

    /// One command's spec entry and what it says, or why it is left out.
    fn command_of(
        &self,
        name: &[u8],
        stats: &CmdStats,
        prefix: &str,
        key_count: u64,
        values: &mut Map<String, Json>,
    ) -> Modelled {
        let mut roles = Vec::new();
        if let Some((builtin, _)) = builtin_for(name, &[]) {
            if stats.builtin_shape * 2 >= stats.count {
                let mut how = builtin.to_string();
                if builtin == "set" && stats.with_ttl * 2 >= stats.count {
                    if let Some((lo, hi)) = ttl_range(&stats.ttl_ms, 1000) {
                        let hi = hi.min(u64::from(u32::MAX));
                        values.insert("expiry".into(), json!([lo.min(hi), hi]));
                        how = format!("set, values.expiry = [{}, {hi}]", lo.min(hi));
                    }
                }
                return Ok((json!({ "name": builtin }), how));
            }
        }
        // The example of the most frequent argument count kept.
        let example = stats
            .examples
            .iter()
            .max_by_key(|e| (stats.argc.get(&e.len()).copied().unwrap_or(0), e.len()))
            .ok_or("left out: no example of it was kept")?;
        assign_roles(
            name,
            example.len(),
            |i| match example.get(i) {
                Some(ExArg::Bytes(b)) => Some(b.as_slice()),
                _ => None,
            },
            &mut roles,
        );
        let mut words = Vec::with_capacity(example.len());
        let mut first_key = true;
        for (arg, role) in example.iter().zip(&roles) {
            let w = match (role, arg) {
                (Role::Key, _) if first_key => {
                    first_key = false;
                    "{key}".to_string()
                }
                (Role::Key, _) => {
                    template_word(prefix.as_bytes(), &format!("{{rand:0..{}}}", key_count - 1))
                }
                (Role::Value, _) | (_, ExArg::Size) => "{value}".into(),
                (Role::TtlSecs | Role::TtlMillis, ExArg::Bytes(b)) => {
                    let unit = if *role == Role::TtlSecs { 1000 } else { 1 };
                    match ttl_range(&stats.ttl_ms, unit) {
                        Some((lo, hi)) => {
                            // `{rand:..}` takes 64-bit signed bounds.
                            let hi = hi.min(i64::MAX as u64);
                            format!("{{rand:{}..{hi}}}", lo.min(hi))
                        }
                        None => template_word(b, ""),
                    }
                }
                (_, ExArg::Bytes(b)) => template_word(b, ""),
                (_, ExArg::Long) => {
                    return Err(format!(
                        "left out: an argument longer than {MAX_LITERAL} bytes that is not a value"
                    ))
                }
            };
            words.push(w);
        }
        let line = words.join(" ");
        Ok((json!({ "template": line }), line))
    }

    /// Commands per second along the trace, and the seconds per entry.
    fn profile(&self) -> (Vec<f64>, u64) {
        let (Some((&first, _)), Some((&last, _))) = (
            self.per_second.first_key_value(),
            self.per_second.last_key_value(),
        ) else {
            return (Vec::new(), 1);
        };
        let span = last - first + 1;
        let step = span.div_ceil(MAX_PROFILE).max(1);
        let mut profile = vec![0.0; span.div_ceil(step) as usize];
        for (&sec, &n) in &self.per_second {
            if let Some(slot) = profile.get_mut(((sec - first) / step) as usize) {
                *slot += n as f64 / step as f64;
            }
        }
        (profile, step)
    }
}

/// `x` to `digits` decimals: the spec is read by people too.
fn round_to(x: f64, digits: i32) -> f64 {
    let scale = 10f64.powi(digits);
    let r = (x * scale).round() / scale;
    if r.is_finite() {
        r
    } else {
        x
    }
}

/// A weight of the spec (1 to 1,000,000) for a share.
fn weight(share: f64) -> u64 {
    (share * WEIGHT_SCALE).round().clamp(1.0, WEIGHT_SCALE) as u64
}

/// The 1st and 99th percentiles of TTLs held in milliseconds, in units of `unit` ms
/// (rounded up, at least 1).
fn ttl_range(hist: &BTreeMap<u64, u64>, unit: u64) -> Option<(u64, u64)> {
    let conv = |ms: u64| ms.div_ceil(unit).max(1);
    Some((conv(quantile(hist, 0.01)?), conv(quantile(hist, 0.99)?)))
}

fn quantile(hist: &BTreeMap<u64, u64>, q: f64) -> Option<u64> {
    let total: u64 = hist.values().sum();
    let want = (q * total as f64).ceil().max(1.0) as u64;
    let mut seen = 0;
    for (&v, &c) in hist {
        seen += c;
        if seen >= want {
            return Some(v);
        }
    }
    hist.keys().next_back().copied()
}

/// A histogram as at most `max` (value, share) buckets of about equal share, each at the
/// mean value of what it holds.
fn buckets(hist: &BTreeMap<u64, u64>, max: usize) -> Vec<(u64, f64)> {
    let total: u64 = hist.values().sum();
    if total == 0 {
        return Vec::new();
    }
    let t = total as f64;
    if hist.len() <= max {
        return hist.iter().map(|(&v, &c)| (v, c as f64 / t)).collect();
    }
    let mut out = Vec::new();
    let (mut n, mut sum, mut seen) = (0u64, 0u128, 0u64);
    let mut next = 1u64;
    for (&v, &c) in hist {
        n += c;
        sum += u128::from(v) * u128::from(c);
        seen += c;
        // Close the bucket once the running total passes its share of the whole.
        if seen as f64 >= next as f64 * t / max as f64 {
            out.push(((sum / u128::from(n)) as u64, n as f64 / t));
            (n, sum) = (0, 0);
            next = ((seen as f64 * max as f64 / t).floor() as u64 + 1).max(next + 1);
        }
    }
    if n > 0 {
        out.push(((sum / u128::from(n)) as u64, n as f64 / t));
    }
    out
}

/// Template text for one argument: `lit` as it is (quoted and escaped as needed, `{`
/// written `{lbrace}`), then `placeholder`.
fn template_word(lit: &[u8], placeholder: &str) -> String {
    let mut body = String::new();
    let mut quote = lit.is_empty() && placeholder.is_empty();
    for &c in lit {
        match c {
            b'{' => body.push_str("{lbrace}"),
            b'"' | b'\\' => {
                body.push('\\');
                body.push(c as char);
                quote = true;
            }
            b'\'' => {
                body.push('\'');
                quote = true;
            }
            0x21..=0x7e => body.push(c as char),
            _ => {
                let _ = write!(body, "\\x{c:02x}");
                quote = true;
            }
        }
    }
    body.push_str(placeholder);
    if quote {
        format!("\"{body}\"")
    } else {
        body
    }
}

/// The key distribution chosen.
#[derive(Debug, Clone, PartialEq)]
enum Choice {
    None,
    Uniform,
    Zipf(f64),
    Hotset {
        hot_keys: f64,
        hot_ops: f64,
    },
    /// The head's own shares (most popular first), a Zipf tail (none: uniform).
    Empirical {
        shares: Vec<f64>,
        tail: Option<f64>,
    },
}

/// How many of the most popular keys an empirical model lists one by one.
const HEAD_KEYS: usize = 100;

/// A single curve (zipf, hotset, uniform) is kept while it is within this of the trace's
/// cumulative popularity: the simpler spec, and one that `keys_x` scales smoothly.
const CURVE_GOOD_ENOUGH: f64 = 0.02;

impl Choice {
    fn name(&self) -> &'static str {
        match self {
            Choice::None => "none",
            Choice::Uniform => "uniform",
            Choice::Zipf(_) => "zipf",
            Choice::Hotset { .. } => "hotset",
            Choice::Empirical { .. } => "empirical",
        }
    }

    /// The spec's distribution over `keys` keys (an empirical head longer than the range is
    /// cut to it).
    fn to_json(&self, keys: u64) -> Json {
        match *self {
            Choice::None | Choice::Uniform => json!("uniform"),
            Choice::Zipf(s) => json!({"kind": "zipf", "exponent": zipf_param(s)}),
            Choice::Hotset { hot_keys, hot_ops } => {
                // Rounded within the open interval the spec requires.
                let hot_keys = round_to(hot_keys, 6).clamp(1e-6, 1.0 - 1e-6);
                json!({"kind": "hotset", "hot_keys": hot_keys, "hot_ops": round_to(hot_ops, 6)})
            }
            Choice::Empirical { ref shares, tail } => {
                let head = shares.len().min(keys.try_into().unwrap_or(usize::MAX));
                // Rounded down, so that they never sum above 1.
                let shares: Vec<f64> = shares[..head]
                    .iter()
                    .map(|p| (p * 1e8).floor() / 1e8)
                    .collect();
                let mut m = Map::new();
                m.insert("kind".into(), json!("empirical"));
                m.insert("shares".into(), json!(shares));
                if let Some(s) = tail {
                    m.insert("tail_exponent".into(), json!(zipf_param(s)));
                }
                Json::Object(m)
            }
        }
    }
}

/// An exponent as the spec gets it: 4 decimals, within the spec's 0 < s <= 5.
fn zipf_param(s: f64) -> f64 {
    round_to(s, 4).clamp(1e-4, 5.0)
}

struct Popularity {
    exponent: Option<f64>,
    chosen: Choice,
    error: f64,
}

/// Fit the popularity of keys accessed `counts` times (most first): Zipf by maximum
/// likelihood, hotset and uniform, each judged by its largest gap to the trace's cumulative
/// share over the first `top` ranks.
fn popularity(counts: &[u64], top: usize) -> Popularity {
    let n = counts.len();
    if n == 0 {
        return Popularity {
            exponent: None,
            chosen: Choice::None,
            error: 0.0,
        };
    }
    let k = if top == 0 { n } else { top.min(n) };
    let total: f64 = counts.iter().map(|&c| c as f64).sum();
    let mut trace = Vec::with_capacity(n);
    let mut run = 0.0;
    for &c in counts {
        run += c as f64;
        trace.push(run / total);
    }
    let gap = |model: &dyn Fn(usize) -> f64| {
        (0..k)
            .map(|i| (trace[i] - model(i + 1)).abs())
            .fold(0.0, f64::max)
    };
    let uniform_err = gap(&|r| r as f64 / n as f64);
    let mut best = (Choice::Uniform, uniform_err);
    let exponent = fit_zipf(counts);
    if let Some(s) = exponent {
        let h = harmonic(n as u64, s);
        let mut head = Vec::with_capacity(k);
        let mut acc = 0.0;
        for r in 1..=k {
            acc += (r as f64).powf(-s);
            head.push(acc / h);
        }
        let err = gap(&|r| head[r - 1]);
        // Zipf first: a tie keeps the fitted exponent.
        if err <= best.1 {
            best = (Choice::Zipf(s), err);
        }
    }
    if n >= 2 {
        let mut tried = Vec::new();
        for i in 0..=48 {
            let hot = ((n as f64 - 1.0).powf(i as f64 / 48.0)).round() as usize;
            let hot = hot.clamp(1, n - 1);
            if tried.contains(&hot) {
                continue;
            }
            tried.push(hot);
            let p = trace[hot - 1];
            let model = |r: usize| {
                if r <= hot {
                    p * r as f64 / hot as f64
                } else {
                    p + (1.0 - p) * (r - hot) as f64 / (n - hot) as f64
                }
            };
            let err = gap(&model);
            if err < best.1 {
                best = (
                    Choice::Hotset {
                        hot_keys: hot as f64 / n as f64,
                        hot_ops: p.clamp(0.0, 1.0),
                    },
                    err,
                );
            }
        }
    }
    // The head's own shares and a Zipf fitted to the rest, when no single curve is close.
    if best.1 > CURVE_GOOD_ENOUGH {
        let head = n.min(HEAD_KEYS);
        let shares: Vec<f64> = counts[..head].iter().map(|&c| c as f64 / total).collect();
        let rest = &counts[head..];
        let tail = fit_zipf(rest);
        let head_total = trace[head - 1];
        let mut model = Vec::with_capacity(k);
        let mut acc_tail = 0.0;
        let tail_terms = tail.map(|s| (s, harmonic(rest.len() as u64, s)));
        for r in 1..=k {
            model.push(if r <= head {
                trace[r - 1]
            } else {
                let j = r - head;
                acc_tail = match tail_terms {
                    Some((s, h)) => acc_tail + (j as f64).powf(-s) / h,
                    None => j as f64 / rest.len().max(1) as f64,
                };
                head_total + (1.0 - head_total) * acc_tail
            });
        }
        let err = gap(&|r| model[r - 1]);
        if err < best.1 {
            best = (Choice::Empirical { shares, tail }, err);
        }
    }
    Popularity {
        exponent,
        chosen: best.0,
        error: best.1,
    }
}

/// The Zipf exponent s maximizing the likelihood of `counts` (most first) as the
/// frequencies of ranks 1..n: sum of c_r ln(r^-s / H(n, s)), concave in s.
fn fit_zipf(counts: &[u64]) -> Option<f64> {
    let n = counts.len() as u64;
    if n < 2 {
        return None;
    }
    let m: f64 = counts.iter().map(|&c| c as f64).sum();
    let s_log: f64 = counts
        .iter()
        .enumerate()
        .map(|(i, &c)| c as f64 * ((i + 1) as f64).ln())
        .sum();
    let ll = |s: f64| -s * s_log - m * harmonic(n, s).ln();
    let s = golden_max(ll, ZIPF_RANGE.0, ZIPF_RANGE.1);
    s.is_finite().then_some(s)
}

fn golden_max(f: impl Fn(f64) -> f64, mut a: f64, mut b: f64) -> f64 {
    let g = (5f64.sqrt() - 1.0) / 2.0;
    let mut c = b - g * (b - a);
    let mut d = a + g * (b - a);
    let (mut fc, mut fd) = (f(c), f(d));
    for _ in 0..200 {
        if b - a < 1e-9 {
            break;
        }
        if fc > fd {
            (b, d, fd) = (d, c, fc);
            c = b - g * (b - a);
            fc = f(c);
        } else {
            (a, c, fc) = (c, d, fd);
            d = a + g * (b - a);
            fd = f(d);
        }
    }
    (a + b) / 2.0
}

/// The generalized harmonic number H(n, s) = sum of k^-s for k in 1..=n: exact up to a few
/// thousand terms, the rest by Euler-Maclaurin (so a fit over millions of keys stays fast).
fn harmonic(n: u64, s: f64) -> f64 {
    const EXACT: u64 = 2000;
    if n <= EXACT {
        return (1..=n).map(|k| (k as f64).powf(-s)).sum();
    }
    let head: f64 = (1..EXACT).map(|k| (k as f64).powf(-s)).sum();
    let (m, nf) = (EXACT as f64, n as f64);
    let l = (nf / m).ln();
    // The integral of x^-s from m to n, (n^(1-s) - m^(1-s)) / (1-s), stable near s = 1.
    let x = (1.0 - s) * l;
    let expm1_over = if x.abs() > 1e-8 {
        x.exp_m1() / x
    } else {
        1.0 + x / 2.0
    };
    let integral = m.powf(1.0 - s) * l * expm1_over;
    let ends = (m.powf(-s) + nf.powf(-s)) / 2.0;
    let slope = s * (m.powf(-s - 1.0) - nf.powf(-s - 1.0)) / 12.0;
    head + integral + ends + slope
}

enum RateShape {
    Steady,
    Ramp {
        start: f64,
        end: f64,
        steps: u64,
        step_duration: u64,
    },
    Varies(f64),
}

/// Whether the rate is steady (windows of a tenth of the trace within 20% of each other), a
/// straight trend a `rate_ramp` can follow, or varies otherwise.
fn rate_shape(profile: &[f64], step_s: u64, mean: f64) -> RateShape {
    let len = profile.len();
    if len < 10 || mean <= 0.0 {
        return RateShape::Steady;
    }
    let windows: Vec<(f64, f64)> = (0..10)
        .map(|w| {
            let (a, b) = (w * len / 10, (w + 1) * len / 10);
            let part = &profile[a..b.max(a + 1).min(len)];
            let centre = (a + b) as f64 / 2.0;
            (centre, part.iter().sum::<f64>() / part.len() as f64)
        })
        .collect();
    let (lo, hi) = windows.iter().fold((f64::INFINITY, 0.0f64), |(l, h), w| {
        (l.min(w.1), h.max(w.1))
    });
    let by = (hi - lo) / mean;
    if by <= 0.2 {
        return RateShape::Steady;
    }
    // Least squares over the profile, x in entries.
    let n = len as f64;
    let mx = (n - 1.0) / 2.0;
    let my = profile.iter().sum::<f64>() / n;
    let (mut sxy, mut sxx) = (0.0, 0.0);
    for (i, &y) in profile.iter().enumerate() {
        sxy += (i as f64 - mx) * (y - my);
        sxx += (i as f64 - mx).powi(2);
    }
    let slope = if sxx > 0.0 { sxy / sxx } else { 0.0 };
    let line = |x: f64| my + slope * (x - mx);
    let off = windows
        .iter()
        .map(|&(c, y)| (y - line(c - 0.5)).abs())
        .fold(0.0, f64::max);
    if off / mean > 0.1 {
        return RateShape::Varies(by);
    }
    let secs = len as u64 * step_s;
    let step_duration = secs.div_ceil(100).max(1);
    let steps = secs.div_ceil(step_duration);
    if steps < 2 {
        return RateShape::Varies(by);
    }
    // Each step at the line's rate at its middle.
    let at = |k: u64| line(((k as f64 + 0.5) * step_duration as f64 / step_s as f64) - 0.5);
    RateShape::Ramp {
        start: at(0),
        end: at(steps - 1),
        steps,
        step_duration,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(t_us: u64, args: &[&[u8]]) -> Record {
        let mut r = Record::default();
        r.t_us = t_us;
        for a in args {
            r.push_bytes(a);
        }
        r
    }

    fn loads(model: &Model) {
        crate::Workload::from_json_str(&model.spec.to_string())
            .unwrap_or_else(|e| panic!("{e}\n{}", model.spec));
        crate::Workload::from_toml_str(&model.to_toml())
            .unwrap_or_else(|e| panic!("{e}\n{}", model.to_toml()));
    }

    #[test]
    fn the_read_and_write_key_spaces_are_counted_and_noted() {
        let mut b = ModelBuilder::new();
        // a, b only read; c, d, e only written (SET, DEL); f read and written.
        let cmds: [&[&[u8]]; 8] = [
            &[b"GET", b"a"],
            &[b"GET", b"b"],
            &[b"GET", b"a"],
            &[b"SET", b"c", b"v"],
            &[b"SET", b"d", b"v"],
            &[b"DEL", b"e"],
            &[b"SET", b"f", b"v"],
            &[b"GET", b"f"],
        ];
        for (i, args) in cmds.iter().enumerate() {
            b.observe(&rec(i as u64 * 1000, args));
        }
        let m = b.fit(&ModelOptions::default());
        assert_eq!(
            m.fit.key_spaces,
            KeySpaces {
                read_only: 2,
                written_only: 3,
                read_and_written: 1
            }
        );
        assert!(
            m.fit
                .notes
                .iter()
                .any(|n| n
                    .starts_with("33% of the keys were only read and 50% only written, 17% both")),
            "{:?}",
            m.fit.notes
        );
        assert!(m
            .summary()
            .contains("key spaces: 2 only read, 3 only written, 1 both"));
        loads(&m);
    }

    #[test]
    fn harmonic_matches_the_sum() {
        for s in [0.3, 0.99, 1.0, 1.01, 2.5] {
            for n in [1u64, 10, 2000, 2001, 50_000] {
                let exact: f64 = (1..=n).map(|k| (k as f64).powf(-s)).sum();
                let got = harmonic(n, s);
                assert!(
                    (got - exact).abs() / exact < 1e-9,
                    "s {s} n {n}: {got} {exact}"
                );
            }
        }
    }

    #[test]
    fn zipf_mle_recovers_the_exponent_of_exact_counts() {
        for s in [0.6, 0.99, 1.4] {
            let n = 20_000u64;
            let h = harmonic(n, s);
            let counts: Vec<u64> = (1..=n)
                .map(|r| (1e8 * (r as f64).powf(-s) / h).round().max(1.0) as u64)
                .collect();
            let fitted = fit_zipf(&counts).unwrap();
            assert!((fitted - s).abs() < 0.01, "{s}: {fitted}");
            let p = popularity(&counts, 1000);
            assert_eq!(p.chosen.name(), "zipf");
            assert!(p.error < 0.01, "{}", p.error);
        }
        assert_eq!(fit_zipf(&[5]), None);
        assert_eq!(fit_zipf(&[]), None);
    }

    #[test]
    fn hotset_and_uniform_win_when_they_fit_better() {
        let mut counts = vec![100u64; 100];
        counts.extend(std::iter::repeat_n(10, 900));
        let p = popularity(&counts, 0);
        match p.chosen {
            Choice::Hotset { hot_keys, hot_ops } => {
                assert!((hot_keys - 0.1).abs() < 0.02, "{hot_keys}");
                assert!(
                    (hot_ops - 100.0 * 100.0 / 19_000.0).abs() < 0.05,
                    "{hot_ops}"
                );
            }
            other => panic!("{other:?}"),
        }
        let p = popularity(&[7u64; 500], 0);
        assert_eq!(p.chosen, Choice::Uniform);
        assert!(p.error < 1e-9);
    }

    #[test]
    fn a_head_no_curve_follows_gets_its_own_shares_and_a_fitted_tail() {
        // Five keys with 8% of the commands each, then Zipf(0.8) over 20,000 keys.
        let (n, s) = (20_000u64, 0.8);
        let h = harmonic(n, s);
        let mut counts: Vec<u64> = vec![8_000_000; 5];
        counts.extend((1..=n).map(|r| (6e7 * (r as f64).powf(-s) / h).round().max(1.0) as u64));
        let total: u64 = counts.iter().sum();
        let p = popularity(&counts, 1000);
        let Choice::Empirical { shares, tail } = &p.chosen else {
            panic!("{:?} (error {})", p.chosen, p.error);
        };
        assert_eq!(shares.len(), HEAD_KEYS);
        for (i, share) in shares.iter().enumerate() {
            assert_eq!(*share, counts[i] as f64 / total as f64, "rank {}", i + 1);
        }
        // The tail after the first 100 keys: Zipf(0.8) of ranks 96.. of the tail's curve,
        // fitted from its own ranks, so flatter than 0.8 but not flat.
        let t = tail.expect("a tail exponent");
        assert!(t > 0.3 && t < 0.8, "{t}");
        assert!(p.error < CURVE_GOOD_ENOUGH, "{}", p.error);
        // As a spec: the shares, cut to a smaller range, never above 1 in sum.
        let j = p.chosen.to_json(20_105);
        assert_eq!(j["kind"], "empirical");
        assert_eq!(j["shares"].as_array().unwrap().len(), HEAD_KEYS);
        let small = p.chosen.to_json(3);
        let cut: Vec<f64> = small["shares"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_f64().unwrap())
            .collect();
        assert_eq!(cut.len(), 3);
        let d: crate::spec::Distribution = serde_json::from_value(small).unwrap();
        d.validate("keys.distribution", [0, 2]).unwrap();
        // A curve that fits stays: the Zipf of the earlier test is not made empirical.
        let zipf: Vec<u64> = (1..=n)
            .map(|r| (1e8 * (r as f64).powf(-0.99) / harmonic(n, 0.99)).round() as u64)
            .collect();
        assert_eq!(popularity(&zipf, 1000).chosen.name(), "zipf");
    }

    #[test]
    fn round_sig_and_buckets() {
        assert_eq!(round_sig(999), 999);
        assert_eq!(round_sig(1234), 1230);
        assert_eq!(round_sig(1235), 1240);
        assert_eq!(round_sig(9999), 10_000);
        assert_eq!(round_sig(u64::MAX), 18_400_000_000_000_000_000);
        let hist: BTreeMap<u64, u64> = (1..=100).map(|v| (v * 10, 1)).collect();
        let b = buckets(&hist, 16);
        assert!(b.len() <= 16 && b.len() >= 12, "{b:?}");
        assert!((b.iter().map(|x| x.1).sum::<f64>() - 1.0).abs() < 1e-9);
        assert!(b.windows(2).all(|w| w[0].0 < w[1].0));
        // One huge bucket among small ones.
        let mut hist: BTreeMap<u64, u64> = (1..=40).map(|v| (v, 1)).collect();
        hist.insert(20, 1000);
        assert!(buckets(&hist, 16).len() <= 16);
    }

    #[test]
    fn template_words_survive_the_template_parser() {
        for lit in [
            &b"plain"[..],
            b"with space",
            b"{key}",
            b"q\"uote",
            b"back\\slash",
            b"'single",
            b"\x00\xff",
            b"",
        ] {
            let w = template_word(lit, "");
            let line = format!("SET {w} 1");
            let args =
                crate::spec::parse_template(&crate::spec::Template::Line(line.clone())).unwrap();
            assert_eq!(args[1], crate::spec::Arg::Lit(lit.into()), "{line}");
        }
        let w = template_word(b"user {x}:", "{rand:0..9}");
        let args =
            crate::spec::parse_template(&crate::spec::Template::Line(format!("GET {w}"))).unwrap();
        assert!(matches!(args[1], crate::spec::Arg::Parts(_)), "{w}");
    }

    #[test]
    fn an_empty_or_odd_trace_still_gives_a_spec() {
        let b = ModelBuilder::new();
        let m = b.fit(&ModelOptions::default());
        assert_eq!(m.fit.commands, 0);
        assert_eq!(m.fit.popularity, "none");
        loads(&m);

        let mut b = ModelBuilder::new();
        let mut r = Record::default();
        r.push_size(3);
        b.observe(&r); // no name: skipped
        b.observe(&rec(5, &[b""]));
        for (i, args) in [
            &[&b"multi"[..]][..],
            &[b"EXEC"],
            &[b"BLPOP", b"q", b"0"],
            &[b"GET"],
            &[b"SET", b"k"],
            &[b"SET", b"k", b"v", b"EX"],
            &[b"SET", b"k", b"v", b"EX", b"-1"],
            &[b"SETEX", b"k", b"99999999999999999999999", b"v"],
            &[b"PSETEX", b"k", b"9999999999999999999", b"v"],
            &[b"EVAL", b"return 1", b"999999999999", b"a"],
            &[b"ZUNIONSTORE", b"d", b"x"],
            &[b"we\xffird", b"k"],
            &[b"con\x01trol\n", b"k"],
            &[b"HSET", b"h", b"f"],
            &[b"FOO", b"{key}", b"\"x y\""],
        ]
        .iter()
        .enumerate()
        {
            b.observe(&rec(i as u64 * 1000, args));
        }
        let m = b.fit(&ModelOptions {
            rate_x: f64::NAN,
            keys_x: -3.0,
            target_url: None,
            top_keys: 0,
        });
        loads(&m);
        let left: Vec<&str> = m
            .fit
            .mix
            .iter()
            .filter(|x| x.model_share == 0.0)
            .map(|x| x.name.as_str())
            .collect();
        assert!(
            left.contains(&"MULTI") && left.contains(&"BLPOP"),
            "{left:?}"
        );
    }

    #[test]
    fn a_rising_rate_becomes_a_ramp_and_a_jumpy_one_a_profile() {
        let mut b = ModelBuilder::new();
        // 100 s, the rate rising from 10 to about 110 per second.
        for sec in 0..100u64 {
            for i in 0..(10 + sec) {
                b.observe(&rec(sec * 1_000_000 + i * 1000, &[b"GET", b"k"]));
            }
        }
        let m = b.fit(&ModelOptions::default());
        let ramp = &m.spec["load"]["rate_ramp"];
        assert!(ramp.is_object(), "{}", m.spec);
        let (start, end) = (
            ramp["start"].as_f64().unwrap(),
            ramp["end"].as_f64().unwrap(),
        );
        assert!(
            (start - 10.5).abs() < 2.0 && (end - 109.5).abs() < 2.0,
            "{ramp}"
        );
        loads(&m);

        let mut b = ModelBuilder::new();
        for sec in 0..100u64 {
            let n = if (sec / 10) % 2 == 0 { 10 } else { 100 };
            for i in 0..n {
                b.observe(&rec(sec * 1_000_000 + i * 1000, &[b"GET", b"k"]));
            }
        }
        let m = b.fit(&ModelOptions {
            rate_x: 3.0,
            ..ModelOptions::default()
        });
        assert!(m.spec["load"].get("rate").is_none(), "{}", m.spec);
        let profile = &m.spec["load"]["rate_profile"];
        assert_eq!(profile["step_duration"], "1s");
        let rates: Vec<f64> = profile["rates"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r.as_f64().unwrap())
            .collect();
        // Second by second the trace's rate (the last second ends at its last record), times
        // rate_x.
        assert_eq!(rates.len(), 100);
        for (sec, r) in rates.iter().enumerate().take(99) {
            let want = if (sec / 10) % 2 == 0 { 30.0 } else { 300.0 };
            assert_eq!(*r, want, "second {sec}: {rates:?}");
        }
        assert!(
            m.fit.notes.iter().any(|n| n.contains("rate profile")),
            "{:?}",
            m.fit.notes
        );
        assert_eq!(m.fit.rate_profile.len(), 100);
        loads(&m);
    }

    #[test]
    fn templates_keep_keys_in_the_model_key_space() {
        let mut b = ModelBuilder::new();
        for i in 0..100u64 {
            let k = format!("user:{i}");
            b.observe(&rec(
                i * 10_000,
                &[b"HSET", k.as_bytes(), b"name", b"abcdef"],
            ));
            b.observe(&rec(i * 10_000, &[b"RENAME", k.as_bytes(), b"user:x"]));
            b.observe(&rec(i * 10_000, &[b"PSETEX", k.as_bytes(), b"1500", b"v"]));
            b.observe(&rec(i * 10_000, &[b"INFO", b"memory"]));
        }
        let m = b.fit(&ModelOptions::default());
        loads(&m);
        let templates: Vec<&str> = m.spec["commands"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|c| c["template"].as_str())
            .collect();
        assert!(
            templates.contains(&"HSET {key} name {value}"),
            "{templates:?}"
        );
        assert!(
            templates.contains(&"RENAME {key} user:{rand:0..100}"),
            "{templates:?}"
        );
        assert!(
            templates.contains(&"PSETEX {key} {rand:1500..1500} {value}"),
            "{templates:?}"
        );
        assert!(templates.contains(&"INFO memory"), "{templates:?}");
        assert_eq!(m.spec["keys"]["prefix"], "user:");
    }
}
