//! Merging the reports of hosts that ran one workload together (`respload merge`,
//! [`Report::merge`]) into one report, as exact as a single host's.
//!
//! Exact: counts, rates (each host's rate over its own measured time, summed), errors by
//! kind, and every latency summary that has its histogram (totals, commands, nodes, phases):
//! the histograms are added and the percentiles read from the sum; mean, stddev, min and max
//! come from the exact sums. Bounds, where no histogram was kept: percentiles of a summary
//! without one (ramp steps, `unsent`, `client_lag_ms`) and of timeline rows whose interval
//! histograms were not kept (`output.interval_histograms`) are the highest host's (an upper
//! bound); the longest gap without a successful reply is the shortest host's (an upper bound:
//! another host may have had replies during it).

use super::assemble::measured_timeline;
use super::sparse::Sparse;
use super::{
    decode_histogram, encode_histogram, percentile, ClientStats, IntervalLatency, Latency,
    PhaseReport, PrefillReport, RampStep, ReplayFidelity, Report, Snapshot, Stats, TimelineRow,
    Unsent, Validity, NS_PER_MS,
};
use crate::{Error, Result};
use serde::{Deserialize, Serialize};
use serde_json::Value as Json;
use std::collections::BTreeMap;

/// Which share of which workload a shard is (`Workload::shard`): what its report carries so
/// that [`Report::merge`] can check that it merges the shares of one workload, and all of them.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ShardOf {
    /// This shard, from 0.
    pub index: u32,
    /// How many shards the workload was split into.
    pub count: u32,
    /// The whole workload, normalized, secrets redacted.
    pub workload: Json,
}

impl ShardOf {
    /// The part of the workload's requests this shard holds (1 / `count`).
    pub fn share(&self) -> f64 {
        1.0 / f64::from(self.count.max(1))
    }
}

/// One host's part of a merged report.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct HostReport {
    /// The host's name (its report's `host`), or `host-N` when it had none.
    pub name: String,
    /// Its shard, when the reports were shards.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<u32>,
    /// The seed its run used (its report's `seed`): a shard's own, derived from the
    /// workload's `seed` or drawn by the host when the workload has none, so that each
    /// host's part can be run again. Absent for a host lost mid-run, and in reports merged
    /// before it was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
    /// When its run started, UNIX seconds.
    pub started_at: f64,
    /// How late its first request went out: after `start_at` when one was set, else after
    /// the earliest host's (ms).
    pub start_skew_ms: f64,
    /// Its measured requests.
    pub ops: u64,
    /// Its measured failed requests.
    pub errors: u64,
    /// Whether its run was stopped early or failed.
    pub interrupted: bool,
    /// Its run's error, if a phase failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// What the load generator cost on that host.
    pub client: ClientStats,
    /// Its measured seconds, one row per timeline row of its own report (`t` from its own
    /// measurement start): what each host did over the run, to set side by side. Empty in
    /// reports merged before it was recorded.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub timeline: Vec<HostRow>,
}

/// One second of one host's part (`hosts[].timeline`).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct HostRow {
    /// Seconds since its measurement began, at the end of the row (its report's `t`).
    pub t: f64,
    /// Requests per second it finished in the row.
    pub ops_per_sec: f64,
    /// Its 99th percentile latency in the row (ms).
    pub p99_ms: f64,
    /// Its failed requests in the row.
    pub errors: u64,
}

impl HostRow {
    /// A host's rows of its report's timeline.
    pub(crate) fn of(timeline: &[super::TimelineRow]) -> Vec<HostRow> {
        timeline
            .iter()
            .map(|r| HostRow {
                t: r.t,
                ops_per_sec: r.ops_per_sec,
                p99_ms: r.latency_ms.p99,
                errors: r.errors,
            })
            .collect()
    }
}

