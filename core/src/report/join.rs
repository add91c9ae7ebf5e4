//! Joining the reports of a workload's phases, each run on its own (one after the other,
//! as the Ray engine runs them with a barrier between phases), into the one report a run of
//! the whole workload gives ([`Report::join`]).
//!
//! The run-level figures are built from the phases as a run builds them
//! ([`Report::add_phase`]): the timeline and server samples one after the other, the longest
//! gap, the client's cost, the validity. The totals, per command and per node, are the
//! measured phases' added as merging adds hosts (histograms added, percentiles read from the
//! sum, moments from exact sums), over the measured phases' seconds.

use super::merge::{client_lag, first_difference, merge_maps, merge_stats, merge_unsent};
use super::{Budget, ClientStats, HostReport, Report, ShardOf, Stats, Threshold};
use crate::{Error, Result};
use serde_json::Value as Json;
use std::collections::BTreeMap;

/// The keys of a spec's `[thresholds]` that are not limits.
const THRESHOLD_SETTINGS: [&str; 2] = ["abort_on_fail", "delay_abort_eval"];

impl Report {
    /// The report of one run of `workload` (its normalized JSON, secrets redacted: what a
    /// report's `workload` holds) from the reports of its phases, each run as a workload of
    /// its own (the spec's `phases[i]`), in order: a report per phase, each of one host or
    /// already merged over hosts ([`Report::merge`]). Fewer reports than phases are taken
    /// when the last was stopped early (interrupted, failed or stopped by a threshold): the
    /// phases so far, as a stopped run holds them.
    ///
    /// The run's `[thresholds]` are taken from `workload` and judged on the joined figures,
    /// each phase's own are kept under its name (`phases.NAME.p99_ms`). One host's shards of
    /// the phases (`Workload::shard`, the same index of each) join into that host's shard of
    /// the workload, which merges with the other hosts' as a shard of a whole run does.
    /// Reports that are not the phases of `workload` in order (another phase's settings,
    /// several phases in one, different shards or hosts) are refused with an error naming
    /// what differs.
    pub fn join(workload: &Json, phases: &[Report]) -> Result<Report> {
        check_joinable(workload, phases)?;
        let first = &phases[0];
        let several = workload.get("phases").is_some();
        let mut run = Report {
            schema_version: first.schema_version,
            respload_version: first.respload_version.clone(),
            started_at: first.started_at,
            seed: first.seed,
            server: first.server.clone(),
            workload: workload.clone(),
            host: match phases.iter().all(|r| r.host == first.host) {
                true => first.host.clone(),
                false => String::new(),
            },
            start_at: first.start_at,
            start_skew_ms: first.start_skew_ms,
            ..Report::default()
        };
        if let Some(of) = &first.shard {
            run.shard = Some(ShardOf {
                workload: workload.clone(),
                ..of.clone()
            });
            // This host's share of every phase.
            run.workload = match several {
                true => shard_workload(workload, phases),
                false => first.workload.clone(),
            };
        }
        for r in phases {
            let mut phase = r.phases[0].clone();
            if several {
                // As a run of the whole workload has it: the phase's settings, its own
                // thresholds among them.
                phase.workload = r.workload.clone();
            }
            if phase.server.is_none() && r.server.address != first.server.address {
                phase.server = Some(r.server.clone());
            }
            run.add_phase(phase);
        }
        run.end_phases();
        let measured: Vec<&Report> = phases.iter().filter(|r| r.phases[0].measured).collect();
        let secs = run.duration_s;
        run.totals = at_rate(merge_stats(measured.iter().map(|r| &r.totals)), secs);
        run.commands = maps_at_rate(merge_maps(measured.iter().map(|r| &r.commands)), secs);
        run.nodes = maps_at_rate(merge_maps(measured.iter().map(|r| &r.nodes)), secs);
        run.unsent = merge_unsent(measured.iter().map(|r| r.unsent.as_ref()));
        run.client_lag_ms = client_lag(
            measured
                .iter()
                .map(|r| (&r.totals, r.client_lag_ms.as_ref())),
        );
        run.slo = phases.iter().rev().find_map(|r| r.slo.clone());
        run.interrupted = phases.iter().any(|r| r.interrupted);
        run.error = joined(phases, |r| r.error.as_ref());
        run.stopped_by = joined(phases, |r| r.stopped_by.as_ref());
        run.hosts = join_hosts(phases);
        run.thresholds = match several {
            true => thresholds_of(workload, phases)?,
            false => first.thresholds.clone(),
        };
        run.judge_thresholds();
        Ok(run)
    }
}

