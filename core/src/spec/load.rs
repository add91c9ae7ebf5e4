//! How much traffic: `[load]`.

use super::SpecDuration;
use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::time::Duration;

/// Connections, threads, pipelining and when to stop (`[load]` in a spec).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct Load {
    /// Total connections, spread over the worker threads (default 50, like redis-benchmark).
    /// In cluster mode (`target.cluster`): connections per primary node, as with
    /// memtier_benchmark `--cluster-mode` (each client holds one connection to every
    /// primary); redis-benchmark `--cluster` spreads its `-c` over the primaries instead.
    #[serde(default = "default_connections")]
    pub connections: u32,
    /// Worker threads; absent means one per CPU core, at most one per connection.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threads: Option<u32>,
    /// Requests kept in flight on each connection (default 1: no pipelining).
    #[serde(default = "default_pipeline")]
    pub pipeline: u32,
    /// Measured requests to send across all connections, or `"all_keys"`: as many as the
    /// key range holds. With neither `requests` nor `duration`, 100,000 requests
    /// (redis-benchmark's default).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requests: Option<Requests>,
    /// How long to measure. With `requests` too, the run stops at whichever comes first.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration: Option<SpecDuration>,
    /// Traffic sent before measuring starts; not counted in the report nor in `requests`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warmup: Option<SpecDuration>,
    /// A connection whose requests get no reply for this long counts them as `TIMEOUT`
    /// errors and reconnects (default 10s).
    #[serde(default = "default_timeout")]
    pub timeout: SpecDuration,
    /// Open loop: requests per second in total (0.001 to 100,000,000), spread evenly over the
    /// connections, each
    /// request with an intended send time; latency counts from that time (so a stalled
    /// server shows in it) and service time from the actual write. Absent: closed loop
    /// (each connection sends as fast as replies come back).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate: Option<f64>,
    /// How intended send times are spaced in open loop (with `rate`, `rate_ramp`, or at every
    /// step of an `[slo]` search): `uniform` (evenly, the default) or `poisson` (exponential
    /// gaps, as independent users arrive).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arrivals: Option<Arrivals>,
    /// How a worker thread waits for the next intended send time in open loop: `precise`
    /// (the default: a timer with microsecond resolution per worker thread, set early by
    /// the median of its own wake-up delays, at most 50 us, the rest polled), `spin` (that
    /// timer set 50 us early, then polled: the most punctual, for more CPU) or `coarse` (the
    /// async runtime's 1 ms timer: requests go out up to 2 ms late, for the least CPU). Ignored in closed loop; off Linux every mode is `coarse`.
    #[serde(default, skip_serializing_if = "Pacing::is_precise")]
    pub pacing: Pacing,
    /// Open loop with a rate staircase instead of one `rate`: from `start` to `end` in
    /// steps of `step`, each held for `step_duration`; the last rate holds until the end.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate_ramp: Option<RateRamp>,
    /// Open loop with a rate that follows a list instead of one `rate`: `rates[k]` requests
    /// per second during step k, each step `step_duration` long; the last rate holds until
    /// the end. What `respload model` writes for a trace whose rate neither holds steady nor
    /// follows a line.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate_profile: Option<RateProfile>,
    /// Open connections gradually: `start` at first, `step` more every `step_duration`, up
    /// to `connections` (memtier_benchmark's `--clients-start`/`--clients-step`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connections_ramp: Option<ConnectionsRamp>,
    /// Keep each connection open for the whole run (the default). `false`: a connection is
    /// closed once the replies to its requests are in and a new one is opened for the next
    /// ones, as redis-benchmark's `-k 0` does; connect time is not part of latency.
    #[serde(default = "default_true", skip_serializing_if = "is_true")]
    // Left out when true, so schemars would leave its default out of the schema too.
    #[cfg_attr(
        feature = "schema",
        schemars(skip_serializing_if = "super::schema::never_skipped")
    )]
    pub keepalive: bool,
    /// When a pipelined connection (closed loop) sends more: `eager` (the default, as
    /// memtier_benchmark) tops its pipeline up after every read, so `pipeline` requests stay
    /// in flight; `batch` (as redis-benchmark `-P`) sends `pipeline` requests, waits for all
    /// their replies, then sends the next `pipeline`. Batches cost the client fewer system
    /// calls (over TLS, where a batch's replies come as several records, markedly fewer), and
    /// the server sees bursts rather than a steady queue. In cluster mode, per node connection.
    /// Not with `rate`.
    #[serde(default, skip_serializing_if = "Refill::is_eager")]
    pub refill: Refill,
    /// Open the connections and hold them without sending anything (redis-benchmark's `-I`),
    /// until `duration` ends or the run is stopped. `requests` cannot be set with it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub idle: bool,
    /// When connections are closed and opened again: after every N requests, and after a
    /// lost connection (how long to wait, how many attempts).
    #[serde(default, skip_serializing_if = "Reconnect::is_default")]
    pub reconnect: Reconnect,
    /// Each worker thread opens its connections one after the other, with a pause drawn
    /// uniformly between these two durations before each but the first (memtier_benchmark's
    /// `--thread-conn-start-min-jitter-micros` / `-max-jitter-micros`); absent, all at once.
    /// Connections open before measuring starts, so the pauses are in no latency.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub open_jitter: Option<[SpecDuration; 2]>,
    /// Resend a request that failed with a transient error, or was in flight on a lost
    /// connection (memtier_benchmark's `--retry-on-error`); absent: a failed request is
    /// counted as an error at once.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry: Option<Retry>,
    /// How connections do their I/O: `epoll` (the default: a `read` and a `write` per
    /// connection per round, readiness from epoll) or `uring` (Linux: one io_uring per worker
    /// thread, every connection's reads and writes of a round handed to the kernel in one
    /// system call). `uring` runs plain TCP and Unix sockets; TLS (`target.tls`) runs on
    /// `epoll` only, and a spec asking for both is refused. Replies are framed and timed the
    /// same way: a reply ends at the completion that delivered its last byte.
    #[serde(default, skip_serializing_if = "Io::is_epoll")]
    pub io: Io,
}