impl Report {
    /// One report of the runs of several hosts: the shards of one workload (every shard
    /// once, `--shard`), or several runs of the same workload. Reports of different
    /// workloads or schema versions are refused with an error naming what differs. See the
    /// module documentation for what is exact.
    pub fn merge(reports: &[Report]) -> Result<Report> {
        let order = check_mergeable(reports)?;
        let reports: Vec<&Report> = order.iter().map(|&i| &reports[i]).collect();
        let first = reports[0];
        let workload = match &first.shard {
            Some(of) => of.workload.clone(),
            None => first.workload.clone(),
        };
        let phase_of = |i: usize| match workload.get("phases").and_then(Json::as_array) {
            Some(all) => all.get(i).cloned().unwrap_or(Json::Null),
            None => workload.clone(),
        };
        let earliest = reports
            .iter()
            .map(|r| first_start(r))
            .fold(f64::INFINITY, f64::min);
        let observed = reports
            .iter()
            .copied()
            .find(|r| !r.server_timeline.is_empty() || !r.server_nodes.is_empty())
            .unwrap_or(first);
        let phases: Vec<PhaseReport> = (0..first.phases.len())
            .map(|i| {
                let parts: Vec<&PhaseReport> = reports.iter().map(|r| &r.phases[i]).collect();
                merge_phase(&parts, phase_of(i))
            })
            .collect();
        let client = hosts_client(reports.iter().map(|r| (&r.client, r.totals.ops)));
        let hosts = reports
            .iter()
            .enumerate()
            .map(|(i, r)| HostReport {
                name: match r.host.is_empty() {
                    true => format!("host-{i}"),
                    false => r.host.clone(),
                },
                shard: r.shard.as_ref().map(|s| s.index),
                // A lost host's report is made of its snapshots: its seed is not known.
                seed: (!r
                    .validity
                    .checks
                    .iter()
                    .any(|c| c.check == super::HOST_LOST))
                .then_some(r.seed),
                started_at: r.started_at,
                start_skew_ms: r.start_skew_ms.unwrap_or((first_start(r) - earliest) * 1e3),
                ops: r.totals.ops,
                errors: r.totals.errors,
                interrupted: r.interrupted,
                error: r.error.clone(),
                client: r.client.clone(),
                timeline: HostRow::of(&r.timeline),
            })
            .collect();
        let errors: Vec<String> = reports
            .iter()
            .zip(0..)
            .filter_map(|(r, i)| Some(format!("host {i}: {}", r.error.as_ref()?)))
            .collect();
        let seed = workload
            .get("seed")
            .and_then(Json::as_u64)
            .unwrap_or(first.seed);
        let mut thresholds = first.thresholds.clone();
        for t in &mut thresholds {
            t.stopped_run = reports.iter().any(|r| {
                r.thresholds
                    .iter()
                    .any(|o| o.name == t.name && o.stopped_run)
            });
        }
        let stopped: Vec<String> = reports
            .iter()
            .zip(0..)
            .filter_map(|(r, i)| Some(format!("host {i}: {}", r.stopped_by.as_ref()?)))
            .collect();
        let mut merged = Report {
            schema_version: first.schema_version,
            respload_version: first.respload_version.clone(),
            started_at: reports
                .iter()
                .map(|r| r.started_at)
                .fold(f64::INFINITY, f64::min),
            // As a run sums it: the merged measured phases' seconds.
            duration_s: phases
                .iter()
                .filter(|p| p.measured)
                .fold(0.0, |sum, p| sum + p.duration_s),
            interrupted: reports.iter().any(|r| r.interrupted),
            error: (!errors.is_empty()).then(|| errors.join("; ")),
            passed: false,
            thresholds,
            stopped_by: (!stopped.is_empty()).then(|| stopped.join("; ")),
            seed,
            totals: merge_stats(reports.iter().map(|r| &r.totals)),
            commands: merge_maps(reports.iter().map(|r| &r.commands)),
            nodes: merge_maps(reports.iter().map(|r| &r.nodes)),
            // From the merged phases, as a run builds it: merging the hosts' own run
            // timelines would decode every interval histogram twice.
            timeline: measured_timeline(&phases),
            client,
            server: observed.server.clone(),
            server_timeline: observed.server_timeline.clone(),
            server_load: observed.server_load.clone(),
            availability: shortest_gap(reports.iter().map(|r| &r.availability)),
            server_nodes: observed.server_nodes.clone(),
            workload,
            phases,
            slo: first.slo.clone(),
            unsent: merge_unsent(reports.iter().map(|r| r.unsent.as_ref())),
            client_lag_ms: client_lag(
                reports
                    .iter()
                    .map(|r| (&r.totals, r.client_lag_ms.as_ref())),
            ),
            validity: every_hosts_checks(reports.iter().map(|r| &r.validity)),
            host: String::new(),
            shard: None,
            start_at: first.start_at,
            start_skew_ms: None,
            hosts,
        };
        // The thresholds bound the whole workload: judged on the merged figures.
        merged.judge_thresholds();
        Ok(merged)
    }
}

