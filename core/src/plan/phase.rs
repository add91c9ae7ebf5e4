//! One phase resolved: its spec checked and normalized, its target resolved, its commands
//! compiled and its mix made ([`Phase`]).

use super::{CompiledCommand, ConnectOptions, MixEntry, PickedSteps, ReplayPlan};
use crate::spec::{
    redact_url, uses_node_tag, Arg, Distribution, PhaseSpec, Refill, Requests, Thresholds,
    MAX_COMMANDS,
};
use crate::{Error, Result};
use serde_json::Value as Json;
use std::collections::HashMap;
use std::sync::Arc;

/// One validated phase, ready to run.
#[derive(Debug, Clone)]
pub struct Phase {
    /// The settings (normalized, secrets included: use [`Phase::redacted`] for reports).
    pub spec: PhaseSpec,
    /// Resolved connection settings.
    pub connect: ConnectOptions,
    /// CompiledCommand commands, one per label in the report, in spec order (a chain's steps in
    /// order).
    pub commands: Vec<CompiledCommand>,
    /// The weighted mix over `commands`.
    pub mix: Vec<MixEntry>,
    /// The prefix of this phase's field paths in errors (`phases[1].`, or empty).
    pub prefix: String,
    /// A trace replay (`replay`): what the pass over its trace found.
    pub replay: Option<std::sync::Arc<ReplayPlan>>,
}

impl Phase {
    /// Whether each connection walks its own slice of the keys exactly once: `requests =
    /// "all_keys"` with every command on the parallel distribution.
    pub fn parallel_all_keys(&self) -> bool {
        self.spec.load.requests == Some(Requests::AllKeys)
            && self
                .mix
                .iter()
                .all(|e| e.distribution == Distribution::Parallel)
    }

    /// Whether a command uses `{node_tag}`: in cluster mode each connection then talks to one
    /// primary only (connections spread over the primaries in turn), as redis-benchmark's
    /// clients do.
    pub fn binds_connections_to_nodes(&self) -> bool {
        self.commands.iter().any(|c| uses_node_tag(&c.args))
    }

    /// The normalized settings as JSON, with the secrets replaced by `"***"`: the password,
    /// the one in a URL, and the TLS client key's file and passphrase.
    pub fn redacted(&self) -> Json {
        let mut spec = self.spec.clone();
        let tls = &mut spec.target.tls;
        for secret in [
            &mut spec.target.password,
            &mut tls.key,
            &mut tls.key_password,
        ] {
            if secret.is_some() {
                *secret = Some("***".into());
            }
        }
        if let Some(url) = &spec.target.url {
            spec.target.url = Some(redact_url(url));
        }
        for e in &mut spec.events {
            if let Some(r) = &e.replica {
                e.replica = Some(redact_url(r));
            }
        }
        serde_json::to_value(&spec).unwrap_or(Json::Null)
    }
}

