//! A workload validated ([`Workload`]): a spec read (TOML, JSON, a file), its `[vars]` and
//! phases laid out, every phase resolved and the checks across phases made.

use super::{make_room, Phase};
use crate::report::Budget;
use crate::report::ShardOf;
use crate::spec::{
    apply_vars, escape_vars, expand_repeats, json_from_str, merge, toml_to_json, too_many_phases,
    SpecParams, Thresholds, MAX_PHASES,
};
use crate::{Error, Result};
use serde_json::Value as Json;

/// A validated workload: one or more phases run in order.
#[derive(Debug, Clone)]
pub struct Workload {
    /// The phases, in order (one, named `main`, when the spec has no `phases`).
    pub phases: Vec<Phase>,
    /// When the first phase sends its first request (UNIX seconds), its connections opened
    /// before: several hosts given the same instant start together ([`Workload::starting_at`]).
    pub start_at: Option<f64>,
    /// Set on a shard ([`Workload::shard`]): which share of which workload it is.
    pub shard: Option<ShardOf>,
    /// Set by [`Workload::with_barrier`]: the hosts of the sharded run meet there before
    /// each phase, so that they run the phases in step.
    pub barrier: Option<super::Barrier>,
    /// The top-level `[thresholds]`: limits on the run's results (the measured phases
    /// together), checked when it ends (and while it runs with `abort_on_fail`).
    pub thresholds: Option<Thresholds>,
}

impl Workload {
    /// Parse and validate a spec given as a JSON value (the form the bindings pass).
    pub fn from_json_value(value: Json) -> Result<Self> {
        Self::from_json_value_with(value, &SpecParams::default())
    }

    /// [`Workload::from_json_value`] with `[vars]` resolved at a scale and with values given.
    pub fn from_json_value_with(mut value: Json, params: &SpecParams) -> Result<Self> {
        apply_vars(&mut value, params)?;
        let Json::Object(mut base) = value else {
            return Err(Error::spec(
                "",
                "a workload must be a table/object of fields",
            ));
        };
        let thresholds = match base.remove("thresholds") {
            None | Some(Json::Null) => None,
            Some(t) => Some(Thresholds::from_json(&t, "thresholds")?),
        };
        let has_phases = base.contains_key("phases");
        let phases = match base.remove("phases") {
            None => vec![Json::Object(base.clone())],
            // Checked before each phase is laid over a copy of the base.
            Some(Json::Array(list)) if list.len() > MAX_PHASES => {
                return Err(too_many_phases(list.len() as u64, "phases"))
            }
            Some(Json::Array(list)) if !list.is_empty() => list
                .into_iter()
                .map(|p| {
                    let mut merged = Json::Object(base.clone());
                    merge(&mut merged, p);
                    merged
                })
                .collect(),
            Some(other) => {
                return Err(Error::spec(
                    "phases",
                    format!("{other}: expected a non-empty list of phase tables"),
                ))
            }
        };
        let phases = expand_repeats(phases, has_phases)?;
        let mut out = Vec::with_capacity(phases.len());
        for (i, raw) in phases {
            let prefix = if has_phases {
                format!("phases[{i}].")
            } else {
                String::new()
            };
            out.push(Phase::from_json(raw, &prefix)?);
        }
        Self::assemble(out, thresholds)
    }

    /// The workload of validated phases: the checks across phases made, TLS configurations
    /// shared.
    pub(super) fn assemble(mut phases: Vec<Phase>, thresholds: Option<Thresholds>) -> Result<Self> {
        distinct_files(&phases)?;
        expiry_used(&phases)?;
        thresholds_apply(&phases, thresholds.as_ref())?;
        one_address(&phases, "prometheus", "9464", "metrics endpoint", |o| {
            o.prometheus.as_deref()
        })?;
        one_address(&phases, "dashboard", "8089", "dashboard", |o| {
            o.dashboard.as_deref()
        })?;
        one_statsd(&phases)?;
        share_tls_configs(&mut phases);
        Ok(Workload {
            phases,
            start_at: None,
            shard: None,
            barrier: None,
            thresholds,
        })
    }

    /// Parse and validate a TOML document.
    pub fn from_toml_str(text: &str) -> Result<Self> {
        Self::from_json_value(toml_to_json(text)?)
    }

    /// Parse and validate a JSON document.
    pub fn from_json_str(text: &str) -> Result<Self> {
        Self::from_json_value(json_from_str(text)?)
    }

    /// Read a `.toml` or `.json` file (`Workload.from_file` in Python, `Workload.fromFile`
    /// in Node).
    pub fn from_file(path: impl AsRef<std::path::Path>) -> Result<Self> {
        Self::from_file_with(path, &SpecParams::default())
    }