/// The reports' order for merging (by shard when they are shards), or an error naming what
/// makes them not one workload's.
fn check_mergeable(reports: &[Report]) -> Result<Vec<usize>> {
    let Some(first) = reports.first() else {
        return Err(Error::spec("reports", "no report to merge"));
    };
    for (i, r) in reports.iter().enumerate().skip(1) {
        if r.schema_version != first.schema_version {
            return Err(Error::spec(
                format!("reports[{i}].schema_version"),
                format!(
                    "{} differs from reports[0]'s {}: merge reports of one schema version",
                    r.schema_version, first.schema_version
                ),
            ));
        }
        if !r.hosts.is_empty() || !first.hosts.is_empty() {
            let which = if r.hosts.is_empty() { 0 } else { i };
            return Err(Error::spec(
                format!("reports[{which}].hosts"),
                "is already a merged report: merge the hosts' own reports",
            ));
        }
        fn whole(r: &Report) -> &Json {
            r.shard.as_ref().map_or(&r.workload, |s| &s.workload)
        }
        if whole(r) != whole(first) {
            return Err(Error::spec(
                format!("reports[{i}].workload"),
                format!(
                    "differs from reports[0]'s{}: only runs of one workload merge",
                    first_difference(whole(first), whole(r))
                        .map(|p| format!(" (at `{p}`)"))
                        .unwrap_or_default()
                ),
            ));
        }
        if r.phases.len() != first.phases.len()
            || r.phases
                .iter()
                .zip(&first.phases)
                .any(|(a, b)| a.name != b.name)
        {
            let names = |r: &Report| {
                r.phases
                    .iter()
                    .map(|p| p.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            return Err(Error::spec(
                format!("reports[{i}].phases"),
                format!(
                    "[{}] differ from reports[0]'s [{}]: a report of a run that failed or was \
                     stopped before its last phase cannot be merged with complete ones",
                    names(r),
                    names(first)
                ),
            ));
        }
    }
    let mut order: Vec<usize> = (0..reports.len()).collect();
    let shards: Vec<Option<&ShardOf>> = reports.iter().map(|r| r.shard.as_ref()).collect();
    if shards.iter().all(Option::is_none) {
        return Ok(order);
    }
    if let Some(i) = shards.iter().position(Option::is_none) {
        return Err(Error::spec(
            format!("reports[{i}].shard"),
            "missing: merge either the shards of one workload or unsharded runs, not both",
        ));
    }
    let count = shards[0].map_or(0, |s| s.count);
    // Indexes seen, by shard: at most one entry per report, whatever `count` a file says.
    let mut seen: BTreeMap<u32, usize> = BTreeMap::new();
    for (i, s) in shards.iter().flatten().enumerate() {
        if s.count != count || s.index >= count {
            return Err(Error::spec(
                format!("reports[{i}].shard"),
                format!("{}/{}: reports[0] is a shard of {count}", s.index, s.count),
            ));
        }
        if let Some(j) = seen.insert(s.index, i) {
            return Err(Error::spec(
                format!("reports[{i}].shard"),
                format!("{}/{count} is also reports[{j}]: each shard once", s.index),
            ));
        }
    }
    if seen.len() as u64 != u64::from(count) {
        // The first missing indexes lie within the first `seen.len() + 10` numbers.
        let missing: Vec<String> = (0..count)
            .filter(|s| !seen.contains_key(s))
            .take(10)
            .map(|s| s.to_string())
            .collect();
        let more = u64::from(count) - seen.len() as u64 > missing.len() as u64;
        return Err(Error::spec(
            "reports",
            format!(
                "shard(s) {}{} of {count} missing: the merge of some shards is not the \
                 workload's report",
                missing.join(", "),
                if more { ", ..." } else { "" }
            ),
        ));
    }
    order.sort_by_key(|&i| shards[i].map_or(0, |s| s.index));
    Ok(order)
}

/// The first path (`a.b[2]`) where two JSON values differ.
pub(super) fn first_difference(a: &Json, b: &Json) -> Option<String> {
    match (a, b) {
        (Json::Object(x), Json::Object(y)) => {
            let keys: std::collections::BTreeSet<&String> = x.keys().chain(y.keys()).collect();
            keys.into_iter().find_map(|k| match (x.get(k), y.get(k)) {
                (Some(p), Some(q)) => first_difference(p, q).map(|rest| join(k, &rest)),
                _ => Some(k.clone()),
            })
        }
        (Json::Array(x), Json::Array(y)) if x.len() == y.len() => x
            .iter()
            .zip(y)
            .enumerate()
            .find_map(|(i, (p, q))| first_difference(p, q).map(|rest| format!("[{i}]{rest}"))),
        _ if a == b => None,
        _ => Some(String::new()),
    }
}

fn join(key: &str, rest: &str) -> String {
    match rest.starts_with('[') || rest.is_empty() {
        true => format!("{key}{rest}"),
        false => format!("{key}.{rest}"),
    }
}

/// When a report's first measured interval began, UNIX seconds.
fn first_start(r: &Report) -> f64 {
    r.phases
        .iter()
        .map(|p| p.started_at)
        .find(|&s| s > 0.0)
        .unwrap_or(r.started_at)
}

/// Every host's checks, each phase named with its host (`main (host 1)`).
fn every_hosts_checks<'a>(parts: impl Iterator<Item = &'a Validity>) -> Validity {
    let checks = parts
        .enumerate()
        .flat_map(|(host, v)| {
            v.checks.iter().map(move |c| super::ValidityCheck {
                phase: format!("{} (host {host})", c.phase),
                ..c.clone()
            })
        })
        .collect();
    Validity::of(checks)
}

/// The hosts' `client_lag_ms`, one per request sent (as many as send-lag samples).
pub(super) fn client_lag<'a>(
    parts: impl Iterator<Item = (&'a Stats, Option<&'a Latency>)>,
) -> Option<Latency> {
    merge_summaries(parts.map(|(totals, lag)| {
        let n = totals.send_lag_histogram.as_deref().map_or(0, count);
        (n, lag)
    }))
}