/// An error naming what makes the reports not the phases of `workload` in order.
fn check_joinable(workload: &Json, reports: &[Report]) -> Result<()> {
    let specs: Vec<&Json> = match workload.get("phases").and_then(Json::as_array) {
        Some(all) => all.iter().collect(),
        None => vec![workload],
    };
    let Some(first) = reports.first() else {
        return Err(Error::spec("reports", "no report to join"));
    };
    if reports.len() > specs.len() {
        return Err(Error::spec(
            format!("reports[{}]", specs.len()),
            format!(
                "{} reports for a workload of {} phase(s): one report per phase",
                reports.len(),
                specs.len()
            ),
        ));
    }
    for (i, (r, spec)) in reports.iter().zip(&specs).enumerate() {
        let at = |field: &str| format!("reports[{i}].{field}");
        if r.schema_version != first.schema_version {
            return Err(Error::spec(
                at("schema_version"),
                format!(
                    "{} differs from reports[0]'s {}: join reports of one schema version",
                    r.schema_version, first.schema_version
                ),
            ));
        }
        let share = |r: &Report| r.shard.as_ref().map(|s| (s.index, s.count));
        if share(r) != share(first) {
            let name = |s: Option<(u32, u32)>| match s {
                Some((i, n)) => format!("shard {i}/{n}"),
                None => "no shard".to_string(),
            };
            return Err(Error::spec(
                at("shard"),
                format!(
                    "{} differs from reports[0]'s {}: join one host's phases (or the \
                     merged ones)",
                    name(share(r)),
                    name(share(first))
                ),
            ));
        }
        if r.phases.len() != 1 {
            return Err(Error::spec(
                at("phases"),
                format!(
                    "holds {} phases: join the reports of runs of one phase each",
                    r.phases.len()
                ),
            ));
        }
        let settings = r.shard.as_ref().map_or(&r.workload, |s| &s.workload);
        if settings != *spec {
            let path = match specs.len() {
                1 => "workload".to_string(),
                _ => format!("workload.phases[{i}]"),
            };
            return Err(Error::spec(
                at("workload"),
                format!(
                    "differs from the {path}{}: join the reports of the phases of one \
                     workload, in order",
                    first_difference(spec, settings)
                        .map(|p| format!(" (at `{p}`)"))
                        .unwrap_or_default()
                ),
            ));
        }
        let shards = |r: &Report| r.hosts.iter().map(|h| h.shard).collect::<Vec<_>>();
        if shards(r) != shards(first) {
            return Err(Error::spec(
                at("hosts"),
                format!(
                    "{} host(s) differ from reports[0]'s {}: join phases run by the same hosts",
                    r.hosts.len(),
                    first.hosts.len()
                ),
            ));
        }
    }
    let last = &reports[reports.len() - 1];
    let stopped = last.interrupted || last.error.is_some() || last.stopped_by.is_some();
    if reports.len() < specs.len() && !stopped {
        let missing: Vec<&str> = specs[reports.len()..]
            .iter()
            .map(|s| s.get("name").and_then(Json::as_str).unwrap_or("?"))
            .collect();
        return Err(Error::spec(
            "reports",
            format!(
                "phase(s) {} missing: a report per phase, in order (only a run stopped early \
                 ends before its last phase)",
                missing.join(", ")
            ),
        ));
    }
    Ok(())
}

/// A host's share of a workload of several phases: each phase's shard, with the run's
/// thresholds.
fn shard_workload(workload: &Json, reports: &[Report]) -> Json {
    let mut out = serde_json::json!({
        "phases": reports.iter().map(|r| r.workload.clone()).collect::<Vec<_>>()
    });
    if let Some(t) = workload.get("thresholds") {
        out["thresholds"] = t.clone();
    }
    out
}