/// The I/O of the load connections (`load.io`).
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, Default)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Io {
    /// Readiness from epoll, one `read` and one `write` system call per connection per round.
    #[default]
    Epoll,
    /// One io_uring per worker thread, submitted once per pass of its event loop (Linux).
    Uring,
}

impl Io {
    fn is_epoll(&self) -> bool {
        *self == Io::Epoll
    }
}

/// Resending failed requests (`[load.retry]`). A resent request counts once in `ops` and in
/// the latency, from its first send (its intended time in open loop) to its last reply;
/// `retries` counts the resends, `errors` the requests that failed for good.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct Retry {
    /// The most resends of one request; absent: no limit. 0 resends nothing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attempts: Option<u32>,
    /// The error kinds to resend after (an error reply's first word, e.g. `LOADING`,
    /// `BUSY`, `TRYAGAIN`; `CONNECTION` and `TIMEOUT` for requests in flight on a lost
    /// connection). Empty, the default: every kind but the permanent ones, `WRONGTYPE`,
    /// `NOAUTH`, `NOPERM`, `WRONGPASS`, `NOSCRIPT`, `ERR` replies to a syntax error, a wrong
    /// number of arguments or an unknown command, `PROTOCOL` and `ABORTED`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub on: Vec<String>,
    /// The wait before a request's first resend (default 0s: at once).
    #[serde(default = "zero_duration")]
    pub delay: SpecDuration,
    /// Each further resend of a request waits the previous wait times this (default 1:
    /// constant), from 1 to 1000; waits stop growing at 60s.
    #[serde(default = "one")]
    pub backoff: f64,
    /// The most requests of one connection waiting to be resent: while that many wait, it
    /// starts no new request (default 0: four times `pipeline`, at least 64).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub queue: u32,
}

fn zero_duration() -> SpecDuration {
    SpecDuration(Duration::ZERO)
}
fn one() -> f64 {
    1.0
}