/// The seconds from the first host's start of measurement to the last host's end: hosts
/// that did not start together measured for longer together than any one of them. (Each
/// end counted from the first start, so that one host's span is its own duration exactly.)
/// A phase without a start (0: a report from before phases had one) counts its duration.
fn measured_span(parts: &[&PhaseReport]) -> f64 {
    let first = parts
        .iter()
        .map(|p| p.started_at)
        .filter(|&s| s > 0.0)
        .fold(f64::INFINITY, f64::min);
    parts
        .iter()
        .map(|p| match p.started_at > 0.0 {
            true => (p.started_at - first) + p.duration_s,
            false => p.duration_s,
        })
        .fold(0.0, f64::max)
}

fn merge_phase(parts: &[&PhaseReport], workload: Json) -> PhaseReport {
    let first = parts[0];
    let observed = parts
        .iter()
        .copied()
        .find(|p| !p.server_timeline.is_empty() || !p.server_nodes.is_empty())
        .unwrap_or(first);
    let client = hosts_client(parts.iter().map(|p| (&p.client, p.totals.ops)));
    let sum_rate = |rates: Vec<Option<f64>>| -> Option<f64> {
        rates
            .iter()
            .any(Option::is_some)
            .then(|| rates.iter().flatten().sum())
    };
    let totals = merge_stats(parts.iter().map(|p| &p.totals));
    PhaseReport {
        name: first.name.clone(),
        started_at: parts
            .iter()
            .map(|p| p.started_at)
            .fold(f64::INFINITY, f64::min),
        measured: first.measured,
        // The longest any host waited.
        barrier_wait_s: parts
            .iter()
            .filter_map(|p| p.barrier_wait_s)
            .reduce(f64::max),
        duration_s: measured_span(parts),
        interrupted: parts.iter().any(|p| p.interrupted),
        replay: merge_replay(parts, &totals),
        totals,
        commands: merge_maps(parts.iter().map(|p| &p.commands)),
        timeline: merge_timeline(parts.iter().map(|p| p.timeline.as_slice())),
        client,
        server_timeline: observed.server_timeline.clone(),
        server_load: observed.server_load.clone(),
        server_nodes: observed.server_nodes.clone(),
        target_rate: sum_rate(parts.iter().map(|p| p.target_rate).collect()),
        nodes: merge_maps(parts.iter().map(|p| &p.nodes)),
        availability: shortest_gap(parts.iter().map(|p| &p.availability)),
        // Drills run on shard 0 only.
        events: parts
            .iter()
            .find(|p| !p.events.is_empty())
            .map_or_else(Vec::new, |p| p.events.clone()),
        steps: merge_steps(parts),
        slo: first.slo.clone(),
        output_error: parts.iter().find_map(|p| p.output_error.clone()),
        server: observed.server.clone(),
        unsent: merge_unsent(parts.iter().map(|p| p.unsent.as_ref())),
        client_lag_ms: client_lag(parts.iter().map(|p| (&p.totals, p.client_lag_ms.as_ref()))),
        validity: every_hosts_checks(parts.iter().map(|p| &p.validity)),
        workload,
        // Per-connection rows are one host's: a merged report has none.
        client_seconds: Vec::new(),
    }
}

/// A replay's fidelity over the hosts that shared its trace (`replay.share`): what each
/// planned, sent, and its rate and connections summed (the trace's own counts, the same on
/// every host, kept), the schedule kept as the merged send lag says. A replay of one host
/// (not shared) is kept as it is.
fn merge_replay(parts: &[&PhaseReport], totals: &Stats) -> Option<ReplayFidelity> {
    let first = parts.first()?.replay.clone()?;
    if first.hosts.is_none() || parts.len() < 2 {
        return Some(first);
    }
    let each: Vec<&ReplayFidelity> = parts.iter().filter_map(|p| p.replay.as_ref()).collect();
    let prefills: Vec<&PrefillReport> = each.iter().filter_map(|r| r.prefill.as_ref()).collect();
    let prefill = (!prefills.is_empty()).then(|| PrefillReport {
        keys: prefills.iter().map(|p| p.keys).sum(),
        errors: prefills.iter().map(|p| p.errors).sum(),
        duration_s: prefills.iter().map(|p| p.duration_s).fold(0.0, f64::max),
        not_prefilled: merge_counts(prefills.iter().map(|p| &p.not_prefilled)),
    });
    Some(ReplayFidelity {
        planned: each.iter().map(|r| r.planned).sum(),
        replayed: each.iter().map(|r| r.replayed).sum(),
        trace_rate: each.iter().map(|r| r.trace_rate).sum(),
        rate: each.iter().map(|r| r.rate).sum(),
        connections: each.iter().map(|r| r.connections).sum(),
        schedule_ms: totals.send_lag_ms.clone(),
        others: 0,
        prefill,
        ..first
    })
}

/// Counts by name, summed.
fn merge_counts<'a>(
    maps: impl Iterator<Item = &'a BTreeMap<String, u64>>,
) -> BTreeMap<String, u64> {
    let mut all = BTreeMap::new();
    for m in maps {
        for (k, v) in m {
            *all.entry(k.clone()).or_default() += v;
        }
    }
    all
}