impl Phase {
    pub(super) fn from_json(mut raw: Json, prefix: &str) -> Result<Self> {
        replay_pipeline(&mut raw);
        if let Some(t) = raw.get("thresholds").filter(|t| !t.is_null()) {
            // Read first for its errors' full path (the serde reader names `thresholds`).
            Thresholds::from_json(t, &format!("{prefix}thresholds"))?;
        }
        let mut spec: PhaseSpec = serde_path_to_error::deserialize(raw).map_err(|e| {
            let path = e.path().to_string();
            let path = if path == "." { String::new() } else { path };
            Error::spec(format!("{prefix}{path}"), e.into_inner())
        })?;
        spec.load.validate(prefix, spec.slo.is_some())?;
        if let Some(slo) = &spec.slo {
            slo.validate(prefix, &spec.load)?;
        }
        spec.load.normalize();
        spec.keys.validate(prefix)?;
        spec.values.validate(prefix)?;
        spec.output.validate(prefix)?;
        if let Some(s) = &spec.observe.statsd {
            s.validate(&format!("{prefix}observe.statsd"))?;
        }
        let connect = spec.target.resolve(prefix)?;
        if connect.cluster.is_some() && (spec.load.idle || !spec.load.keepalive) {
            let field = if spec.load.idle { "idle" } else { "keepalive" };
            return Err(Error::spec(
                format!("{prefix}load.{field}"),
                "is not supported in cluster mode (target.cluster) yet: the cluster client \
                 keeps one connection per primary open for the whole run",
            ));
        }
        if connect.cluster.is_some() && spec.load.retry.is_some() {
            return Err(Error::spec(
                format!("{prefix}load.retry"),
                "is not supported in cluster mode (target.cluster) yet: the cluster client \
                 follows MOVED, ASK and TRYAGAIN itself",
            ));
        }
        if connect.cluster.is_some() && spec.output.client_stats.is_some() {
            return Err(Error::spec(
                format!("{prefix}output.client_stats"),
                "is not supported in cluster mode (target.cluster) yet: the cluster client \
                 keeps no per-connection counters",
            ));
        }
        if connect.cluster.is_some() && spec.load.reconnect != crate::spec::Reconnect::default() {
            return Err(Error::spec(
                format!("{prefix}load.reconnect"),
                "is not supported in cluster mode (target.cluster) yet: the cluster client \
                 reconnects each node with its own backoff",
            ));
        }
        let open_loop = spec.load.open_loop();
        if spec.load.refill == Refill::Batch && open_loop {
            return Err(Error::spec(
                format!("{prefix}load.refill"),
                "\"batch\" applies to closed loop only: with load.rate (rate_ramp, rate_profile) each \
                 request goes out at its intended time; remove the rate, or set refill = \"eager\"",
            ));
        }
        io_supported(spec.load.io, connect.tls.is_some(), prefix)?;
        if spec.replay.is_some() {
            return Self::replay(spec, connect, prefix);
        }
        super::events::validate(
            &spec.events,
            prefix,
            &connect,
            spec.load.duration.map(|d| d.0),
        )?;
        // Before compiling them (chains add steps: counted again after).
        too_many_commands(spec.commands.len(), prefix)?;
        if spec.commands.is_empty() {
            return Err(Error::spec(
                format!("{prefix}commands"),
                "is empty: give at least one command, e.g. { name = \"get\" }",
            ));
        }
        let mut commands: Vec<CompiledCommand> = Vec::with_capacity(spec.commands.len());
        let mut mix = Vec::with_capacity(spec.commands.len());
        for (i, c) in spec.commands.iter().enumerate() {
            let path = format!("{prefix}commands[{i}]");
            if let Some(d) = &c.distribution {
                d.validate(&format!("{path}.distribution"), spec.keys.range)?;
            }
            if c.pick.is_some() && connect.cluster.is_some() {
                return Err(Error::spec(
                    format!("{path}.pick"),
                    "is not supported in cluster mode (target.cluster) yet: its steps share \
                     their label's routing; send the chain whole (remove `pick`)",
                ));
            }
            let mut steps = Vec::new();
            // With `pick`: each step (its label's command, its arguments), and the command of
            // each label.
            let mut picked: Vec<(usize, Vec<Arg>)> = Vec::new();
            let mut by_label: HashMap<String, usize> = HashMap::new();
            for (j, mut compiled) in c.compile(&path)?.into_iter().enumerate() {
                let field = match (&c.chain, &c.template) {
                    (Some(_), _) => format!("{path}.chain[{j}]"),
                    (None, Some(_)) => format!("{path}.template"),
                    (None, None) => format!("{path}.name"),
                };
                if let Some(&at) = by_label.get(&compiled.label) {
                    picked.push((at, compiled.args));
                    continue;
                }
                if connect.cluster.is_some() {
                    super::slots::cluster_check(&compiled, &spec.keys.prefix, &field)?;
                } else if uses_node_tag(&compiled.args) {
                    return Err(Error::spec(
                        field,
                        "uses `{node_tag}`, a hash tag of the connection's own primary, which \
                         only a cluster has: set target.cluster = true (or list the nodes in \
                         target.cluster), or remove it",
                    ));
                }
                if commands.iter().any(|o| o.label == compiled.label) {
                    return Err(Error::spec(
                        path,
                        format!(
                            "a second command labelled `{}`: give it a distinct `label`",
                            compiled.label
                        ),
                    ));
                }
                if let (true, Some([lo, hi])) = (compiled.builtin_set, spec.values.expiry) {
                    compiled.args.push(Arg::Expiry(lo as u32, hi as u32));
                }
                if c.pick.is_some() {
                    by_label.insert(compiled.label.clone(), commands.len());
                    picked.push((commands.len(), compiled.args.clone()));
                }
                steps.push(commands.len());
                commands.push(compiled);
            }
            // A chain's key is drawn for its first step, so that step decides the pattern.
            let reads = commands[steps[0]].reads;
            let cursor = commands[steps[steps.len() - 1]].args.contains(&Arg::Cursor);
            if cursor {
                if spec.load.pipeline != 1 || connect.cluster.is_some() {
                    return Err(Error::spec(
                        format!("{path}.template"),
                        "follows `{cursor}`, so each request needs its previous reply: it needs \
                         load.pipeline = 1, and no cluster mode (target.cluster)",
                    ));
                }
                if mix.iter().any(|e: &MixEntry| e.cursor.is_some()) {
                    return Err(Error::spec(
                        format!("{path}.template"),
                        "follows `{cursor}` too: one command per phase may follow a cursor",
                    ));
                }
            }
            mix.push(MixEntry {
                weight: c.weight,
                distribution: spec.keys.distribution_for(c.distribution.clone(), reads),
                steps,
                pick: c.pick.map(|order| {
                    Arc::new(PickedSteps {
                        order,
                        steps: picked,
                    })
                }),
                cursor: cursor.then(|| c.max_iterations.unwrap_or(0)),
            });
        }
        too_many_commands(commands.len(), prefix)?;
        Ok(Phase {
            spec,
            connect,
            commands,
            mix,
            prefix: prefix.to_string(),
            replay: None,
        })
    }