impl Retry {
    fn validate(&self, p: &str) -> crate::Result<()> {
        let at = format!("{p}load.retry");
        if !(1.0..=1000.0).contains(&self.backoff) {
            return Err(crate::Error::spec(
                format!("{at}.backoff"),
                format!("{} is out of range: allowed is 1 to 1000", self.backoff),
            ));
        }
        if self.delay.0 > Duration::from_secs(60) {
            return Err(crate::Error::spec(
                format!("{at}.delay"),
                format!("{:?} is too long: allowed is 0s to 60s", self.delay.0),
            ));
        }
        if let Some(kind) = self
            .on
            .iter()
            .find(|k| k.is_empty() || !k.bytes().all(|b| b.is_ascii_graphic()) || k.len() > 64)
        {
            return Err(crate::Error::spec(
                format!("{at}.on"),
                format!(
                    "`{kind}` is not an error kind: allowed are words such as LOADING, BUSY, \
                     TRYAGAIN, CONNECTION or TIMEOUT"
                ),
            ));
        }
        Ok(())
    }
}

/// How connections are reopened (`[load.reconnect]`).
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct Reconnect {
    /// Close each connection and open a new one after every this many requests it sent,
    /// once their replies are in (memtier_benchmark's `--reconnect-interval`): the pipeline
    /// is not refilled past the N-th request. Connect time is in no latency. Absent: a
    /// connection stays open (unless `keepalive = false`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub every: Option<u32>,
    /// A lost connection gives up after this many failed attempts in a row to open it again
    /// (its requests are then not sent, and the run ends when every connection has ended);
    /// 0, the default: it never gives up.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub attempts: u32,
    /// The wait before the first attempt to reopen a lost connection (default 10ms).
    #[serde(default = "default_reconnect_delay")]
    pub delay: SpecDuration,
    /// Each further wait is the previous one times this (default 2; 1 keeps it constant),
    /// from 0.01 to 1000.
    #[serde(default = "default_reconnect_backoff")]
    pub backoff: f64,
    /// The longest wait between two attempts (default 1s).
    #[serde(default = "default_reconnect_max_delay")]
    pub max_delay: SpecDuration,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}
fn default_reconnect_delay() -> SpecDuration {
    SpecDuration(Duration::from_millis(10))
}
fn default_reconnect_backoff() -> f64 {
    2.0
}
fn default_reconnect_max_delay() -> SpecDuration {
    SpecDuration(Duration::from_secs(1))
}

impl Default for Reconnect {
    fn default() -> Self {
        Reconnect {
            every: None,
            attempts: 0,
            delay: default_reconnect_delay(),
            backoff: default_reconnect_backoff(),
            max_delay: default_reconnect_max_delay(),
        }
    }
}

impl Reconnect {
    fn is_default(&self) -> bool {
        *self == Reconnect::default()
    }

    fn validate(&self, p: &str) -> crate::Result<()> {
        let at = format!("{p}load.reconnect");
        if let Some(n) = self.every {
            within("", &format!("{at}.every"), n as u64, 1, u32::MAX as u64)?;
        }
        if !(0.01..=1000.0).contains(&self.backoff) {
            return Err(crate::Error::spec(
                format!("{at}.backoff"),
                format!("{} is out of range: allowed is 0.01 to 1000", self.backoff),
            ));
        }
        let hour = Duration::from_secs(3600);
        for (field, d) in [("delay", self.delay), ("max_delay", self.max_delay)] {
            if d.0 > hour {
                return Err(crate::Error::spec(
                    format!("{at}.{field}"),
                    format!("{:?} is too long: allowed is 0s to 1h", d.0),
                ));
            }
        }
        if self.max_delay.0 < self.delay.0 {
            return Err(crate::Error::spec(
                format!("{at}.max_delay"),
                format!(
                    "{:?} is shorter than reconnect.delay ({:?}): allowed is delay or more",
                    self.max_delay.0, self.delay.0
                ),
            ));
        }
        Ok(())
    }
}

fn default_true() -> bool {
    true
}
fn is_true(b: &bool) -> bool {
    *b
}