/// What the hosts together cost: CPU and reconnects summed, as are threads and connections
/// (the hosts ran at once), the worst lag and busiest thread kept; CPU per million requests
/// over every host's requests (`parts`: each host's costs and measured requests).
fn hosts_client<'a>(parts: impl Iterator<Item = (&'a ClientStats, u64)>) -> ClientStats {
    let mut client = ClientStats::default();
    let mut ops = 0;
    for (c, n) in parts {
        let (threads, connections) = (client.threads, client.connections);
        client.add(c);
        client.threads = threads + c.threads;
        client.connections = connections + c.connections;
        ops += n;
    }
    client.cpu_s_per_million = (client.cpu_user_s + client.cpu_sys_s) / ops.max(1) as f64 * 1e6;
    client
}

/// The samples an encoded histogram holds (0 when it cannot be read).
fn count(text: &str) -> u64 {
    Sparse::decode(text).map_or(0, |h| h.len())
}

/// Stats of several hosts: counts and rates summed, latencies from the added histograms.
pub(super) fn merge_stats<'a>(parts: impl Iterator<Item = &'a Stats>) -> Stats {
    let parts: Vec<&Stats> = parts.collect();
    let mut out = Stats::default();
    for s in &parts {
        out.ops += s.ops;
        out.ops_per_sec += s.ops_per_sec;
        out.hits += s.hits;
        out.misses += s.misses;
        out.errors += s.errors;
        out.bytes_sent += s.bytes_sent;
        out.bytes_received += s.bytes_received;
        out.redirects += s.redirects;
        out.retries += s.retries;
        for (kind, message) in &s.first_errors {
            out.first_errors
                .entry(kind.clone())
                .or_insert_with(|| message.clone());
        }
        for (kind, n) in &s.errors_by_kind {
            *out.errors_by_kind.entry(kind.clone()).or_default() += n;
        }
    }
    out.error_rate = match out.ops {
        0 => 0.0,
        ops => out.errors as f64 / ops as f64,
    };
    let merged = |f: &dyn Fn(&Stats) -> Option<(&Latency, &str)>| {
        let found: Vec<(&Latency, &str)> = parts.iter().filter_map(|s| f(s)).collect();
        (!found.is_empty()).then(|| merge_latency(&found))
    };
    if let Some((latency, histogram)) = merged(&|s| Some((&s.latency_ms, s.histogram.as_str()))) {
        out.latency_ms = latency;
        out.histogram = histogram;
    }
    if let Some((l, h)) =
        merged(&|s| Some((s.service_ms.as_ref()?, s.service_histogram.as_deref()?)))
    {
        out.service_ms = Some(l);
        out.service_histogram = Some(h);
    }
    if let Some((l, h)) =
        merged(&|s| Some((s.send_lag_ms.as_ref()?, s.send_lag_histogram.as_deref()?)))
    {
        out.send_lag_ms = Some(l);
        out.send_lag_histogram = Some(h);
    }
    out
}

/// Per-name stats of several hosts, merged name by name.
pub(super) fn merge_maps<'a>(
    parts: impl Iterator<Item = &'a BTreeMap<String, Stats>>,
) -> BTreeMap<String, Stats> {
    let mut by_name: BTreeMap<&String, Vec<&Stats>> = BTreeMap::new();
    for map in parts {
        for (name, s) in map {
            by_name.entry(name).or_default().push(s);
        }
    }
    by_name
        .into_iter()
        .map(|(name, all)| (name.clone(), merge_stats(all.into_iter())))
        .collect()
}

/// Exact sums of a summary of `n` samples: (n, sum, sum of squares).
fn sums(n: u64, l: &Latency) -> (f64, f64, f64) {
    let n = n as f64;
    (n, n * l.mean, n * (l.stddev * l.stddev + l.mean * l.mean))
}

/// Latency summaries with their encoded histograms, merged: the histograms added, the
/// percentiles read from the sum (capped at the exact max), the moments from exact sums.
fn merge_latency(parts: &[(&Latency, &str)]) -> (Latency, String) {
    merge_sparse(parts).unwrap_or_else(|| merge_dense(parts))
}

/// [`merge_latency`] on the histograms' non-zero buckets, without a full array of counts per
/// histogram; `None` when one cannot be read or their layouts differ.
fn merge_sparse(parts: &[(&Latency, &str)]) -> Option<(Latency, String)> {
    let texts: Vec<&str> = parts.iter().map(|(_, text)| *text).collect();
    let (sum, lens) = match Sparse::sum_decoded(&texts) {
        Some(added) => added,
        // Layouts too wide to add in one array of counts: as lists of buckets.
        None => {
            let decoded = texts
                .iter()
                .map(|text| Sparse::decode(text))
                .collect::<Option<Vec<Sparse>>>()?;
            let lens = decoded.iter().map(Sparse::len).collect();
            (Sparse::sum(&decoded)?, lens)
        }
    };
    let moments: Vec<(u64, &Latency)> = lens
        .into_iter()
        .zip(parts)
        .map(|(n, (l, _))| (n, *l))
        .collect();
    let mut latency = moments_of(&moments);
    if sum.len() > 0 {
        set_percentiles(&mut latency, sum.percentiles(QUANTILES));
    }
    Some((latency, sum.encode()))
}