    /// [`Workload::from_file`] with `[vars]` resolved at a scale and with values given.
    pub fn from_file_with(path: impl AsRef<std::path::Path>, params: &SpecParams) -> Result<Self> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path).map_err(|source| Error::File {
            path: path.display().to_string(),
            source,
        })?;
        let is_json = path
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("json"))
            || text.trim_start().starts_with('{');
        let parsed = if is_json {
            json_from_str(&text)
        } else {
            toml_to_json(&text)
        }
        .and_then(|value| Self::from_json_value_with(value, params));
        parsed.map_err(|e| match e {
            Error::Spec { path: p, reason } => Error::Spec {
                path: p,
                reason: format!("{reason} (in {})", path.display()),
            },
            other => other,
        })
    }

    /// Apply overrides (a partial spec, e.g. from command-line flags). Target settings apply
    /// to every phase; everything else to the measured phases only, so `--requests 1000`
    /// changes the measurement but not the populate phase. A target override's endpoint
    /// (`url`, or `host`/`port`/`unix`) replaces the phase's whichever form each uses; a
    /// phase URL replaced this way keeps its user, password, database and TLS unless the
    /// override gives them. `thresholds` replace the run's.
    pub fn with_overrides(&self, target: Option<Json>, mut rest: Option<Json>) -> Result<Self> {
        // `thresholds` bound the run's results, as at the top of a spec: they replace the
        // run's rather than go into each measured phase.
        let mut thresholds = self.thresholds.clone();
        if let Some(t) = rest
            .as_mut()
            .and_then(|r| r.as_object_mut()?.remove("thresholds"))
        {
            thresholds = match t {
                Json::Null => None,
                t => Some(Thresholds::from_json(&t, "thresholds")?),
            };
        }
        // They would apply nowhere, silently.
        if let Some(key) = rest.as_ref().and_then(|r| r.as_object()?.keys().next()) {
            if !self.phases.iter().any(|p| p.spec.measured) {
                return Err(Error::spec(
                    key.as_str(),
                    "overrides other than `target` apply to the measured phases, and every \
                     phase of this workload has `measured = false`",
                ));
            }
        }
        let mut phases = Vec::with_capacity(self.phases.len());
        for (i, phase) in self.phases.iter().enumerate() {
            let mut raw = serde_json::to_value(&phase.spec).map_err(|e| Error::spec("", e))?;
            if let Some(t) = &target {
                if let (Some(base), Some(over)) = (raw.get_mut("target"), t.get("target")) {
                    make_room(base, &phase.connect, over);
                }
                merge(&mut raw, t.clone());
            }
            if let (true, Some(r)) = (phase.spec.measured, &rest) {
                merge(&mut raw, r.clone());
            }
            let prefix = if self.phases.len() > 1 {
                format!("phases[{i}].")
            } else {
                String::new()
            };
            phases.push(Phase::from_json(raw, &prefix)?);
        }
        Ok(Workload {
            start_at: self.start_at,
            shard: self.shard.clone(),
            barrier: self.barrier.clone(),
            ..Self::assemble(phases, thresholds)?
        })
    }

    /// The address of the run's metrics endpoint (`observe.prometheus`), and its field path.
    pub fn prometheus(&self) -> Option<(&str, String)> {
        self.phases.iter().find_map(|p| {
            let address = p.spec.observe.prometheus.as_deref()?;
            Some((address, format!("{}observe.prometheus", p.prefix)))
        })
    }

    /// Where the run sends its StatsD metrics (`observe.statsd`), and its field path.
    pub fn statsd(&self) -> Option<(&crate::spec::Statsd, String)> {
        self.phases.iter().find_map(|p| {
            let s = p.spec.observe.statsd.as_ref()?;
            Some((s, format!("{}observe.statsd", p.prefix)))
        })
    }

    /// The address of the run's live dashboard (`observe.dashboard`), and its field path.
    pub fn dashboard(&self) -> Option<(&str, String)> {
        self.phases.iter().find_map(|p| {
            let address = p.spec.observe.dashboard.as_deref()?;
            Some((address, format!("{}observe.dashboard", p.prefix)))
        })
    }

    /// Add `budget`'s limits to the run's thresholds (the CLI's `--check`), each replacing
    /// the same limit of the spec's. A limit on a command label no measured phase has is an
    /// error naming it under `path`.
    pub fn add_thresholds(&mut self, budget: &crate::report::Budget, path: &str) -> Result<()> {
        let mut t = self.thresholds.clone().unwrap_or_default();
        let add = |into: &mut crate::report::Limits, from: &crate::report::Limits| {
            for (name, limit) in from.given() {
                if let Some(slot) = into.slot(name) {
                    *slot = Some(limit);
                }
            }
        };
        add(&mut t.budget.totals, &budget.totals);
        for (label, limits) in &budget.commands {
            add(t.budget.commands.entry(label.clone()).or_default(), limits);
        }
        let measured: Vec<&Phase> = self.phases.iter().filter(|p| p.spec.measured).collect();
        check_labels(budget, &measured, path)?;
        self.thresholds = Some(t);
        Ok(())
    }

    /// The normalized spec (all phases) with secrets kept: it parses back to this workload.
    /// A literal `${` in a value is written `$${`, as a spec file writes it, since reading
    /// substitutes variables again (found by fuzz/fuzz_targets/spec.rs: a phase named
    /// `"a $${b"` read back as an unclosed `${`).
    pub fn to_json_value(&self) -> Json {
        let mut spec = self.spec_json(|p| serde_json::to_value(&p.spec).unwrap_or(Json::Null));
        escape_vars(&mut spec);
        spec
    }

    /// The normalized spec (all phases) with secrets redacted.
    pub fn redacted(&self) -> Json {
        self.spec_json(Phase::redacted)
    }

    /// The spec of every phase written by `spec`: one phase's table (without thresholds of
    /// its own), or `phases`; with the run's `thresholds` on top.
    fn spec_json(&self, spec: impl Fn(&Phase) -> Json) -> Json {
        let mut out = match self.phases.as_slice() {
            // One phase is the spec's top level, unless it has thresholds of its own: there
            // they would read back as the run's (found by fuzz/fuzz_targets/spec.rs: an
            // unmeasured phase's, which the run's refuse).
            [one] if one.spec.thresholds.is_none() => spec(one),
            many => serde_json::json!({ "phases": many.iter().map(spec).collect::<Vec<_>>() }),
        };
        if let (Some(t), Some(o)) = (&self.thresholds, out.as_object_mut()) {
            o.insert("thresholds".into(), t.to_json());
        }
        out
    }
}