/// A rate staircase (`load.rate_ramp`).
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct RateRamp {
    /// Requests per second in total during the first step (0.001 to 100,000,000).
    pub start: f64,
    /// Requests per second of the last step (above or below `start`; 0.001 to 100,000,000).
    pub end: f64,
    /// How much the rate changes from one step to the next.
    pub step: f64,
    /// How long each step lasts: a whole number of seconds, so steps match timeline rows.
    pub step_duration: SpecDuration,
}

impl RateRamp {
    /// The rate of each step, in order: `start`, `start ± step`, ..., `end`.
    pub fn rates(&self) -> Vec<f64> {
        let span = (self.end - self.start).abs();
        let n = (span / self.step - 1e-9).ceil().max(0.0) as usize;
        let dir = if self.end >= self.start { 1.0 } else { -1.0 };
        (0..=n)
            .map(|k| {
                if k == n {
                    self.end
                } else {
                    self.start + dir * self.step * k as f64
                }
            })
            .collect()
    }
}

/// A rate that follows a list, step by step (`load.rate_profile`).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct RateProfile {
    /// Requests per second in total during each step, in order (each 0.001 to 100,000,000;
    /// 1 to 10,000 steps).
    pub rates: Vec<f64>,
    /// How long each step lasts: a whole number of seconds, so steps match timeline rows.
    pub step_duration: SpecDuration,
}

/// A connection staircase (`load.connections_ramp`).
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct ConnectionsRamp {
    /// Connections open during the first step (in cluster mode: clients, each with a
    /// connection to every primary).
    pub start: u32,
    /// Connections added at each step, until `load.connections` are open.
    pub step: u32,
    /// How long each step lasts: a whole number of seconds, so steps match timeline rows.
    pub step_duration: SpecDuration,
    /// Set by `respload run --shard` (`Workload::shard`): this host's part of a ramp run
    /// from several hosts. `start` and `step` are then the whole ramp's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub share: Option<RampShare>,
}

/// One host's part of a connection ramp run from several (`load.connections_ramp.share`):
/// the whole ramp's connections, ranked in the order they open, are dealt out in turn, so
/// this host opens ranks `index`, `index + of`, `index + 2 of`, ... below `connections`,
/// and at every step the hosts' connections add up to the whole ramp's.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct RampShare {
    /// This host's place among the hosts (0-based).
    pub index: u32,
    /// How many hosts run the ramp together.
    pub of: u32,
    /// The whole ramp's connections (every host's `load.connections` added).
    pub connections: u32,
}

impl RampShare {
    /// How many of the whole ramp's first `opened` connections are this host's.
    fn mine(&self, opened: u32) -> u32 {
        match opened > self.index {
            true => (opened - self.index - 1) / self.of.max(1) + 1,
            false => 0,
        }
    }

    /// Check the share against this host's `load.connections` (the ranks it is dealt);
    /// returns the whole ramp's connections.
    fn check(&self, at: &str, connections: u32) -> crate::Result<u32> {
        within("", &format!("{at}.share.of"), self.of as u64, 1, 1_000_000)?;
        within(
            "",
            &format!("{at}.share.index"),
            self.index as u64,
            0,
            self.of as u64 - 1,
        )?;
        within(
            "",
            &format!("{at}.share.connections"),
            self.connections as u64,
            self.of as u64,
            u64::from(self.of) * 1_000_000,
        )
        .map_err(|e| with_hint(e, "(at least one connection per host)"))?;
        let dealt = self.mine(self.connections);
        if connections != dealt {
            return Err(crate::Error::spec(
                format!("{at}.share"),
                format!(
                    "host {} of {} is dealt {dealt} of {} connections, but load.connections \
                     is {connections}",
                    self.index, self.of, self.connections
                ),
            ));
        }
        Ok(self.connections)
    }
}