/// [`merge_latency`] through the crate's histograms, for what [`merge_sparse`] leaves: a
/// histogram that cannot be read counts nowhere, and histograms of different layouts are
/// added value by value.
fn merge_dense(parts: &[(&Latency, &str)]) -> (Latency, String) {
    let mut total: Option<hdrhistogram::Histogram<u64>> = None;
    let mut moments = Vec::with_capacity(parts.len());
    for (l, text) in parts {
        let Some(h) = decode_histogram(text) else {
            continue;
        };
        let n = h.len();
        match &mut total {
            None => total = Some(h),
            Some(t) => {
                // A histogram that does not fit (another tool's bounds) counts nowhere.
                if t.add(&h).is_err() {
                    continue;
                }
            }
        }
        moments.push((n, *l));
    }
    let Some(h) = total else {
        return (Latency::default(), String::new());
    };
    let mut latency = moments_of(&moments);
    if !h.is_empty() {
        set_percentiles(&mut latency, QUANTILES.map(|q| percentile(&h, q)));
    }
    (latency, encode_histogram(&h))
}

/// The quantiles a [`Latency`] reports, in the order of [`set_percentiles`].
const QUANTILES: [f64; 6] = [0.5, 0.9, 0.95, 0.99, 0.999, 0.9999];

/// Percentiles (ns, of [`QUANTILES`]) read from a merged histogram into `latency`, each
/// capped at its exact max (a bucket's highest value can pass it).
fn set_percentiles(latency: &mut Latency, values: [u64; 6]) {
    let max_ns = (latency.max * NS_PER_MS).round() as u64;
    let ms = |v: u64| v.min(max_ns) as f64 / NS_PER_MS;
    let [p50, p90, p95, p99, p99_9, p99_99] = values;
    latency.p50 = ms(p50);
    latency.p90 = ms(p90);
    latency.p95 = ms(p95);
    latency.p99 = ms(p99);
    latency.p99_9 = ms(p99_9);
    latency.p99_99 = ms(p99_99);
}

/// Mean, stddev, min and max of several summaries from their exact sums; the percentiles are
/// the highest part's (callers with histograms replace them).
fn moments_of(parts: &[(u64, &Latency)]) -> Latency {
    let parts: Vec<&(u64, &Latency)> = parts.iter().filter(|(n, _)| *n > 0).collect();
    let (mut n, mut sum, mut sum_sq) = (0.0, 0.0, 0.0);
    let mut out = Latency {
        min: f64::INFINITY,
        ..Latency::default()
    };
    for (count, l) in &parts {
        let (a, b, c) = sums(*count, l);
        n += a;
        sum += b;
        sum_sq += c;
        out.min = out.min.min(l.min);
        out.max = out.max.max(l.max);
        out.p50 = out.p50.max(l.p50);
        out.p90 = out.p90.max(l.p90);
        out.p95 = out.p95.max(l.p95);
        out.p99 = out.p99.max(l.p99);
        out.p99_9 = out.p99_9.max(l.p99_9);
        out.p99_99 = out.p99_99.max(l.p99_99);
    }
    if n == 0.0 {
        return Latency::default();
    }
    out.mean = sum / n;
    out.stddev = (sum_sq / n - out.mean * out.mean).max(0.0).sqrt();
    out
}

/// Summaries without histograms (`client_lag_ms`): moments exact, percentiles a bound.
fn merge_summaries<'a>(parts: impl Iterator<Item = (u64, Option<&'a Latency>)>) -> Option<Latency> {
    let parts: Vec<(u64, &Latency)> = parts.filter_map(|(n, l)| Some((n, l?))).collect();
    (!parts.is_empty()).then(|| moments_of(&parts))
}

pub(super) fn merge_unsent<'a>(parts: impl Iterator<Item = Option<&'a Unsent>>) -> Option<Unsent> {
    let parts: Vec<&Unsent> = parts.flatten().collect();
    (!parts.is_empty()).then(|| Unsent {
        requests: parts.iter().map(|u| u.requests).sum(),
        waited_ms: moments_of(
            &parts
                .iter()
                .map(|u| (u.requests, &u.waited_ms))
                .collect::<Vec<_>>(),
        ),
    })
}

fn shortest_gap<'a>(parts: impl Iterator<Item = &'a super::Availability>) -> super::Availability {
    parts
        .min_by(|a, b| a.longest_gap_ms.total_cmp(&b.longest_gap_ms))
        .cloned()
        .unwrap_or_default()
}

