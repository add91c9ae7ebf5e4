//! Phases in step across hosts (`--barrier URL`, `Workload::with_barrier`): the hosts of a
//! sharded run meet on a Redis server they all reach before each phase, so that every host
//! has finished phase k before any host starts phase k + 1.

use super::{fnv1a, ConnectOptions, Workload};
use crate::spec::{redact_url, Target};
use crate::{Error, Result};
use std::time::Duration;

/// How long a host waits at a phase boundary for the others when no timeout is given: long
/// enough for a slower host to finish a phase of requests, short enough that a host that
/// died does not hold the others for long.
pub const DEFAULT_BARRIER_TIMEOUT: Duration = Duration::from_secs(300);

/// The longest timeout accepted (a day): more is taken for a mistake.
const MAX_BARRIER_TIMEOUT: Duration = Duration::from_secs(86_400);

/// The longest barrier id: it is part of every key the barrier writes.
const MAX_ID_LEN: usize = 100;

/// Where and how the hosts of a sharded run meet between phases.
#[derive(Debug, Clone, PartialEq)]
pub struct Barrier {
    /// The server the hosts meet on (any Redis every host reaches; the target will do).
    pub connect: ConnectOptions,
    /// Its URL as given, the password hidden: for messages.
    pub url: String,
    /// The run's name on that server, the same on every host (`--barrier-id`); `None`:
    /// derived from the workload and its start instant ([`Workload::barrier_id`]).
    pub id: Option<String>,
    /// How long a host waits for the others at each phase boundary, from its own arrival.
    pub timeout: Duration,
}

impl Barrier {
    /// The keys of phase `phase`'s barrier of run `id`: the set of shards arrived, the list
    /// each waiting host pops its wake-up from, and the barrier's outcome (`go:INSTANT` or
    /// `fail:WHY`). The braces keep the three in one cluster slot.
    pub fn keys(id: &str, phase: usize) -> [String; 3] {
        let base = format!("respload:barrier:{{{id}}}:{phase}");
        [
            format!("{base}:arrived"),
            format!("{base}:go"),
            format!("{base}:state"),
        ]
    }
}

impl Workload {
    /// This shard with phases in step across its hosts: before each phase (the first too
    /// unless a start instant is set), the host waits on the Redis at `url` until every shard
    /// of the run has arrived there, then all start the phase at one instant. `id` names the
    /// run on that server (the same on every host, new for each run; derived from the
    /// workload and its start instant when `None`, which needs [`Workload::starting_at`]
    /// first); `timeout` is how long a host waits for the others at each phase boundary
    /// (default [`DEFAULT_BARRIER_TIMEOUT`]). Errors name the option (`barrier`,
    /// `barrier_id`, `barrier_timeout`) and the value.
    pub fn with_barrier(
        &self,
        url: &str,
        id: Option<&str>,
        timeout: Option<Duration>,
    ) -> Result<Workload> {
        let shown = redact_url(url);
        if self.shard.is_none() {
            return Err(Error::spec(
                "barrier",
                format!(
                    "`{shown}`: the barrier waits for the N hosts of a sharded run: give the \
                     shard too (--shard I/N, shard=(i, n))"
                ),
            ));
        }
        let target = Target {
            url: Some(url.to_string()),
            ..Target::default()
        };
        let connect = target.resolve("").map_err(|e| match e {
            Error::Spec { reason, .. } => Error::spec("barrier", reason),
            other => other,
        })?;
        if let Some(id) = id {
            check_id(id)?;
        } else if self.start_at.is_none() {
            return Err(Error::spec(
                "barrier_id",
                "without a start instant (--start-at) nothing names this run the same on every \
                 host: give --barrier-id ID (barrier_id=, barrierId:), the same on every host \
                 and new for each run, e.g. the Job's uid",
            ));
        }
        let timeout = timeout.unwrap_or(DEFAULT_BARRIER_TIMEOUT);
        if timeout < Duration::from_millis(10) || timeout > MAX_BARRIER_TIMEOUT {
            return Err(Error::spec(
                "barrier_timeout",
                format!("{timeout:?}: allowed is 10ms to 1 day"),
            ));
        }
        Ok(Workload {
            barrier: Some(Barrier {
                connect,
                url: shown,
                id: id.map(str::to_string),
                timeout,
            }),
            ..self.clone()
        })
    }