impl ConnectionsRamp {
    /// Connections open in each step, in order, up to `total` (`load.connections`); for a
    /// host's share, that host's count at each of the whole ramp's steps.
    pub fn counts(&self, total: u32) -> Vec<u32> {
        let whole = self.share.map_or(total, |s| s.connections);
        let mut out = vec![self.start.min(whole)];
        while *out.last().unwrap_or(&whole) < whole {
            let next = out[out.len() - 1].saturating_add(self.step).min(whole);
            out.push(next);
        }
        if let Some(share) = self.share {
            out.iter_mut().for_each(|n| *n = share.mine(*n));
        }
        out
    }

    /// The step (0 for the first) in which the connection opened `rank`-th (of this host's)
    /// opens.
    pub fn step_of(&self, rank: u32) -> u32 {
        let rank = match self.share {
            Some(s) => rank.saturating_mul(s.of).saturating_add(s.index),
            None => rank,
        };
        if rank < self.start {
            0
        } else {
            (rank - self.start) / self.step.max(1) + 1
        }
    }
}

/// The most steps a ramp may have.
pub const MAX_RAMP_STEPS: usize = 10_000;

/// How open-loop send times are spaced.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, Default)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Arrivals {
    /// Evenly: one request every `connections / rate` seconds per connection.
    #[default]
    Uniform,
    /// Exponentially distributed gaps with the same mean.
    Poisson,
}

/// How open-loop connections wait for their next intended send time (`load.pacing`).
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, Default)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Pacing {
    /// A timer with microsecond resolution per worker thread (Linux: a `timerfd` with
    /// absolute deadlines and 1 us timer slack), set early by its median wake-up delay.
    #[default]
    Precise,
    /// The same timer set 50 us early, then the worker polls until the time comes.
    Spin,
    /// The async runtime's millisecond timer.
    Coarse,
}

impl Pacing {
    fn is_precise(&self) -> bool {
        *self == Pacing::Precise
    }
}

/// When a pipelined connection sends its next requests.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, Default)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Refill {
    /// After every read: `pipeline` requests stay in flight.
    #[default]
    Eager,
    /// Once every reply of the previous `pipeline` requests is in.
    Batch,
}

impl Refill {
    fn is_eager(&self) -> bool {
        *self == Refill::Eager
    }
}

fn default_connections() -> u32 {
    50
}
fn default_pipeline() -> u32 {
    1
}
fn default_timeout() -> SpecDuration {
    SpecDuration(Duration::from_secs(10))
}

/// The request count used when neither `requests` nor `duration` is given.
pub const DEFAULT_REQUESTS: u64 = 100_000;

impl Default for Load {
    fn default() -> Self {
        Load {
            connections: default_connections(),
            threads: None,
            pipeline: default_pipeline(),
            requests: None,
            duration: None,
            warmup: None,
            timeout: default_timeout(),
            rate: None,
            arrivals: None,
            pacing: Pacing::Precise,
            keepalive: true,
            refill: Refill::Eager,
            idle: false,
            rate_ramp: None,
            rate_profile: None,
            connections_ramp: None,
            reconnect: Reconnect::default(),
            open_jitter: None,
            retry: None,
            io: Io::Epoll,
        }
    }
}

