//! The hosts of a sharded run meeting between phases (`--barrier`): each host adds its
//! shard to the phase's set on the barrier server; the one that completes the set opens the
//! barrier for everyone (one wake-up per host in a list each waiter blocks on, holding the
//! instant all start the phase at); a host that waits too long, or is stopped, closes it for
//! everyone instead, so that no host starts the phase without the others.
//!
//! Each step is a Lua script, so that opening and closing cannot both happen. The keys
//! expire a minute after the timeout.

use crate::net::{Client, Value};
use crate::plan::Barrier;
use crate::spec::unix_now;
use crate::{Error, Result};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// From the last arrival to the phase's first request: time for every host to wake up and
/// open its connections, so that they send their first requests at one instant.
const LEAD_S: f64 = 0.5;

/// Arrive: refused when the barrier already opened or closed; the last shard to arrive
/// opens it. Returns whether this shard was new, how many have arrived, and the outcome
/// found on arrival (empty when none).
const ARRIVE: &str = "\
local state = redis.call('GET', KEYS[3])
if state then return {0, redis.call('SCARD', KEYS[1]), state} end
local added = redis.call('SADD', KEYS[1], ARGV[1])
redis.call('EXPIRE', KEYS[1], ARGV[3])
local n = redis.call('SCARD', KEYS[1])
if added == 1 and n == tonumber(ARGV[2]) then
  local go = 'go:' .. ARGV[4]
  redis.call('SET', KEYS[3], go, 'EX', ARGV[3])
  for i = 1, n do redis.call('RPUSH', KEYS[2], go) end
  redis.call('EXPIRE', KEYS[2], ARGV[3])
end
return {added, n, ''}";

/// Give up: close the barrier (every waiter wakes with `fail:WHY`) unless it already has an
/// outcome, which is returned (empty when this call closed it).
const GIVE_UP: &str = "\
local state = redis.call('GET', KEYS[3])
if state then return state end
state = 'fail:' .. ARGV[1]
redis.call('SET', KEYS[3], state, 'EX', ARGV[3])
for i = 1, tonumber(ARGV[2]) do redis.call('RPUSH', KEYS[2], state) end
redis.call('EXPIRE', KEYS[2], ARGV[3])
return ''";

/// Where one host is in one phase's barrier.
pub(super) struct Gate<'a> {
    /// The barrier's settings.
    pub barrier: &'a Barrier,
    /// The run's name on the barrier server.
    pub id: &'a str,
    /// The phase about to start: its index and name.
    pub phase: usize,
    /// Its name, for messages.
    pub name: &'a str,
    /// This host's shard and the number of shards.
    pub shard: (u32, u32),
}

/// How a wait at the barrier ended.
pub(super) enum Passed {
    /// Every host arrived: start the phase at this instant (UNIX seconds), after waiting
    /// this many seconds.
    At { instant: f64, waited_s: f64 },
    /// The run was stopped while waiting (the barrier closed for the others).
    Stopped,
}