/// Ramp steps by index: counts and rates summed, latency moments exact, percentiles a bound.
fn merge_steps(parts: &[&PhaseReport]) -> Vec<RampStep> {
    let first = parts[0];
    (0..first.steps.len())
        .map(|i| {
            let all: Vec<&RampStep> = parts.iter().filter_map(|p| p.steps.get(i)).collect();
            let ops: u64 = all.iter().map(|s| s.ops).sum();
            let errors: u64 = all.iter().map(|s| s.errors).sum();
            let received = |s: &&RampStep| s.ops;
            RampStep {
                start_s: first.steps[i].start_s,
                duration_s: all.iter().map(|s| s.duration_s).fold(0.0, f64::max),
                target_rate: all
                    .iter()
                    .any(|s| s.target_rate.is_some())
                    .then(|| all.iter().filter_map(|s| s.target_rate).sum()),
                connections: all.iter().map(|s| s.connections).sum(),
                ops,
                ops_per_sec: all.iter().map(|s| s.ops_per_sec).sum(),
                errors,
                error_rate: if ops > 0 {
                    errors as f64 / ops as f64
                } else {
                    0.0
                },
                latency_ms: moments_of(
                    &all.iter()
                        .map(|s| (received(s), &s.latency_ms))
                        .collect::<Vec<_>>(),
                ),
                service_ms: merge_summaries(
                    all.iter().map(|s| (received(s), s.service_ms.as_ref())),
                ),
            }
        })
        .collect()
}

/// Timelines of several hosts: rows lined up by the wall-clock second they began (their
/// `unix_s - interval_s`, counted from the earliest host's start of measurement), summed. A
/// host's short last row begins at its last whole second and so stays a row of its own.
/// Reports written before rows carried `unix_s` (0) line up by `t`: hosts taken to have
/// started together.
fn merge_timeline<'a>(parts: impl Iterator<Item = &'a [TimelineRow]>) -> Vec<TimelineRow> {
    let parts: Vec<&[TimelineRow]> = parts.collect();
    let by_t = parts
        .iter()
        .any(|rows| rows.iter().any(|r| r.unix_s == 0.0));
    // Each host's start of measurement; the first one's is the merged timeline's `t` 0.
    let starts: Vec<f64> = parts
        .iter()
        .map(|rows| rows.first().map_or(f64::INFINITY, |row| row.unix_s - row.t))
        .collect();
    let reference = starts.iter().copied().fold(f64::INFINITY, f64::min);
    let mut by_second: BTreeMap<i64, (Vec<&TimelineRow>, Vec<f64>)> = BTreeMap::new();
    for (rows, start) in parts.iter().zip(&starts) {
        // A host's `t` counts from its own start: this much after the first host's.
        let offset = match by_t {
            true => 0.0,
            false => start - reference,
        };
        for row in *rows {
            let begin = match by_t {
                true => row.t - row.interval_s,
                false => row.unix_s - row.interval_s - reference,
            };
            let (rows, offsets) = by_second.entry(begin.round() as i64).or_default();
            rows.push(row);
            offsets.push(offset);
        }
    }
    let seconds: Vec<(Vec<&TimelineRow>, Vec<f64>)> = by_second.into_values().collect();
    // A row's histograms are added apart from the others': a long run's rows, on every core.
    super::parallel::map(&seconds, 256, |(rows, offsets)| {
        let mut merged = merge_row(rows);
        // It ends when its latest row ends, counted from the first host's start (the
        // first host's own `t`, unchanged).
        let last = latest(rows);
        merged.t = rows[last].t + offsets[last];
        merged
    })
}

/// Which of `rows` (one second's, of several hosts) ends last: by the wall clock when every
/// row has one (each host's `t` counts from its own start), else by `t`.
fn latest(rows: &[&TimelineRow]) -> usize {
    let by_t = rows.iter().any(|r| r.unix_s == 0.0);
    (0..rows.len())
        .max_by(|&a, &b| match by_t {
            true => rows[a].t.total_cmp(&rows[b].t),
            false => rows[a].unix_s.total_cmp(&rows[b].unix_s),
        })
        .unwrap_or(0)
}

impl Snapshot {
    /// One snapshot of several hosts' snapshots of one wall-clock second (the live line of a
    /// distributed run): counts and rates summed, latency from the hosts' interval histograms
    /// added (snapshots always carry them), service time and send lag the highest host's
    /// percentiles, as a merged timeline row. The phase is the first snapshot's; measured
    /// when any is. `None` when there are none.
    pub fn merge(snapshots: &[Snapshot]) -> Option<Snapshot> {
        let first = snapshots.first()?;
        let rows: Vec<&TimelineRow> = snapshots.iter().map(|s| &s.row).collect();
        Some(Snapshot {
            phase: first.phase.clone(),
            measured: snapshots.iter().any(|s| s.measured),
            row: merge_row(&rows),
        })
    }
}