impl Load {
    /// Check ranges; `p` prefixes error paths. `searched`: the phase has an SLO search, whose
    /// steps are open loop at rates it sets itself.
    pub(crate) fn validate(&self, p: &str, searched: bool) -> crate::Result<()> {
        range(p, "load.connections", self.connections as u64)?;
        if let Some(t) = self.threads {
            range(p, "load.threads", t as u64)?;
        }
        range(p, "load.pipeline", self.pipeline as u64)?;
        if let Some(Requests::Count(n)) = self.requests {
            range(p, "load.requests", n)?;
        }
        if let Some(d) = self.duration {
            if d.0.is_zero() {
                return Err(crate::Error::spec(
                    format!("{p}load.duration"),
                    "0s: a duration must be positive (or left out)",
                ));
            }
        }
        if let Some(r) = self.rate {
            if !(MIN_RATE..=MAX_RATE).contains(&r) {
                return Err(crate::Error::spec(
                    format!("{p}load.rate"),
                    format!("{r} is out of range: allowed is {MIN_RATE} to {MAX_RATE} requests per second"),
                ));
            }
        }
        if let Some(ramp) = &self.rate_ramp {
            let at = format!("{p}load.rate_ramp");
            if self.rate.is_some() {
                return Err(crate::Error::spec(
                    at,
                    "sets the rate itself: give either load.rate or load.rate_ramp, not both",
                ));
            }
            for (field, v, min) in [
                ("start", ramp.start, MIN_RATE),
                ("end", ramp.end, MIN_RATE),
                ("step", ramp.step, 0.0),
            ] {
                if !(v > 0.0 && v >= min && v <= MAX_RATE) {
                    let allowed = if min > 0.0 {
                        format!("{min} to {MAX_RATE}")
                    } else {
                        format!("above 0 and up to {MAX_RATE}")
                    };
                    return Err(crate::Error::spec(
                        format!("{at}.{field}"),
                        format!("{v} is out of range: allowed is {allowed} requests per second"),
                    ));
                }
            }
            let steps = (ramp.end - ramp.start).abs() / ramp.step;
            if steps >= MAX_RAMP_STEPS as f64 {
                return Err(crate::Error::spec(
                    format!("{at}.step"),
                    format!(
                        "{} makes {} steps from {} to {}: allowed are at most {MAX_RAMP_STEPS}",
                        ramp.step,
                        steps.ceil() as u64 + 1,
                        ramp.start,
                        ramp.end
                    ),
                ));
            }
            whole_seconds(&format!("{at}.step_duration"), ramp.step_duration)?;
        }
        if let Some(profile) = &self.rate_profile {
            let at = format!("{p}load.rate_profile");
            if let Some(other) = [
                ("rate", self.rate.is_some()),
                ("rate_ramp", self.rate_ramp.is_some()),
            ]
            .iter()
            .find_map(|(f, set)| set.then_some(f))
            {
                return Err(crate::Error::spec(
                    at,
                    format!(
                        "sets the rate itself: give one of load.rate, load.rate_ramp and \
                         load.rate_profile, not load.{other} too"
                    ),
                ));
            }
            let n = profile.rates.len();
            if n == 0 || n > MAX_RAMP_STEPS {
                return Err(crate::Error::spec(
                    format!("{at}.rates"),
                    format!("{n} steps: allowed are 1 to {MAX_RAMP_STEPS}"),
                ));
            }
            if let Some((i, r)) = profile
                .rates
                .iter()
                .enumerate()
                .find(|(_, r)| !(MIN_RATE..=MAX_RATE).contains(*r))
            {
                return Err(crate::Error::spec(
                    format!("{at}.rates[{i}]"),
                    format!("{r} is out of range: allowed is {MIN_RATE} to {MAX_RATE} requests per second"),
                ));
            }
            whole_seconds(&format!("{at}.step_duration"), profile.step_duration)?;
        }
        if let Some(ramp) = &self.connections_ramp {
            let at = format!("{p}load.connections_ramp");
            let (whole, hint) = match ramp.share {
                Some(share) => (
                    share.check(&at, self.connections)?,
                    "(at most share.connections)",
                ),
                None => (self.connections, "(at most load.connections)"),
            };
            within(
                "",
                &format!("{at}.start"),
                ramp.start as u64,
                1,
                whole as u64,
            )
            .map_err(|e| with_hint(e, hint))?;
            within("", &format!("{at}.step"), ramp.step as u64, 1, whole as u64)
                .map_err(|e| with_hint(e, hint))?;
            whole_seconds(&format!("{at}.step_duration"), ramp.step_duration)?;
            if ramp.counts(self.connections).len() > MAX_RAMP_STEPS {
                return Err(crate::Error::spec(
                    format!("{at}.step"),
                    format!("{} makes more than {MAX_RAMP_STEPS} steps", ramp.step),
                ));
            }
        }
        let open_loop = self.open_loop() || searched;
        if let (Some(arrivals), false) = (self.arrivals, open_loop) {
            return Err(crate::Error::spec(
                format!("{p}load.arrivals"),
                format!(
                    "\"{}\" applies to open loop only: set load.rate, rate_ramp or rate_profile too (or \
                     search with [slo], whose steps are open loop)",
                    match arrivals {
                        Arrivals::Uniform => "uniform",
                        Arrivals::Poisson => "poisson",
                    }
                ),
            ));
        }
        let paced = [
            ("requests", self.requests.is_some()),
            ("rate", self.rate.is_some()),
            ("rate_ramp", self.rate_ramp.is_some()),
            ("rate_profile", self.rate_profile.is_some()),
            ("connections_ramp", self.connections_ramp.is_some()),
        ];
        if let (true, Some((field, _))) = (self.idle, paced.iter().find(|(_, set)| *set)) {
            return Err(crate::Error::spec(
                format!("{p}load.idle"),
                format!(
                    "idle connections send nothing, so load.{field} cannot be set with it: \
                     give load.duration (or stop the run) instead"
                ),
            ));
        }
        self.reconnect.validate(p)?;
        if let Some(retry) = &self.retry {
            retry.validate(p)?;
        }
        if let Some([lo, hi]) = self.open_jitter {
            if lo.0 > hi.0 || hi.0 > Duration::from_secs(60) {
                return Err(crate::Error::spec(
                    format!("{p}load.open_jitter"),
                    format!(
                        "[{:?}, {:?}] is not a range: allowed is [MIN, MAX] with MIN <= MAX <= 60s",
                        lo.0, hi.0
                    ),
                ));
            }
        }
        if self.timeout.0 < Duration::from_millis(10) {
            return Err(crate::Error::spec(
                format!("{p}load.timeout"),
                format!("{:?} is too short: allowed is 10ms or more", self.timeout.0),
            ));
        }
        Ok(())
    }