impl Gate<'_> {
    fn error(&self, reason: impl std::fmt::Display) -> Error {
        Error::Barrier {
            phase: self.name.to_string(),
            reason: reason.to_string(),
        }
    }

    fn call_timeout(&self) -> Duration {
        self.barrier.connect.connect_timeout
    }

    fn ttl(&self) -> String {
        (self.barrier.timeout.as_secs() + 61).to_string()
    }

    /// Run a script on the barrier server: an error reply is this phase's barrier error.
    async fn eval(&self, client: &mut Client, script: &str, args: &[&str]) -> Result<Value> {
        let keys = Barrier::keys(self.id, self.phase);
        let mut cmd: Vec<&[u8]> = vec![b"EVAL", script.as_bytes(), b"3"];
        cmd.extend(keys.iter().map(|k| k.as_bytes()));
        cmd.extend(args.iter().map(|a| a.as_bytes()));
        match client.call(&cmd, self.call_timeout()).await? {
            Value::Error(e) => Err(self.error(format!(
                "the barrier server {} refused the barrier's script: {e} (it needs EVAL: \
                 Redis, Valkey or a server with Lua scripting, standalone)",
                self.barrier.url
            ))),
            v => Ok(v),
        }
    }

    /// Arrive, wait for every other shard, and pass (or fail, naming how many arrived).
    /// Every failure is this phase's barrier error, a lost barrier server's included.
    pub(super) fn meet(&self, stop: &AtomicBool) -> Result<Passed> {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| Error::Internal(format!("runtime: {e}")))?;
        rt.block_on(self.meet_async(stop)).map_err(|e| match e {
            Error::Barrier { .. } => e,
            other => self.error(format!("the barrier server {}: {other}", self.barrier.url)),
        })
    }

    async fn meet_async(&self, stop: &AtomicBool) -> Result<Passed> {
        let arrived = unix_now();
        let (me, count) = self.shard;
        let mut client = Client::connect(&self.barrier.connect).await?;
        let instant = format!("{:.6}", arrived + LEAD_S);
        let reply = self
            .eval(
                &mut client,
                ARRIVE,
                &[&me.to_string(), &count.to_string(), &self.ttl(), &instant],
            )
            .await?;
        let (added, n, state) = match &reply {
            Value::List(v) if v.len() == 3 => (
                v[0].as_text().unwrap_or_default(),
                v[1].as_text().unwrap_or_default(),
                v[2].as_text().unwrap_or_default(),
            ),
            other => return Err(self.error(format!("unexpected reply {other:?}"))),
        };
        if let Some(why) = state.strip_prefix("fail:") {
            return Err(self.error(why));
        }
        if added != "1" || !state.is_empty() {
            return Err(self.error(format!(
                "shard {me} arrived at a barrier that already {} (barrier id `{}` on {}): \
                 another run uses the same barrier id, or this shard ran before; give each \
                 run its own --barrier-id",
                match state.is_empty() {
                    true => "had this shard",
                    false => "opened",
                },
                self.id,
                self.barrier.url
            )));
        }
        if n.parse::<u32>().is_ok_and(|n| n > count) {
            return Err(self.error(format!(
                "{n} hosts arrived where {count} were expected (barrier id `{}` on {}): \
                 another run with another shard count uses the same barrier id",
                self.id, self.barrier.url
            )));
        }
        let go = &Barrier::keys(self.id, self.phase)[1];
        let deadline = arrived + self.barrier.timeout.as_secs_f64();
        loop {
            let left = deadline - unix_now();
            if left <= 0.0 {
                return self.time_out(&mut client, arrived).await;
            }
            // Whole seconds, which every server version takes.
            let secs = (left.ceil() as u64).max(1).to_string();
            let wait = self.call_timeout() + Duration::from_secs_f64(left.ceil() + 1.0);
            let cmd: [&[u8]; 3] = [b"BLPOP", go.as_bytes(), secs.as_bytes()];
            let popped = tokio::select! {
                r = client.call(&cmd, wait) => r?,
                () = stopped(stop) => {
                    // The blocked connection is left; a new one closes the barrier.
                    drop(client);
                    let mut fresh = Client::connect(&self.barrier.connect).await?;
                    let why = format!("shard {me} was stopped while waiting");
                    self.eval(&mut fresh, GIVE_UP, &[&why, &count.to_string(), &self.ttl()])
                        .await?;
                    return Ok(Passed::Stopped);
                }
            };
            match popped {
                Value::List(v) if v.len() == 2 => {
                    let token = v[1].as_text().unwrap_or_default();
                    return self.outcome(&token, arrived);
                }
                Value::Error(e) => {
                    return Err(self.error(format!(
                        "the barrier server {} refused BLPOP: {e}",
                        self.barrier.url
                    )))
                }
                // Nil: its own timeout passed; look at the deadline again.
                _ => {}
            }
        }
    }

    /// The barrier's outcome from a wake-up (`go:INSTANT` or `fail:WHY`).
    fn outcome(&self, token: &str, arrived: f64) -> Result<Passed> {
        if let Some(why) = token.strip_prefix("fail:") {
            return Err(self.error(why));
        }
        match token
            .strip_prefix("go:")
            .and_then(|t| t.parse::<f64>().ok())
        {
            Some(instant) => Ok(Passed::At {
                instant,
                waited_s: (unix_now() - arrived).max(0.0),
            }),
            None => Err(self.error(format!("unexpected wake-up `{token}`"))),
        }
    }

    /// The timeout passed: close the barrier for everyone, naming who arrived; unless it
    /// opened at the last moment.
    async fn time_out(&self, client: &mut Client, arrived: f64) -> Result<Passed> {
        let (me, count) = self.shard;
        let keys = Barrier::keys(self.id, self.phase);
        let members = client
            .call(&[b"SMEMBERS", keys[0].as_bytes()], self.call_timeout())
            .await?;
        let mut shards: Vec<u32> = match members {
            Value::List(v) => v.iter().filter_map(|m| m.as_text()?.parse().ok()).collect(),
            _ => Vec::new(),
        };
        shards.sort_unstable();
        let missing: Vec<String> = (0..count)
            .filter(|i| !shards.contains(i))
            .map(|i| i.to_string())
            .collect();
        // A host given another spec, shard count or instant derives another id.
        let derived = match self.barrier.id {
            None => ", derived from the spec, the shard count and --start-at",
            Some(_) => "",
        };
        let why = format!(
            "{} of {count} hosts arrived within {:?} of shard {me}'s arrival (missing: shard {}; \
             barrier id `{}`{derived} on {})",
            shards.len(),
            self.barrier.timeout,
            missing.join(", "),
            self.id,
            self.barrier.url
        );
        let found = self
            .eval(client, GIVE_UP, &[&why, &count.to_string(), &self.ttl()])
            .await?;
        match found.as_text().unwrap_or_default() {
            s if s.is_empty() => Err(self.error(why)),
            s => self.outcome(&s, arrived),
        }
    }

    /// Close the barrier of a phase this host will not run (it stopped or failed before),
    /// so that the others fail at once instead of waiting out the timeout. Best effort.
    pub(super) fn abandon(&self, why: &str) {
        let Ok(rt) = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
        else {
            return;
        };
        let count = self.shard.1.to_string();
        let _ = rt.block_on(async {
            let mut client = Client::connect(&self.barrier.connect).await?;
            self.eval(&mut client, GIVE_UP, &[why, &count, &self.ttl()])
                .await
        });
    }
}

/// Reach the barrier server before any traffic, and check that it runs scripts.
pub(super) async fn check(barrier: &Barrier) -> Result<()> {
    let mut client = Client::connect(&barrier.connect).await?;
    let cmd: [&[u8]; 3] = [b"EVAL", b"return 1", b"0"];
    match client.call(&cmd, barrier.connect.connect_timeout).await? {
        Value::Error(e) => Err(Error::spec(
            "barrier",
            format!(
                "`{}` refused a script ({e}): the barrier needs EVAL (Redis, Valkey or a server \
                 with Lua scripting, standalone)",
                barrier.url
            ),
        )),
        _ => Ok(()),
    }
}

/// Resolves once `stop` is set (looked at every 50 ms).
async fn stopped(stop: &AtomicBool) {
    while !stop.load(Ordering::Relaxed) {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}