    /// The name of this run on its barrier server: the id given, else one derived from the
    /// whole workload, the shard count and the start instant (the same on every host of the
    /// run, different for another instant). `None` without a barrier.
    pub fn barrier_id(&self) -> Result<Option<String>> {
        let Some(barrier) = &self.barrier else {
            return Ok(None);
        };
        if let Some(id) = &barrier.id {
            return Ok(Some(id.clone()));
        }
        let (Some(shard), Some(at)) = (&self.shard, self.start_at) else {
            return Err(Error::spec(
                "barrier_id",
                "neither given nor derivable: give a barrier id, or a start instant",
            ));
        };
        let text = format!("{}/{}@{}", shard.workload, shard.count, at.to_bits());
        Ok(Some(format!("{:016x}", fnv1a(text.as_bytes()))))
    }
}

/// A barrier timeout from its text (`"90s"`, `"5m"`, `"30"` seconds), as the bindings take
/// it; an error names `barrier_timeout`.
pub fn parse_barrier_timeout(text: &str) -> Result<Duration> {
    crate::spec::SpecDuration::parse(text)
        .map(|d| d.0)
        .map_err(|e| Error::spec("barrier_timeout", e))
}

/// A barrier id: 1 to 100 letters, digits, `-`, `_`, `.` or `:` (it goes into key names).
fn check_id(id: &str) -> Result<()> {
    let ok = !id.is_empty()
        && id.len() <= MAX_ID_LEN
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | ':'));
    match ok {
        true => Ok(()),
        false => Err(Error::spec(
            "barrier_id",
            format!("`{id}`: allowed are 1 to {MAX_ID_LEN} letters, digits, `-`, `_`, `.` and `:`"),
        )),
    }
}

#[cfg(test)]
mod tests {
    use crate::plan::Workload;
    use std::time::Duration;

    fn shard() -> Workload {
        let w = Workload::from_json_value(serde_json::json!({
            "load": {"connections": 4, "requests": 100}
        }))
        .unwrap();
        w.shard(0, 2).unwrap()
    }

    fn err(r: crate::Result<Workload>) -> String {
        r.unwrap_err().to_string()
    }

    #[test]
    fn bad_options_are_named_with_their_values() {
        let unsharded = Workload::from_json_value(serde_json::json!({})).unwrap();
        let e = err(unsharded.with_barrier("redis://127.0.0.1:1/", Some("a"), None));
        assert!(e.contains("`barrier`") && e.contains("--shard"), "{e}");
        let e = err(shard().with_barrier("http://x/", Some("a"), None));
        assert!(e.contains("`barrier`") && e.contains("http://x/"), "{e}");
        let e = err(shard().with_barrier("redis://:secret@h/", Some("a b"), None));
        assert!(e.contains("`barrier_id`") && e.contains("`a b`"), "{e}");
        let e = err(shard().with_barrier("redis://h/", None, None));
        assert!(
            e.contains("`barrier_id`") && e.contains("--start-at"),
            "{e}"
        );
        let e = err(shard().with_barrier("redis://h/", Some("a"), Some(Duration::ZERO)));
        assert!(e.contains("`barrier_timeout`") && e.contains("10ms"), "{e}");
    }

    #[test]
    fn the_password_stays_hidden() {
        let w = shard()
            .with_barrier("redis://:secret@h:7000/", Some("run-1"), None)
            .unwrap();
        let b = w.barrier.unwrap();
        assert!(!b.url.contains("secret"), "{}", b.url);
        assert_eq!(b.connect.password.as_deref(), Some("secret"));
        assert_eq!(b.timeout, super::DEFAULT_BARRIER_TIMEOUT);
    }

    #[test]
    fn a_derived_id_follows_the_start_instant_not_the_shard() {
        let at = crate::spec::unix_now() + 60.0;
        let id = |i: u32, at: f64| {
            let w = Workload::from_json_value(serde_json::json!({
                "load": {"connections": 4, "requests": 100}
            }))
            .unwrap();
            w.shard(i, 2)
                .unwrap()
                .starting_at(at)
                .unwrap()
                .with_barrier("redis://h/", None, None)
                .unwrap()
                .barrier_id()
                .unwrap()
                .unwrap()
        };
        assert_eq!(id(0, at), id(1, at));
        assert_ne!(id(0, at), id(0, at + 1.0));
    }
}