    /// With a ramp and neither `requests` nor `duration`: measure for as long as the ramp
    /// takes to reach its last step and hold it for one step.
    pub(crate) fn normalize(&mut self) {
        if self.requests.is_some() || self.duration.is_some() {
            return;
        }
        let rate = self
            .rate_steps()
            .map(|(rates, step)| step * rates.len() as u32);
        let conns = self
            .connections_ramp
            .map(|r| r.step_duration.0 * r.counts(self.connections).len() as u32);
        if let Some(d) = rate.into_iter().chain(conns).max() {
            self.duration = Some(SpecDuration(d));
        }
    }

    /// Whether requests are paced (open loop).
    pub fn open_loop(&self) -> bool {
        self.rate.is_some() || self.rate_steps().is_some()
    }

    /// The rate of each step and the steps' length, with `rate_ramp` or `rate_profile` (a
    /// profile's own list, borrowed).
    pub fn rate_steps(&self) -> Option<(std::borrow::Cow<'_, [f64]>, Duration)> {
        match (&self.rate_ramp, &self.rate_profile) {
            (Some(r), _) => Some((r.rates().into(), r.step_duration.0)),
            (None, Some(p)) => Some((p.rates.as_slice().into(), p.step_duration.0)),
            (None, None) => None,
        }
    }

    /// The total rate asked for during step `step` of a ramp or profile (or the fixed
    /// rate); `None` in closed loop.
    pub fn rate_at_step(&self, step: usize) -> Option<f64> {
        match self.rate_steps() {
            Some((rates, _)) => rates.get(step).or(rates.last()).copied(),
            None => self.rate,
        }
    }

    /// The total rate asked for `secs` seconds into measurement; `None` in closed loop.
    pub fn rate_at(&self, secs: f64) -> Option<f64> {
        match self.rate_steps() {
            Some((rates, step)) => {
                let k = (secs.max(0.0) / step.as_secs_f64()).floor() as usize;
                rates.get(k).or(rates.last()).copied()
            }
            None => self.rate,
        }
    }

    /// Worker threads actually used: the setting, or one per core, never more than connections.
    pub fn effective_threads(&self) -> u32 {
        let auto = std::thread::available_parallelism().map_or(1, |n| n.get() as u32);
        self.threads.unwrap_or(auto).min(self.connections).max(1)
    }