    /// A replay phase: the trace read once (its commands become the phase's labels), the
    /// load set from it (connections, requests, the open-loop rate).
    fn replay(mut spec: PhaseSpec, connect: ConnectOptions, prefix: &str) -> Result<Self> {
        let Some(replay) = spec.replay.clone() else {
            return Err(Error::Internal("not a replay phase".into()));
        };
        replay.validate(prefix)?;
        let refuse = |field: &str, why: &str| Err(Error::spec(format!("{prefix}{field}"), why));
        let load = &spec.load;
        for (field, set) in [
            ("load.rate_ramp", load.rate_ramp.is_some()),
            ("load.rate_profile", load.rate_profile.is_some()),
            ("load.warmup", load.warmup.is_some()),
            ("load.connections_ramp", load.connections_ramp.is_some()),
            ("load.requests", load.requests.is_some()),
            ("slo", spec.slo.is_some()),
            ("events", !spec.events.is_empty()),
        ] {
            if set {
                return refuse(
                    field,
                    "does not apply to a replay, whose trace sets the schedule and the \
                     requests: remove it (replay.speed or replay.rate set the pace)",
                );
            }
        }
        if load.idle || !load.keepalive {
            return refuse(
                "load.keepalive",
                "a replay keeps each connection open: remove load.idle / load.keepalive",
            );
        }
        if load.reconnect.every.is_some() {
            return refuse(
                "load.reconnect.every",
                "a replay keeps each connection open: remove load.reconnect.every",
            );
        }
        let plan = ReplayPlan::scan(&replay, prefix, connect.db, replay.prefill)?;
        let rate = plan.rate();
        if rate > crate::spec::MAX_RATE {
            return refuse(
                "replay.speed",
                &format!(
                    "replays the trace at {rate:.0} requests per second: allowed are up to {}",
                    crate::spec::MAX_RATE
                ),
            );
        }
        let rate = rate.max(crate::spec::MIN_RATE);
        // The rate set here is the trace's: a spec read back (to_json_value) has it already.
        if let Some(given) = spec.load.rate.filter(|r| (r / rate - 1.0).abs() > 1e-9) {
            return refuse(
                "load.rate",
                &format!(
                    "{given}: a replay's rate is its trace's ({rate:.3} requests per second \
                     at replay.speed {}): set replay.rate or replay.speed instead",
                    plan.speed
                ),
            );
        }
        spec.load.connections = plan.connections;
        spec.load.rate = Some(rate);
        // Every worker thread parses the whole trace (keeping its own connections' lines):
        // no more threads than the rate needs, but two where there are two cores.
        if spec.load.threads.is_none() {
            let needed = (rate / REPLAY_RATE_PER_THREAD)
                .ceil()
                .max(REPLAY_MIN_THREADS) as u32;
            spec.load.threads = Some(needed.min(spec.load.effective_threads()));
        }
        spec.load.normalize();
        let commands: Vec<CompiledCommand> = plan
            .labels
            .iter()
            .map(|label| CompiledCommand {
                label: label.clone(),
                args: vec![Arg::Lit(label.as_bytes().into())],
                reads: crate::spec::READ_COMMANDS
                    .iter()
                    .any(|r| r.eq_ignore_ascii_case(label)),
                builtin_set: false,
            })
            .collect();
        let mix = vec![MixEntry {
            weight: 1,
            steps: vec![0],
            distribution: spec.keys.distribution_for(None, false),
            pick: None,
            cursor: None,
        }];
        Ok(Phase {
            spec,
            connect,
            commands,
            mix,
            prefix: prefix.to_string(),
            replay: Some(std::sync::Arc::new(plan)),
        })
    }
}