/// `values.expiry` adds `EX` to the built-in `set` only: with no such command in any phase it
/// would be silently ignored. (A phase without one may inherit it from the base table.)
fn expiry_used(phases: &[Phase]) -> Result<()> {
    let setting = phases.iter().find(|p| p.spec.values.expiry.is_some());
    match setting {
        Some(p)
            if !phases
                .iter()
                .flat_map(|p| &p.commands)
                .any(|c| c.builtin_set) =>
        {
            Err(Error::spec(
                format!("{}values.expiry", p.prefix),
                "applies to the built-in `set` command (it adds `EX` to it), and no phase has \
                 one: add `{ name = \"set\" }`, or write `EX` into your template",
            ))
        }
        _ => Ok(()),
    }
}

/// The run's thresholds bound the measured phases, a phase's its own results: a limit on a
/// command label they do not have, run thresholds without a measured phase, or a phase
/// with thresholds whose name another phase has (the report names them by phase) is an
/// error.
fn thresholds_apply(phases: &[Phase], run: Option<&Thresholds>) -> Result<()> {
    if let Some(t) = run {
        let measured: Vec<&Phase> = phases.iter().filter(|p| p.spec.measured).collect();
        if measured.is_empty() {
            return Err(Error::spec(
                "thresholds",
                "bound the measured phases' results, and every phase has `measured = false`: \
                 give the phases their own `thresholds` instead",
            ));
        }
        check_labels(&t.budget, &measured, "thresholds")?;
    }
    for (i, p) in phases.iter().enumerate() {
        let Some(t) = &p.spec.thresholds else {
            continue;
        };
        let path = format!("{}thresholds", p.prefix);
        check_labels(&t.budget, &[p], &path)?;
        if let Some(j) = (0..phases.len()).find(|&j| j != i && phases[j].spec.name == p.spec.name) {
            return Err(Error::spec(
                path,
                format!(
                    "the report names thresholds by phase, and phases[{j}] is named `{}` too: \
                     give this phase a distinct `name`",
                    p.spec.name
                ),
            ));
        }
    }
    Ok(())
}

/// The run serves one metrics endpoint and one dashboard: phases that set
/// `observe.FIELD` give one address, of the form `HOST:PORT` (`port` is an example).
fn one_address(
    phases: &[Phase],
    field: &str,
    port: &str,
    what: &str,
    of: impl Fn(&crate::spec::Observe) -> Option<&str>,
) -> Result<()> {
    let mut first: Option<(&str, String)> = None;
    for p in phases {
        let Some(address) = of(&p.spec.observe) else {
            continue;
        };
        let at = format!("{}observe.{field}", p.prefix);
        let parsed = address
            .rsplit_once(':')
            .map(|(h, port)| (h, port.parse::<u16>()));
        if !matches!(parsed, Some((h, Ok(_))) if !h.is_empty()) {
            return Err(Error::spec(
                at,
                format!("`{address}` is not HOST:PORT: give e.g. \"127.0.0.1:{port}\""),
            ));
        }
        match &first {
            Some((other, first_at)) if *other != address => {
                return Err(Error::spec(
                    at,
                    format!(
                        "`{address}` differs from `{other}` at `{first_at}`: a run serves one \
                         {what}, so phases that set it give the same address"
                    ),
                ))
            }
            Some(_) => {}
            None => first = Some((address, at)),
        }
    }
    Ok(())
}

/// A run sends to one StatsD server, named alike by every phase that names one.
fn one_statsd(phases: &[Phase]) -> Result<()> {
    let mut first: Option<(&crate::spec::Statsd, String)> = None;
    for p in phases {
        let Some(s) = &p.spec.observe.statsd else {
            continue;
        };
        let at = format!("{}observe.statsd", p.prefix);
        match &first {
            Some((other, first_at)) if *other != s => {
                return Err(Error::spec(
                    at,
                    format!(
                        "differs from `{first_at}`: a run sends its metrics to one StatsD \
                         server, so phases that set it give the same settings"
                    ),
                ))
            }
            Some(_) => {}
            None => first = Some((s, at)),
        }
    }
    Ok(())
}

/// Phases with the same TLS settings share one client configuration: it is built once per run
/// and every connection of every such phase uses it.
fn share_tls_configs(phases: &mut [Phase]) {
    for i in 1..phases.len() {
        let (earlier, rest) = phases.split_at_mut(i);
        let phase = &mut rest[0];
        let Some(tls) = phase.connect.tls.as_mut() else {
            continue;
        };
        let shared = earlier.iter().find_map(|e| {
            let config = &e.connect.tls.as_ref()?.config;
            (e.spec.target.tls == phase.spec.target.tls).then(|| std::sync::Arc::clone(config))
        });
        if let Some(config) = shared {
            tls.config = config;
        }
    }
}

/// A limit of `budget` on a command label that `phases` (those whose results it bounds) do
/// not have: an error before any traffic, since the report could not have it.
fn check_labels(budget: &Budget, phases: &[&Phase], path: &str) -> Result<()> {
    let mut labels: Vec<&str> = Vec::new();
    for c in phases.iter().flat_map(|p| &p.commands) {
        if !labels.contains(&c.label.as_str()) {
            labels.push(&c.label);
        }
    }
    match budget
        .commands
        .keys()
        .find(|l| !labels.contains(&l.as_str()))
    {
        Some(label) => Err(Error::spec(
            format!("{path}.commands.{label}"),
            format!(
                "no {}command is labelled `{label}`: allowed are {}",
                if path.starts_with("phases") {
                    "phase's "
                } else {
                    "measured "
                },
                labels.join(", ")
            ),
        )),
        None => Ok(()),
    }
}