    /// The request budget: `requests` (`all_keys` is the number of keys), or the default
    /// when no `duration` is given either.
    pub fn request_budget(&self, keys: &super::Keys) -> Option<u64> {
        if self.idle {
            return Some(0);
        }
        match (self.requests, self.duration) {
            (Some(Requests::Count(n)), _) => Some(n),
            (Some(Requests::AllKeys), _) => Some(keys.count()),
            (None, None) => Some(DEFAULT_REQUESTS),
            (None, Some(_)) => None,
        }
    }
}

/// The highest rate allowed (requests per second).
pub const MAX_RATE: f64 = 100_000_000.0;

/// The lowest rate allowed (requests per second in total): one request every 1,000 s.
/// Below it a connection's gap overflows the clock's arithmetic long before it means anything.
pub const MIN_RATE: f64 = 0.001;

/// A ramp step lasts a whole number of seconds (at least one), so that each step is a
/// whole number of timeline rows.
pub(crate) fn whole_seconds(path: &str, d: SpecDuration) -> crate::Result<()> {
    if d.0.is_zero() || d.0.subsec_nanos() != 0 {
        return Err(crate::Error::spec(
            path,
            format!(
                "{:?}: allowed is a whole number of seconds, at least 1 (e.g. \"5s\")",
                d.0
            ),
        ));
    }
    Ok(())
}

fn with_hint(e: crate::Error, hint: &str) -> crate::Error {
    match e {
        crate::Error::Spec { path, reason } => crate::Error::Spec {
            path,
            reason: format!("{reason} {hint}"),
        },
        other => other,
    }
}

/// The integer fields checked against a range (`u64::MAX`: no upper bound), by path: read by
/// [`range`] and written into the spec's JSON Schema as `minimum`/`maximum`, so the reference
/// lists the ranges checked.
pub(crate) const RANGES: &[(&str, u64, u64)] = &[
    ("load.connections", 1, 1_000_000),
    ("load.threads", 1, 1024),
    ("load.pipeline", 1, 100_000),
    ("load.requests", 1, u64::MAX),
    ("slo.max_steps", 1, 1000),
];

/// `value` must lie in the field's range in [`RANGES`].
pub(crate) fn range(p: &str, field: &str, value: u64) -> crate::Result<()> {
    let Some(&(_, lo, hi)) = RANGES.iter().find(|(path, _, _)| *path == field) else {
        return Err(crate::Error::spec(
            format!("{p}{field}"),
            "has no range in spec::load::RANGES (a bug in respload)".to_string(),
        ));
    };
    within(p, field, value, lo, hi)
}

/// `value` must lie in `lo..=hi` (bounds that depend on other fields).
pub(crate) fn within(p: &str, field: &str, value: u64, lo: u64, hi: u64) -> crate::Result<()> {
    if value < lo || value > hi {
        let allowed = if hi == u64::MAX {
            format!("{lo} or more")
        } else {
            format!("{lo} to {hi}")
        };
        return Err(crate::Error::spec(
            format!("{p}{field}"),
            format!("{value} is out of range: allowed is {allowed}"),
        ));
    }
    Ok(())
}

/// How many measured requests: a count, or one per key of the range.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(
    feature = "schema",
    derive(schemars::JsonSchema),
    schemars(untagged, transform = super::schema::all_keys)
)]
pub enum Requests {
    /// Exactly this many.
    Count(u64),
    /// As many as `keys.range` holds (memtier's `-n allkeys`); with the `parallel` or
    /// `sequential` distribution every key is visited exactly once.
    AllKeys,
}

impl Serialize for Requests {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Requests::Count(n) => s.serialize_u64(*n),
            Requests::AllKeys => s.serialize_str("all_keys"),
        }
    }
}

impl<'de> Deserialize<'de> for Requests {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        match serde_json::Value::deserialize(d)? {
            serde_json::Value::String(s) if s == "all_keys" => Ok(Requests::AllKeys),
            v => v.as_u64().map(Requests::Count).ok_or_else(|| {
                D::Error::custom(format!(
                    "{v} is not a request count: allowed are a whole number or \"all_keys\""
                ))
            }),
        }
    }
}