/// Stats over `secs` measured seconds: the rate of the phases one after the other, not
/// their rates added as hosts' are.
fn at_rate(mut stats: Stats, secs: f64) -> Stats {
    stats.ops_per_sec = match secs > 0.0 {
        true => stats.ops as f64 / secs,
        false => 0.0,
    };
    stats
}

fn maps_at_rate(map: BTreeMap<String, Stats>, secs: f64) -> BTreeMap<String, Stats> {
    map.into_iter()
        .map(|(k, s)| (k, at_rate(s, secs)))
        .collect()
}

/// The phases' messages (`error`, `stopped_by`), each after its phase's name.
fn joined(reports: &[Report], f: impl Fn(&Report) -> Option<&String>) -> Option<String> {
    let all: Vec<String> = reports
        .iter()
        .filter_map(|r| Some(format!("phase `{}`: {}", r.phases[0].name, f(r)?)))
        .collect();
    (!all.is_empty()).then(|| all.join("; "))
}

/// The run's thresholds as a run lists them, not yet judged: the workload's own (on the
/// measured phases together), then each phase's, which its report judged as its run's,
/// under the phase's name.
fn thresholds_of(workload: &Json, reports: &[Report]) -> Result<Vec<Threshold>> {
    let mut out = match workload.get("thresholds").filter(|t| !t.is_null()) {
        Some(t) => Threshold::of(
            &Budget::from_json_at(t, "workload.thresholds", &THRESHOLD_SETTINGS)?,
            None,
        ),
        None => Vec::new(),
    };
    for r in reports {
        let name = &r.phases[0].name;
        out.extend(r.thresholds.iter().map(|t| Threshold {
            name: format!("phases.{name}.{}", t.name),
            phase: Some(name.clone()),
            ..t.clone()
        }));
    }
    Ok(out)
}

/// Each host over the phases: its requests and errors summed, its cost added, its start
/// the first phase's, interrupted or failed in any phase.
fn join_hosts(reports: &[Report]) -> Vec<HostReport> {
    (0..reports[0].hosts.len())
        .map(|i| {
            let parts: Vec<&HostReport> = reports.iter().map(|r| &r.hosts[i]).collect();
            let mut client = ClientStats::default();
            let mut requests = 0.0;
            for h in &parts {
                client.add(&h.client);
                requests += requests_of(&h.client);
            }
            let cpu = client.cpu_user_s + client.cpu_sys_s;
            client.cpu_s_per_million = cpu / requests.max(1.0) * 1e6;
            let errors: Vec<String> = reports
                .iter()
                .zip(&parts)
                .filter_map(|(r, h)| {
                    Some(format!(
                        "phase `{}`: {}",
                        r.phases[0].name,
                        h.error.as_ref()?
                    ))
                })
                .collect();
            HostReport {
                // The joined runs' seconds one after the other, as the joined timeline's.
                timeline: joined_rows(&parts),
                ops: parts.iter().map(|h| h.ops).sum(),
                errors: parts.iter().map(|h| h.errors).sum(),
                interrupted: parts.iter().any(|h| h.interrupted),
                error: (!errors.is_empty()).then(|| errors.join("; ")),
                client,
                ..parts[0].clone()
            }
        })
        .collect()
}

/// A host's rows across the joined runs, `t` continuing from one run's last row.
fn joined_rows(parts: &[&HostReport]) -> Vec<super::HostRow> {
    let mut out: Vec<super::HostRow> = Vec::new();
    for h in parts {
        let offset = out.last().map_or(0.0, |r| r.t);
        out.extend(h.timeline.iter().map(|r| super::HostRow {
            t: r.t + offset,
            ..r.clone()
        }));
    }
    out
}

/// The requests a host's CPU per million was computed over (its every phase's), read back
/// from it (0 without CPU).
fn requests_of(c: &ClientStats) -> f64 {
    let cpu = c.cpu_user_s + c.cpu_sys_s;
    match c.cpu_s_per_million > 0.0 {
        true => (cpu / c.cpu_s_per_million * 1e6).round(),
        false => 0.0,
    }
}