/// Two phases writing one file would leave only the last one's report: refuse it (a
/// top-level `output` is inherited by every phase).
fn distinct_files(phases: &[Phase]) -> Result<()> {
    let mut seen: Vec<(&str, &str)> = Vec::new();
    for p in phases {
        let Some(path) = p.spec.output.memtier.as_deref() else {
            continue;
        };
        if let Some((_, first)) = seen.iter().find(|(q, _)| *q == path) {
            return Err(Error::spec(
                format!("{}output.memtier", p.prefix),
                format!(
                    "`{path}` is also written by {}: give each phase its own file (set \
                     `output` in the phases rather than at the top level)",
                    first.trim_end_matches('.')
                ),
            ));
        }
        seen.push((path, &p.prefix));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::Endpoint;
    use crate::spec::{Arg, Arrivals, Distribution, RateRamp, Requests, SpecDuration};

    fn err(toml: &str) -> String {
        Workload::from_toml_str(toml).unwrap_err().to_string()
    }

    #[test]
    fn an_output_needs_a_path() {
        for (toml, field, text) in [
            (
                "output = { memtier = ' ' }",
                "`output.memtier`",
                "empty path",
            ),
            (
                "output = { failed_keys = '' }",
                "`output.failed_keys`",
                "empty path",
            ),
            (
                "target = { cluster = true }\noutput = { client_stats = 'c' }",
                "`output.client_stats`",
                "cluster mode",
            ),
            ("output = { hdr = 'x' }", "output", "unknown field `hdr`"),
        ] {
            let e = err(toml);
            assert!(e.contains(field) && e.contains(text), "{toml}: {e}");
        }
    }

    #[test]
    fn phases_inherit_from_the_base() {
        let w = Workload::from_toml_str(
            r#"
            [target]
            port = 7000
            [load]
            connections = 4
            [[phases]]
            name = "populate"
            measured = false
            commands = [{ name = "set" }]
            keys = { distribution = "sequential" }
            [[phases]]
            name = "measure"
            load = { pipeline = 8 }
            "#,
        )
        .unwrap();
        assert_eq!(w.phases.len(), 2);
        let (a, b) = (&w.phases[0].spec, &w.phases[1].spec);
        assert_eq!(
            (a.name.as_str(), a.measured, a.load.connections),
            ("populate", false, 4)
        );
        assert_eq!(a.keys.distribution, Distribution::Sequential);
        assert_eq!(
            (b.load.connections, b.load.pipeline, b.target.port),
            (4, 8, Some(7000))
        );
        assert_eq!(w.phases[1].commands.len(), 2);
    }

    #[test]
    fn cluster_mode_refuses_multi_slot_commands() {
        let e =
            err("target = { cluster = true }\ncommands = [{ name = 'get' }, { name = 'mset' }]");
        assert!(
            e.contains("commands[1].name") && e.contains("CROSSSLOT"),
            "{e}"
        );
        let e = err("target = { cluster = true }\ncommands = [{ chain = ['SET {key} v', 'RENAME {key} x:{key}'] }]");
        assert!(
            e.contains("commands[0].chain[1]") && e.contains("hash tag"),
            "{e}"
        );
        let standalone = "commands = [{ template = 'RENAME {key} x:{key}' }]";
        assert!(Workload::from_toml_str(standalone).is_ok());
        let ok = "target = { cluster = true }\nkeys = { prefix = '{k}:' }\ncommands = [{ name = 'mget' }]";
        assert!(Workload::from_toml_str(ok).is_ok());
        let e = err("target = { cluster = true, db = 2 }");
        assert!(e.contains("target.db"), "{e}");
        let w = Workload::from_toml_str("target = { cluster = true, port = 7000 }").unwrap();
        assert_eq!(w.to_json_value()["target"]["cluster"], true);
    }

    #[test]
    fn node_tags_are_for_clusters_and_share_one_slot_per_request() {
        let e = err("commands = [{ template = 'GET key{node_tag}:{key}' }]");
        assert!(
            e.contains("commands[0].template") && e.contains("target.cluster"),
            "{e}"
        );
        let mset = "target = { cluster = true }\ncommands = [{ template = \
                    'MSET a{node_tag}:{rand:0..9} 1 b{node_tag}:{key} 2' }]";
        let w = Workload::from_toml_str(mset).unwrap();
        assert!(w.phases[0].binds_connections_to_nodes());
        let plain = Workload::from_toml_str("target = { cluster = true }").unwrap();
        assert!(!plain.phases[0].binds_connections_to_nodes());
    }

    #[test]
    fn a_cursor_template_is_two_commands_and_checked() {
        let w = Workload::from_toml_str(
            "commands = [{ template = 'HSCAN h {cursor} COUNT 5', max_iterations = 3 }]\n\
             load = { pipeline = 1 }",
        )
        .unwrap();
        let p = &w.phases[0];
        let labels: Vec<&str> = p.commands.iter().map(|c| c.label.as_str()).collect();
        assert_eq!(labels, ["HSCAN 0", "HSCAN <cursor>"]);
        assert_eq!(p.commands[0].args[2], Arg::Lit(b"0"[..].into()));
        assert_eq!(p.commands[1].args[2], Arg::Cursor);
        assert_eq!(p.mix[0].cursor, Some(3));
        for (spec, field, text) in [
            (
                "commands = [{ template = 'SCAN {cursor}' }]\nload = { pipeline = 2 }",
                "commands[0].template",
                "pipeline = 1",
            ),
            (
                "commands = [{ template = 'SCAN {cursor}' }, { template = 'SSCAN s {cursor}' }]\n\
                 load = { pipeline = 1 }",
                "commands[1].template",
                "one command per phase",
            ),
            (
                "commands = [{ chain = ['SCAN {cursor}'] }]",
                "commands[0].chain",
                "template",
            ),
            (
                "commands = [{ template = 'GET x{cursor}' }]",
                "commands[0].template",
                "whole argument",
            ),
            (
                "commands = [{ template = 'GET {key}', max_iterations = 2 }]",
                "commands[0].max_iterations",
                "{cursor}",
            ),
        ] {
            let e = err(spec);
            assert!(e.contains(field) && e.contains(text), "{spec}: {e}");
        }
    }

    #[test]
    fn idle_and_keepalive_are_checked() {
        let e = err("[load]\nidle = true\nrequests = 5");
        assert!(
            e.contains("load.idle") && e.contains("load.requests"),
            "{e}"
        );
        let e = err("[load]\nidle = true\nrate = 5.0");
        assert!(e.contains("load.idle") && e.contains("load.rate"), "{e}");
        let e = err("target = { cluster = true }\nload = { keepalive = false }");
        assert!(e.contains("load.keepalive") && e.contains("cluster"), "{e}");
        let e = err("target = { cluster = true }\nload = { reconnect = { every = 5 } }");
        assert!(e.contains("load.reconnect") && e.contains("cluster"), "{e}");
        for (spec, field, text) in [
            (
                "load = { reconnect = { every = 0 } }",
                "load.reconnect.every",
                "1 to",
            ),
            (
                "load = { reconnect = { backoff = 0.0 } }",
                "load.reconnect.backoff",
                "0.01 to 1000",
            ),
            (
                "load = { reconnect = { delay = '2s', max_delay = '1s' } }",
                "load.reconnect.max_delay",
                "shorter than reconnect.delay",
            ),
            (
                "load = { reconnect = { delay = '2h' } }",
                "load.reconnect.delay",
                "0s to 1h",
            ),
            (
                "load = { open_jitter = ['2ms', '1ms'] }",
                "load.open_jitter",
                "MIN <= MAX",
            ),
            (
                "load = { reconnect = { tries = 1 } }",
                "tries",
                "unknown field",
            ),
            (
                "load = { retry = { backoff = 0.5 } }",
                "load.retry.backoff",
                "1 to 1000",
            ),
            (
                "load = { retry = { delay = '61s' } }",
                "load.retry.delay",
                "0s to 60s",
            ),
            (
                "load = { retry = { on = ['BUSY', ''] } }",
                "load.retry.on",
                "not an error kind",
            ),
            (
                "target = { cluster = true }\nload = { retry = {} }",
                "load.retry",
                "cluster",
            ),
        ] {
            let e = err(spec);
            assert!(e.contains(field) && e.contains(text), "{spec}: {e}");
        }
        let w = Workload::from_toml_str("[load]\nidle = true\nduration = '1s'").unwrap();
        assert_eq!(
            w.phases[0].spec.load.request_budget(&w.phases[0].spec.keys),
            Some(0)
        );
        // Defaults are not written out in the normalized spec.
        let json = Workload::from_toml_str("").unwrap().to_json_value();
        assert!(json["load"].get("keepalive").is_none() && json["load"].get("idle").is_none());
    }

    #[test]
    fn errors_name_the_field_and_value() {
        let e = err("[load]\nconnections = 0");
        assert!(
            e.contains("load.connections") && e.contains("0 is out of range"),
            "{e}"
        );
        let e = err("[load]\nconnections = \"many\"");
        assert!(e.contains("load.connections") && e.contains("many"), "{e}");
        let e = err("[load]\nconections = 5");
        assert!(e.contains("conections") && e.contains("connections"), "{e}");
        let e = err("[keys]\ndistribution = \"spiral\"");
        assert!(
            e.contains("keys.distribution") && e.contains("spiral"),
            "{e}"
        );
        let e = err("[[phases]]\nname='a'\n[[phases]]\nname='b'\nload={pipeline=0}");
        assert!(e.contains("phases[1].load.pipeline"), "{e}");
        // A single workload with a name has no phases: paths carry no phase prefix.
        let e = err("name = 'solo'\n[load]\npipeline = 0");
        assert!(e.contains("at `load.pipeline`"), "{e}");
        let e = err("[[phases]]\nname = 'only'\nload = { pipeline = 0 }");
        assert!(e.contains("at `phases[0].load.pipeline`"), "{e}");
        let e = err("[[commands]]\ntemplate = \"GET {kee}\"");
        assert!(
            e.contains("commands[0].template") && e.contains("{kee}"),
            "{e}"
        );
        let e = err("[values]\nsize = [100, 10]");
        assert!(e.contains("values.size"), "{e}");
        let e = err("[load]\nduration = \"soon\"");
        assert!(e.contains("load.duration") && e.contains("soon"), "{e}");
        let e = err("[target]\nurl = \"redis://h\"\nport = 1");
        assert!(e.contains("target.url"), "{e}");
        // Rates too low to schedule (a gap of 1e20 s overflows the clock).
        for (toml, field) in [
            ("[load]\nrate = 1e-20", "load.rate"),
            (
                "[load]\nrate_ramp = { start = 0.0001, end = 10, step = 1, step_duration = '1s' }",
                "load.rate_ramp.start",
            ),
            ("[slo]\nbudget_ms = 5\nstart_rate = 1e-9", "slo.start_rate"),
        ] {
            let e = err(toml);
            assert!(
                e.contains(field) && e.contains("0.001 to 100000000"),
                "{toml}: {e}"
            );
        }
        Workload::from_toml_str("[load]\nrate = 0.001").unwrap();
    }

    #[test]
    fn ramps_are_checked_and_set_the_duration() {
        let w = Workload::from_toml_str(
            "[load]\nconnections = 20\nrate_ramp = { start = 500, end = 2000, step = 500, step_duration = '2s' }\n\
             connections_ramp = { start = 5, step = 5, step_duration = '1s' }",
        )
        .unwrap();
        let load = &w.phases[0].spec.load;
        let ramp = load.rate_ramp.unwrap();
        assert_eq!(ramp.rates(), vec![500.0, 1000.0, 1500.0, 2000.0]);
        assert_eq!(
            load.connections_ramp.unwrap().counts(20),
            vec![5, 10, 15, 20]
        );
        // Neither duration nor requests: the longer ramp's length (4 steps of 2 s).
        assert_eq!(load.duration.map(|d| d.0.as_secs()), Some(8));
        assert_eq!(
            (load.rate_at(0.5), load.rate_at(7.9), load.rate_at(99.0)),
            (Some(500.0), Some(2000.0), Some(2000.0))
        );
        // Downwards, with a last step shorter than `step`.
        let r = RateRamp {
            start: 1000.0,
            end: 100.0,
            step: 400.0,
            step_duration: SpecDuration(std::time::Duration::from_secs(1)),
        };
        assert_eq!(r.rates(), vec![1000.0, 600.0, 200.0, 100.0]);
        let e = err(
            "[load]\nrate = 5\nrate_ramp = { start = 1, end = 2, step = 1, step_duration = '1s' }",
        );
        assert!(
            e.contains("load.rate_ramp") && e.contains("not both"),
            "{e}"
        );
        let e = err("[load]\nrate_ramp = { start = 1, end = 2, step = 0, step_duration = '1s' }");
        assert!(
            e.contains("load.rate_ramp.step") && e.contains("0 is out of range"),
            "{e}"
        );
        let e =
            err("[load]\nrate_ramp = { start = 1, end = 2, step = 1, step_duration = '1500ms' }");
        assert!(
            e.contains("load.rate_ramp.step_duration") && e.contains("whole number of seconds"),
            "{e}"
        );
        let e = err("[load]\nrate_ramp = { start = 1, end = 1e6, step = 1, step_duration = '1s' }");
        assert!(
            e.contains("load.rate_ramp.step") && e.contains("at most 10000"),
            "{e}"
        );
        let e = err("[load]\nrate_ramp = { start = 1, end = 2, step_duration = '1s' }");
        assert!(e.contains("load.rate_ramp") && e.contains("step"), "{e}");
        let e = err("[load]\nconnections = 10\nconnections_ramp = { start = 11, step = 1, step_duration = '1s' }");
        assert!(
            e.contains("load.connections_ramp.start")
                && e.contains("11 is out of range")
                && e.contains("load.connections"),
            "{e}"
        );
        let e = err("[load]\nconnections_ramp = { start = 1, step = 0, step_duration = '1s' }");
        assert!(e.contains("load.connections_ramp.step"), "{e}");
        let e = err("[load]\nconnections_ramp = { start = 1, step = 1, step_duration = '0s' }");
        assert!(e.contains("load.connections_ramp.step_duration"), "{e}");
        let e = err("[load]\narrivals = 'poisson'");
        assert!(
            e.contains("load.arrivals") && e.contains("rate_ramp"),
            "{e}"
        );
        assert!(e.contains("\"poisson\""), "{e}");
        // An SLO search's steps are open loop: arrivals applies to each.
        let w =
            Workload::from_toml_str("[load]\narrivals = 'poisson'\n[slo]\nbudget_ms = 5").unwrap();
        assert_eq!(w.phases[0].spec.load.arrivals, Some(Arrivals::Poisson));
        assert!(Workload::from_toml_str("[load]\narrivals = 'poisson'\nrate_ramp = { start = 1, end = 2, step = 1, step_duration = '1s' }").is_ok());
        // A requests budget keeps the run's length to it.
        let w = Workload::from_toml_str("[load]\nrequests = 10\nconnections_ramp = { start = 1, step = 1, step_duration = '1s' }").unwrap();
        assert_eq!(w.phases[0].spec.load.duration, None);
    }

    #[test]
    fn rate_profiles_are_checked_and_set_the_duration() {
        let w = Workload::from_toml_str(
            "[load]\nrate_profile = { rates = [300, 50, 1200], step_duration = '2s' }",
        )
        .unwrap();
        let load = &w.phases[0].spec.load;
        assert!(load.open_loop());
        // Three steps of 2 s; the last rate holds past them.
        assert_eq!(load.duration.map(|d| d.0.as_secs()), Some(6));
        assert_eq!(
            (
                load.rate_at(1.9),
                load.rate_at(2.0),
                load.rate_at(5.0),
                load.rate_at(60.0)
            ),
            (Some(300.0), Some(50.0), Some(1200.0), Some(1200.0))
        );
        assert_eq!(load.rate_at_step(1), Some(50.0));
        for (toml, field, says) in [
            (
                "rate = 5\nrate_profile = { rates = [1], step_duration = '1s' }",
                "load.rate_profile",
                "not load.rate too",
            ),
            (
                "rate_ramp = { start = 1, end = 2, step = 1, step_duration = '1s' }\n\
                 rate_profile = { rates = [1], step_duration = '1s' }",
                "load.rate_profile",
                "not load.rate_ramp too",
            ),
            (
                "rate_profile = { rates = [], step_duration = '1s' }",
                "load.rate_profile.rates",
                "0 steps: allowed are 1 to 10000",
            ),
            (
                "rate_profile = { rates = [5, 0, 5], step_duration = '1s' }",
                "load.rate_profile.rates[1]",
                "0 is out of range",
            ),
            (
                "rate_profile = { rates = [5], step_duration = '500ms' }",
                "load.rate_profile.step_duration",
                "whole number of seconds",
            ),
            (
                "rate_profile = { rates = [5], step_duration = '1s' }\nrefill = 'batch'",
                "load.refill",
                "rate_profile",
            ),
        ] {
            let e = err(&format!("[load]\n{toml}"));
            assert!(e.contains(field) && e.contains(says), "{toml}: {e}");
        }
        let e = err(
            "[load]\nrate_profile = { rates = [5], step_duration = '1s' }\n[slo]\nbudget_ms = 5",
        );
        assert!(e.contains("load.rate_profile") && e.contains("slo"), "{e}");
    }

    #[test]
    fn slo_fields_are_checked() {
        let w = Workload::from_toml_str("[slo]\nbudget_ms = 2").unwrap();
        let slo = w.phases[0].spec.slo.unwrap();
        assert_eq!(
            (slo.percentile, slo.max_error_rate, slo.min_achieved),
            (99.0, 0.001, 0.95)
        );
        assert_eq!(
            (slo.start_rate, slo.max_steps, slo.step_duration.0.as_secs()),
            (1000.0, 12, 5)
        );
        let e = err("[slo]\npercentile = 99");
        assert!(e.contains("slo") && e.contains("budget_ms"), "{e}");
        for (field, bad) in [
            ("percentile", "0"),
            ("percentile", "100.5"),
            ("budget_ms", "-1"),
            ("max_error_rate", "2"),
            ("min_achieved", "0"),
            ("start_rate", "0"),
            ("max_rate", "10"),
            ("max_steps", "0"),
            ("precision", "0"),
        ] {
            let mut fields = vec![("budget_ms", "1"), ("start_rate", "100")];
            fields.retain(|(f, _)| *f != field);
            fields.push((field, bad));
            let table: Vec<String> = fields.iter().map(|(f, v)| format!("{f} = {v}")).collect();
            let e = err(&format!("[slo]\n{}", table.join("\n")));
            assert!(
                e.contains(&format!("slo.{field}")) && e.contains(bad),
                "{field}: {e}"
            );
        }
        let e = err("[slo]\nbudget_ms = 1\nstep_duration = '100ms'");
        assert!(e.contains("slo.step_duration"), "{e}");
        let e = err("[slo]\nbudget_ms = 1\n[load]\nrate = 100");
        assert!(e.contains("load.rate") && e.contains("slo"), "{e}");
        let e = err("[[phases]]\nname = 'a'\n[[phases]]\nname = 'b'\nload = { duration = '1s' }\nslo = { budget_ms = 1 }");
        assert!(e.contains("phases[1].load.duration"), "{e}");
        let e = err("[slo]\nbudget_ms = 1\nbudget = 2");
        assert!(e.contains("budget"), "{e}");
    }

    #[test]
    fn the_normalized_spec_parses_back_to_the_same_workload() {
        let w = Workload::from_toml_str(
            "[target]\npassword='pw'\n[[phases]]\nname='a'\nmeasured=false\n[[phases]]\nname='b'\nload={pipeline=3}",
        )
        .unwrap();
        let back = Workload::from_json_value(w.to_json_value()).unwrap();
        let specs = |w: &Workload| w.phases.iter().map(|p| p.spec.clone()).collect::<Vec<_>>();
        assert_eq!(specs(&back), specs(&w));
        assert_eq!(back.phases[0].spec.target.password.as_deref(), Some("pw"));
    }

    #[test]
    fn one_phase_with_thresholds_of_its_own_reads_back_as_a_phase() {
        // Found by fuzz/fuzz_targets/spec.rs: written as the spec's top level, an unmeasured
        // phase's thresholds read back as the run's, which refuse a run measuring nothing.
        for measured in [false, true] {
            let w = Workload::from_toml_str(&format!(
                "[[phases]]\nname = \"config\"\nmeasured = {measured}\n\
                 load = {{ connections = 1, requests = 1 }}\nthresholds = {{ error_rate = 0 }}\n"
            ))
            .unwrap();
            let again = Workload::from_json_value(w.to_json_value()).unwrap();
            assert_eq!(again.to_json_value(), w.to_json_value());
            assert!(again.thresholds.is_none());
            assert!(again.phases[0].spec.thresholds.is_some());
        }
        // Without thresholds of its own, one phase is still the spec's top level.
        let w = Workload::from_toml_str("[load]\nrequests = 1\n[thresholds]\nerror_rate = 0\n")
            .unwrap();
        let json = w.to_json_value();
        assert!(json.get("phases").is_none() && json.get("thresholds").is_some());
    }

    #[test]
    fn redaction_hides_passwords() {
        let w = Workload::from_toml_str("[target]\nurl = \"redis://bob:hunter2@h:1/0\"").unwrap();
        let text = w.redacted().to_string();
        assert!(
            !text.contains("hunter2") && text.contains("bob:***@h"),
            "{text}"
        );
        let w = Workload::from_toml_str("[target]\npassword = \"hunter2\"").unwrap();
        assert!(!w.redacted().to_string().contains("hunter2"));
        let w = Workload::from_toml_str(
            "events = [{ at = 1, drill = 'replica-resync', replica = 'redis://:hunter2@h:1' }]",
        )
        .unwrap();
        assert!(!w.redacted().to_string().contains("hunter2"));
        // The user info ends at the last `@`, as the redaction takes it: a `/` in a password
        // is the password's, and the database after it is read.
        let w = Workload::from_toml_str("[target]\nurl = 'redis:///:hunter2/x@[::1]:7/3'").unwrap();
        assert_eq!(w.phases[0].connect.password.as_deref(), Some("hunter2/x"));
        assert_eq!(w.phases[0].connect.db, 3);
        // Found by fuzz/fuzz_targets/url.rs: the redaction took a `?` before `://` for the
        // query's start, and a database text after a `/` of the password was quoted.
        for url in [
            "?rediedis://:hunter2XY@[::sedis1/://",
            "redis+tls://u:hunter2@h:1",
            "redis:///:hunter2@[::1]:000/0",
        ] {
            let e = Workload::from_toml_str(&format!("[target]\nurl = '{url}'"))
                .unwrap_err()
                .to_string();
            assert!(e.contains(":***@") && !e.contains("hunter2"), "{e}");
        }
    }

    #[test]
    fn phases_with_the_same_tls_settings_share_one_client_configuration() {
        let w = Workload::from_toml_str(
            "[target]\nurl = 'rediss://h:1'\n[[phases]]\nname='a'\n[[phases]]\nname='b'\n\
             [[phases]]\nname='c'\ntarget={tls={insecure=true}}",
        )
        .unwrap();
        let config = |i: usize| &w.phases[i].connect.tls.as_ref().unwrap().config;
        assert!(std::sync::Arc::ptr_eq(config(0), config(1)));
        assert!(!std::sync::Arc::ptr_eq(config(0), config(2)));
        assert!(w.phases[2].connect.tls.as_ref().unwrap().insecure);
        // TLS settings appear in the normalized spec only when used.
        assert!(w.redacted()["phases"][0]["target"].get("tls").is_none());
        assert_eq!(w.redacted()["phases"][2]["target"]["tls"]["insecure"], true);
        let plain = Workload::from_toml_str("").unwrap();
        assert!(plain.phases[0].connect.tls.is_none());
        assert!(plain.redacted()["target"].get("tls").is_none());
    }

    #[test]
    fn an_expiry_with_no_built_in_set_to_carry_it_is_refused() {
        let err = Workload::from_toml_str(
            "values={expiry=[100,200]}\n[[commands]]\ntemplate='SET {key} {value}'",
        )
        .unwrap_err();
        assert_eq!(err.code(), "ERR_RESPLOAD_SPEC");
        assert!(
            err.to_string()
                .contains("`values.expiry`: applies to the built-in `set`"),
            "{err}"
        );
        // Inherited by a phase of GETs from the base, where another phase has the set: fine.
        let w = Workload::from_toml_str(
            "values={expiry=[100,200]}\n[[phases]]\ncommands=[{name='set'}]\n\
             [[phases]]\ncommands=[{name='get'}]",
        )
        .unwrap();
        assert!(w.phases[0].commands[0]
            .args
            .iter()
            .any(|a| matches!(a, Arg::Expiry(100, 200))));
    }

    #[test]
    fn overrides_touch_measured_phases_only() {
        let w = Workload::from_toml_str(
            "[[phases]]\nname='fill'\nmeasured=false\nload={requests=10}\n[[phases]]\nname='m'",
        )
        .unwrap();
        let o = w
            .with_overrides(
                Some(serde_json::json!({"target": {"port": 7001}})),
                Some(serde_json::json!({"load": {"requests": 5}})),
            )
            .unwrap();
        assert_eq!(o.phases[0].spec.load.requests, Some(Requests::Count(10)));
        assert_eq!(o.phases[1].spec.load.requests, Some(Requests::Count(5)));
        assert!(o.phases.iter().all(|p| p.spec.target.port == Some(7001)));
        // With no measured phase they would apply nowhere: refused by name; `target` still
        // applies.
        let none = Workload::from_toml_str("measured=false\nload={requests=10}").unwrap();
        let err = none
            .with_overrides(None, Some(serde_json::json!({"load": {"requests": 5}})))
            .unwrap_err();
        assert_eq!(err.code(), "ERR_RESPLOAD_SPEC");
        assert!(
            err.to_string()
                .contains("`load`: overrides other than `target`"),
            "{err}"
        );
        let t = none
            .with_overrides(Some(serde_json::json!({"target": {"port": 7001}})), None)
            .unwrap();
        assert_eq!(t.phases[0].spec.target.port, Some(7001));
    }

    #[test]
    fn an_endpoint_override_replaces_a_url_and_keeps_what_it_does_not_give() {
        let over = |toml: &str, target: serde_json::Value| {
            Workload::from_toml_str(toml)
                .unwrap()
                .with_overrides(Some(serde_json::json!({ "target": target })), None)
                .map(|w| w.phases[0].connect.clone())
        };
        let url = "[target]\nurl = 'rediss://ann:s%2Fe@cache.example:6380/3'";
        let c = over(url, serde_json::json!({"port": 7001})).unwrap();
        let tcp = |host: &str, port| Endpoint::Tcp {
            host: host.into(),
            port,
        };
        assert_eq!(c.endpoint, tcp("cache.example", 7001));
        assert_eq!(
            (c.user.as_deref(), c.password.as_deref()),
            (Some("ann"), Some("s/e"))
        );
        assert_eq!(c.db, 3);
        assert!(c.tls.is_some(), "the rediss scheme's TLS is kept");
        // What the override gives wins over the URL's.
        let c = over(
            url,
            serde_json::json!({"host": "h", "password": "p", "db": 1}),
        )
        .unwrap();
        assert_eq!(c.endpoint, tcp("h", 6380));
        assert_eq!((c.password.as_deref(), c.db), (Some("p"), 1));
        let c = over(url, serde_json::json!({"unix": "/s.sock"})).unwrap();
        assert_eq!(c.endpoint, Endpoint::Unix("/s.sock".into()));
        assert!(c.tls.is_none(), "TLS does not run over a Unix socket");
        assert_eq!((c.password.as_deref(), c.db), (Some("s/e"), 3));
        // A host/port/unix target gives way to a URL, and host/port to a socket and back.
        let c = over(
            "[target]\nport = 1",
            serde_json::json!({"url": "redis://h:2"}),
        )
        .unwrap();
        assert_eq!(c.endpoint, tcp("h", 2));
        let c = over("[target]\nunix = '/s'", serde_json::json!({"port": 9})).unwrap();
        assert_eq!(c.endpoint, tcp("127.0.0.1", 9));
        let c = over("[target]\nport = 1", serde_json::json!({"unix": "/s"})).unwrap();
        assert_eq!(c.endpoint, Endpoint::Unix("/s".into()));
        // Overrides that touch no address or credential leave the URL as it is.
        let w = Workload::from_toml_str(url)
            .unwrap()
            .with_overrides(
                Some(serde_json::json!({"target": {"cluster": false}})),
                None,
            )
            .unwrap();
        assert!(w.phases[0].spec.target.url.is_some());
    }
}