/// Requests a replay connection may have in flight unless `load.pipeline` says otherwise: a
/// recorded client whose commands came faster than their replies (it pipelined, or ran a
/// transaction) is replayed as it sent them, not held to one at a time.
pub const REPLAY_PIPELINE: u32 = 64;

/// The rate one worker thread of a replay is given (`load.threads` unset): well within
/// what one thread sends (docs/performance.md), so a thread is added before one is busy.
pub const REPLAY_RATE_PER_THREAD: f64 = 50_000.0;

/// The fewest worker threads a replay takes (`load.threads` unset, the cores and
/// connections allowing): at 20,000/s one thread cost 7% more client CPU per request than
/// two, the second parse of the trace included (TR1, docs/performance.md).
pub const REPLAY_MIN_THREADS: f64 = 2.0;

/// A replay phase without a `load.pipeline` of its own gets [`REPLAY_PIPELINE`].
fn replay_pipeline(raw: &mut Json) {
    let Some(o) = raw.as_object_mut() else { return };
    if o.get("replay").is_none_or(Json::is_null) {
        return;
    }
    let load = o
        .entry("load")
        .or_insert_with(|| Json::Object(Default::default()));
    if let Some(l) = load.as_object_mut() {
        l.entry("pipeline").or_insert(REPLAY_PIPELINE.into());
    }
}

pub(super) fn too_many_commands(n: usize, prefix: &str) -> Result<()> {
    if n <= MAX_COMMANDS {
        return Ok(());
    }
    Err(Error::spec(
        format!("{prefix}commands"),
        format!("{n} commands (a chain's steps count each): allowed are at most {MAX_COMMANDS}"),
    ))
}

/// `load.io = "uring"` runs plain TCP and Unix sockets on Linux: TLS stays on epoll.
fn io_supported(io: crate::spec::Io, tls: bool, prefix: &str) -> Result<()> {
    if io != crate::spec::Io::Uring {
        return Ok(());
    }
    if !cfg!(target_os = "linux") {
        return Err(Error::spec(
            format!("{prefix}load.io"),
            "\"uring\" is Linux's (io_uring): allowed here is \"epoll\" (the default)",
        ));
    }
    if tls {
        return Err(Error::spec(
            format!("{prefix}load.io"),
            "\"uring\" runs plain TCP and Unix sockets only, not TLS (target.tls): allowed with \
             TLS is \"epoll\" (the default); remove load.io or the TLS settings",
        ));
    }
    Ok(())
}