pub(super) fn merge_row(rows: &[&TimelineRow]) -> TimelineRow {
    let latest = rows[latest(rows)];
    let with_histograms = rows.iter().all(|r| !r.histogram.is_empty());
    let (latency_ms, histogram) = match with_histograms {
        true => {
            let (l, h) = rows_latency(rows);
            let interval = IntervalLatency {
                mean: l.mean,
                p50: l.p50,
                p99: l.p99,
                max: l.max,
            };
            (interval, h)
        }
        false => (
            merge_interval(rows.iter().map(|r| (r.ops, &r.latency_ms))),
            String::new(),
        ),
    };
    let merge_opt = |f: &dyn Fn(&TimelineRow) -> Option<&IntervalLatency>| {
        let found: Vec<(u64, &IntervalLatency)> =
            rows.iter().filter_map(|r| Some((r.ops, f(r)?))).collect();
        (!found.is_empty()).then(|| merge_interval(found.into_iter()))
    };
    let sum_opt = |f: &dyn Fn(&TimelineRow) -> Option<f64>| {
        let found: Vec<f64> = rows.iter().filter_map(|r| f(r)).collect();
        (!found.is_empty()).then(|| found.iter().sum())
    };
    let max_opt =
        |f: &dyn Fn(&TimelineRow) -> Option<f64>| rows.iter().filter_map(|r| f(r)).reduce(f64::max);
    TimelineRow {
        t: latest.t,
        unix_s: latest.unix_s,
        interval_s: rows.iter().map(|r| r.interval_s).fold(0.0, f64::max),
        ops: rows.iter().map(|r| r.ops).sum(),
        ops_per_sec: rows.iter().map(|r| r.ops_per_sec).sum(),
        errors: rows.iter().map(|r| r.errors).sum(),
        latency_ms,
        service_ms: merge_opt(&|r| r.service_ms.as_ref()),
        send_lag_ms: merge_opt(&|r| r.send_lag_ms.as_ref()),
        connections: rows.iter().map(|r| r.connections).sum(),
        reconnects: rows
            .iter()
            .any(|r| r.reconnects.is_some())
            .then(|| rows.iter().filter_map(|r| r.reconnects).sum()),
        target_rate: sum_opt(&|r| r.target_rate),
        waiting: rows
            .iter()
            .any(|r| r.waiting.is_some())
            .then(|| rows.iter().filter_map(|r| r.waiting).sum()),
        behind_ms: max_opt(&|r| r.behind_ms),
        server_cpu_percent: max_opt(&|r| r.server_cpu_percent),
        partial: rows.iter().all(|r| r.partial),
        histogram,
    }
}

/// The latency of timeline rows from their interval histograms added (every row has one):
/// mean, max and the percentiles exact; the rows keep no stddev or min, so those of the result
/// are not.
pub(super) fn rows_latency(rows: &[&TimelineRow]) -> (Latency, String) {
    let parts: Vec<(Latency, &str)> = rows
        .iter()
        .map(|r| (interval_as_latency(&r.latency_ms), r.histogram.as_str()))
        .collect();
    let refs: Vec<(&Latency, &str)> = parts.iter().map(|(l, h)| (l, *h)).collect();
    merge_latency(&refs)
}

fn interval_as_latency(l: &IntervalLatency) -> Latency {
    Latency {
        mean: l.mean,
        max: l.max,
        p50: l.p50,
        p99: l.p99,
        ..Latency::default()
    }
}

/// Interval summaries without histograms: mean weighted by requests, p50/p99/max the highest.
fn merge_interval<'a>(parts: impl Iterator<Item = (u64, &'a IntervalLatency)>) -> IntervalLatency {
    let (mut n, mut sum) = (0u64, 0.0);
    let mut out = IntervalLatency::default();
    for (ops, l) in parts {
        n += ops;
        sum += ops as f64 * l.mean;
        out.p50 = out.p50.max(l.p50);
        out.p99 = out.p99.max(l.p99);
        out.max = out.max.max(l.max);
    }
    out.mean = if n > 0 { sum / n as f64 } else { 0.0 };
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn phase(started_at: f64, duration_s: f64) -> PhaseReport {
        PhaseReport {
            started_at,
            duration_s,
            ..PhaseReport::default()
        }
    }

    #[test]
    fn a_merged_phase_spans_from_the_first_start_to_the_last_end() {
        let span = |parts: &[PhaseReport]| measured_span(&parts.iter().collect::<Vec<_>>());
        let t0 = 1_795_800_000.123;
        // One host: its own duration, bit for bit.
        assert_eq!(span(&[phase(t0, 3.7)]), 3.7);
        // Together: the longest; 2 s apart: from the first start to the last end.
        assert_eq!(span(&[phase(t0, 3.0), phase(t0, 3.5)]), 3.5);
        assert!((span(&[phase(t0, 3.0), phase(t0 + 2.0, 3.0)]) - 5.0).abs() < 1e-6);
        // A phase without a start counts its duration, not its distance from 1970.
        assert_eq!(span(&[phase(t0, 3.0), phase(0.0, 4.0)]), 4.0);
        assert_eq!(span(&[phase(0.0, 2.0), phase(0.0, 1.0)]), 2.0);
        assert_eq!(span(&[]), 0.0);
    }
}
