//! Shards: one host's exact share of a workload that several hosts run together
//! (`respload run --shard I/N`, `Workload::shard`).
//!
//! Budgets and connections are split so that the shares sum exactly to the whole; rates
//! follow the connections (every connection keeps the rate it would have had alone, so the
//! hosts together offer the workload's rate); a phase that walks keys in order (`sequential`
//! or `parallel`) gets a contiguous part of `keys.range`, so the hosts together visit every
//! key once; a connection ramp's connections are dealt out in turn (`RampShare`), so the
//! hosts' counts add up to the whole ramp's at every step; fault drills and server
//! observation stay with shard 0.

use super::{Phase, Workload};
use crate::report::ShardOf;
use crate::spec::{Distribution, Requests};
use crate::{Error, Result};
use serde_json::{json, Value as Json};

/// `total` split into `count` shares that differ by at most one and sum to `total`, the
/// larger first.
pub fn split(total: u64, count: u32) -> Vec<u64> {
    let count = count.max(1) as u64;
    (0..count)
        .map(|i| total / count + u64::from(i < total % count))
        .collect()
}

/// The first value of share `index` when `total` values are split by [`split`].
fn offset(total: u64, count: u32, index: u32) -> u64 {
    split(total, count)[..index as usize].iter().sum()
}

/// SplitMix64's finalizer, so that each shard's seed is far from the others' (and a
/// replay's clients are dealt out apart from their connections' hash).
pub(super) fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The seed of shard `index` of a run seeded with `seed`: distinct per shard, reproducible.
pub fn shard_seed(seed: u64, index: u32) -> u64 {
    mix(seed ^ mix(u64::from(index) + 1))
}

impl Workload {
    /// Shard `index` (0-based) of `count` hosts running this workload together: its exact
    /// share of every phase (see the module documentation). An error names the field that
    /// cannot be shared (fewer connections or requests than shards, an SLO search, which is
    /// not split, or a ramp that is already a host's share).
    pub fn shard(&self, index: u32, count: u32) -> Result<Workload> {
        if count == 0 || index >= count {
            return Err(Error::spec(
                "shard",
                format!("{index}/{count}: a shard is I/N with N at least 1 and I from 0 to N - 1"),
            ));
        }
        if let Some(of) = &self.shard {
            return Err(Error::spec(
                "shard",
                format!(
                    "{index}/{count}: this workload is already shard {}/{} of another",
                    of.index, of.count
                ),
            ));
        }
        let of = ShardOf {
            index,
            count,
            workload: self.redacted(),
        };
        if count == 1 {
            return Ok(Workload {
                shard: Some(of),
                ..self.clone()
            });
        }
        let n = self.phases.len();
        let mut raw = Vec::with_capacity(n);
        for (i, phase) in self.phases.iter().enumerate() {
            let prefix = if n > 1 {
                format!("phases[{i}].")
            } else {
                String::new()
            };
            let spec = match phase.replay.is_some() {
                true => shard_replay(phase, &prefix, index, count)?,
                false => shard_phase(phase, &prefix, index, count)?,
            };
            raw.push((spec, prefix));
        }
        let phases = raw
            .into_iter()
            .map(|(spec, prefix)| Phase::from_json(spec, &prefix))
            .collect::<Result<Vec<_>>>()?;
        Ok(Workload {
            shard: Some(of),
            start_at: self.start_at,
            barrier: self.barrier.clone(),
            ..Workload::assemble(phases, self.thresholds.clone())?
        })
    }
}

/// A replay phase's normalized spec, cut to shard `index` of `count`: the recorded clients
/// dealt out by their names' hash (`replay.share`), each host replaying its own clients at
/// their recorded instants. The load (connections, rate) is then the host's part of the
/// trace's, set again from it; `replay.connections`, when given, is split.
fn shard_replay(phase: &Phase, prefix: &str, index: u32, count: u32) -> Result<Json> {
    let spec = &phase.spec;
    let Some(replay) = &spec.replay else {
        return Err(Error::Internal("not a replay phase".into()));
    };
    let at = |field: &str| format!("{prefix}{field}");
    if replay.share.is_some() {
        return Err(Error::spec(
            at("replay.share"),
            format!("cannot be split into {count} shards: it is already one host's share"),
        ));
    }
    let mut raw = serde_json::to_value(spec).map_err(|e| Error::spec("", e))?;
    raw["replay"]["share"] = json!({ "index": index, "of": count });
    if let Some(n) = replay.connections {
        if n < count {
            return Err(Error::spec(
                at("replay.connections"),
                format!(
                    "cannot be split into {count} shards: {n} connections, and every shard \
                     needs at least one"
                ),
            ));
        }
        raw["replay"]["connections"] = json!(split(u64::from(n), count)[index as usize]);
    }
    // Set again from this host's part of the trace (a replay refuses any other).
    let load = raw["load"]
        .as_object_mut()
        .ok_or_else(|| Error::Internal("a normalized replay phase without load".into()))?;
    load.remove("rate");
    load.remove("connections");
    Ok(raw)
}

/// One phase's normalized spec, cut to shard `index` of `count`.
fn shard_phase(phase: &Phase, prefix: &str, index: u32, count: u32) -> Result<Json> {
    let spec = &phase.spec;
    let at = |field: &str| format!("{prefix}{field}");
    let load = &spec.load;
    let refuse = |field: &str, why: &str| -> Result<Json> {
        Err(Error::spec(
            at(field),
            format!("cannot be split into {count} shards: {why}"),
        ))
    };
    if load.connections_ramp.is_some_and(|r| r.share.is_some()) {
        return refuse(
            "load.connections_ramp.share",
            "it is already one host's share",
        );
    }
    if spec.slo.is_some() {
        return refuse("slo", "an SLO search runs from one host");
    }
    let conns = u64::from(load.connections);
    if conns < u64::from(count) {
        return refuse(
            "load.connections",
            &format!("{conns} connections, and every shard needs at least one"),
        );
    }
    let mut raw = serde_json::to_value(spec).map_err(|e| Error::spec("", e))?;
    let mine = split(conns, count)[index as usize];
    raw["load"]["connections"] = json!(mine);
    if load.connections_ramp.is_some() {
        // The whole ramp's connections dealt out in turn: at every step the hosts' counts add
        // up to the whole ramp's (`RampShare`).
        raw["load"]["connections_ramp"]["share"] =
            json!({ "index": index, "of": count, "connections": conns });
    }
    if let Some(t) = load.threads {
        raw["load"]["threads"] = json!(u64::from(t).min(mine));
    }
    // Every connection keeps its own rate: the shards' rates sum to the whole.
    let share = mine as f64 / conns as f64;
    if let Some(rate) = load.rate {
        raw["load"]["rate"] = json!(rate * share);
    }
    if let Some(r) = load.rate_ramp {
        raw["load"]["rate_ramp"]["start"] = json!(r.start * share);
        raw["load"]["rate_ramp"]["end"] = json!(r.end * share);
        raw["load"]["rate_ramp"]["step"] = json!(r.step * share);
    }
    if let Some(profile) = &load.rate_profile {
        let rates: Vec<f64> = profile.rates.iter().map(|r| r * share).collect();
        raw["load"]["rate_profile"]["rates"] = json!(rates);
    }
    let ordered = phase.mix.iter().any(|e| {
        matches!(
            e.distribution,
            Distribution::Sequential | Distribution::Parallel
        )
    });
    let budget = match load.requests {
        Some(Requests::Count(n)) => Some(n),
        // Walked in order, `all_keys` is split by the key range (below).
        Some(Requests::AllKeys) if ordered => None,
        // Otherwise `all_keys` and the default budget are only numbers: split like a count
        // (each host sent all of them before).
        _ if count > 1 && !load.idle => load.request_budget(&spec.keys),
        _ => None,
    };
    if let Some(total) = budget {
        if total < u64::from(count) {
            return refuse(
                "load.requests",
                &format!("{total} requests, and every shard needs at least one"),
            );
        }
        raw["load"]["requests"] = json!(split(total, count)[index as usize]);
    }
    if ordered {
        let [lo, hi] = spec.keys.range;
        let keys = hi - lo + 1;
        if keys < u64::from(count) {
            return refuse(
                "keys.range",
                &format!("{keys} keys walked in order, and every shard needs at least one"),
            );
        }
        let first = lo + offset(keys, count, index);
        let last = first + split(keys, count)[index as usize] - 1;
        raw["keys"]["range"] = json!([first, last]);
    }
    if let Some(seed) = spec.seed {
        raw["seed"] = json!(shard_seed(seed, index));
    }
    if index > 0 {
        // Drills and server observation are the run's, not each host's: shard 0 has them.
        raw["events"] = json!([]);
        raw["observe"]["info"] = json!(false);
    }
    Ok(raw)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn workload(toml: &str) -> Workload {
        Workload::from_toml_str(toml).unwrap()
    }

    #[test]
    fn shares_sum_to_the_whole() {
        assert_eq!(split(7, 3), vec![3, 2, 2]);
        assert_eq!(split(2, 3), vec![1, 1, 0]);
        assert_eq!(
            split(u64::MAX, 2).iter().map(|&n| n as u128).sum::<u128>(),
            u64::MAX as u128
        );
        for (total, count) in [(0, 1), (1, 1), (10, 4), (1_000_003, 7), (5, 5)] {
            let s = split(total, count);
            assert_eq!(s.len(), count as usize);
            assert_eq!(s.iter().sum::<u64>(), total);
            assert!(s.iter().max().unwrap() - s.iter().min().unwrap() <= 1);
        }
        assert_eq!(offset(10, 4, 0), 0);
        assert_eq!(offset(10, 4, 2), 6);
    }

    #[test]
    fn budgets_connections_rates_and_keys_are_split_exactly() {
        let w = workload(
            "seed = 9\n[load]\nconnections = 5\nthreads = 3\n[keys]\nrange = [10, 19]\n\
             [[phases]]\nname = 'fill'\nmeasured = false\n\
             load = { requests = 'all_keys' }\nkeys = { distribution = 'sequential' }\n\
             [[phases]]\nname = 'm'\nload = { requests = 7, rate = 1000.0 }\n\
             [[phases]]\nname = 'r'\nload = { duration = '1s', rate_ramp = { start = 100.0, end = 500.0, step = 200.0, step_duration = '1s' } }\n\
             events = [{ at = '500ms', drill = 'bgsave' }]\n\
             [[phases]]\nname = 'p'\nmeasured = false\n\
             load = { requests = 'all_keys' }\nkeys = { distribution = 'parallel' }",
        );
        let shards: Vec<Workload> = (0..3).map(|i| w.shard(i, 3).unwrap()).collect();
        let load = |s: &Workload, p: usize| s.phases[p].spec.load.clone();
        let conns: Vec<u32> = shards.iter().map(|s| load(s, 0).connections).collect();
        assert_eq!(conns, vec![2, 2, 1]);
        assert_eq!(load(&shards[2], 1).threads, Some(1));
        // Every key of [10, 19] exactly once, in contiguous parts.
        let ranges: Vec<[u64; 2]> = shards.iter().map(|s| s.phases[0].spec.keys.range).collect();
        assert_eq!(ranges, vec![[10, 13], [14, 16], [17, 19]]);
        // memtier's P:P (`parallel`): the same parts, each walked by its host's connections.
        let ranges: Vec<[u64; 2]> = shards.iter().map(|s| s.phases[3].spec.keys.range).collect();
        assert_eq!(ranges, vec![[10, 13], [14, 16], [17, 19]]);
        // Fault drills act once, from shard 0.
        let drills: Vec<usize> = shards
            .iter()
            .map(|s| s.phases[2].spec.events.len())
            .collect();
        assert_eq!(drills, vec![1, 0, 0]);
        // 7 requests: 3 + 2 + 2.
        let budgets: Vec<_> = shards.iter().map(|s| load(s, 1).requests).collect();
        assert_eq!(
            budgets,
            vec![
                Some(Requests::Count(3)),
                Some(Requests::Count(2)),
                Some(Requests::Count(2))
            ]
        );
        // Rates follow the connections and sum to the whole, ramps too.
        let rate: f64 = shards.iter().map(|s| load(s, 1).rate.unwrap()).sum();
        assert!((rate - 1000.0).abs() < 1e-9, "{rate}");
        assert_eq!(load(&shards[0], 1).rate, Some(400.0));
        for k in 0..3 {
            let r: f64 = shards
                .iter()
                .map(|s| load(s, 2).rate_ramp.unwrap().rates()[k])
                .sum();
            assert!((r - [100.0, 300.0, 500.0][k]).abs() < 1e-9, "step {k}: {r}");
        }
        // A random distribution keeps the whole range.
        assert_eq!(shards[1].phases[1].spec.keys.range, [10, 19]);
        // Seeds: distinct, reproducible.
        let seeds: Vec<_> = shards
            .iter()
            .map(|s| s.phases[1].spec.seed.unwrap())
            .collect();
        assert!(seeds[0] != seeds[1] && seeds[1] != seeds[2] && seeds[0] != 9);
        assert_eq!(w.shard(1, 3).unwrap().phases[1].spec.seed, Some(seeds[1]));
        // Observation stays with shard 0.
        assert!(shards[0].phases[1].spec.observe.info);
        assert!(!shards[1].phases[1].spec.observe.info);
        // One shard is the workload.
        assert_eq!(w.shard(0, 1).unwrap().to_json_value(), w.to_json_value());
    }

    #[test]
    fn all_keys_taken_at_random_and_the_default_budget_are_split_as_counts() {
        // Each host sent the whole of them before: N hosts, N times the budget.
        let w = workload(
            "[keys]\nrange = [0, 9]\n[load]\nconnections = 3\n\
             [[phases]]\nname = 'a'\nload = { requests = 'all_keys' }\n\
             [[phases]]\nname = 'd'\n",
        );
        let shards: Vec<Workload> = (0..3).map(|i| w.shard(i, 3).unwrap()).collect();
        for (p, whole) in [(0, 10), (1, crate::spec::DEFAULT_REQUESTS)] {
            let budgets: Vec<u64> = shards
                .iter()
                .map(|s| {
                    let spec = &s.phases[p].spec;
                    spec.load.request_budget(&spec.keys).unwrap()
                })
                .collect();
            assert_eq!(budgets.iter().sum::<u64>(), whole, "phase {p}: {budgets:?}");
            assert!(budgets.iter().max().unwrap() - budgets.iter().min().unwrap() <= 1);
        }
        // Keys taken at random: every shard still draws from the whole range.
        assert_eq!(shards[2].phases[0].spec.keys.range, [0, 9]);
        assert_eq!(w.shard(0, 1).unwrap().to_json_value(), w.to_json_value());
    }

    #[test]
    fn what_cannot_be_shared_is_named() {
        let err = |toml: &str, i, n| workload(toml).shard(i, n).unwrap_err().to_string();
        let e = err("[load]\nconnections = 2", 0, 3);
        assert!(
            e.contains("load.connections") && e.contains("2 connections"),
            "{e}"
        );
        let e = err("[load]\nrequests = 2\nconnections = 5", 0, 3);
        assert!(
            e.contains("load.requests") && e.contains("2 requests"),
            "{e}"
        );
        let e = err("[load]\nconnections = 4", 3, 3);
        assert!(e.contains("shard") && e.contains("3/3"), "{e}");
        let e = err("[load]\nconnections = 4", 0, 0);
        assert!(e.contains("0/0"), "{e}");
        let e = err(
            "[load]\nconnections = 4\nduration = '2s'\nconnections_ramp = { start = 2, step = 1, step_duration = '1s', share = { index = 0, of = 2, connections = 8 } }",
            1,
            2,
        );
        assert!(e.contains("load.connections_ramp.share"), "{e}");
    }

    #[test]
    fn a_connection_ramp_is_dealt_out_so_every_step_adds_up() {
        // Awkward numbers: 10 connections from 3 hosts, 2 at first (one host opens none in
        // the first step), then 4 more a step (not a multiple of 3).
        let w = workload(
            "[load]\nconnections = 10\nduration = '4s'\nconnections_ramp = { start = 2, step = 4, step_duration = '1s' }",
        );
        let whole = w.phases[0].spec.load.connections_ramp.unwrap();
        let want = whole.counts(10);
        assert_eq!(want, vec![2, 6, 10]);
        let shards: Vec<Workload> = (0..3).map(|i| w.shard(i, 3).unwrap()).collect();
        let counts: Vec<Vec<u32>> = shards
            .iter()
            .map(|s| {
                let load = &s.phases[0].spec.load;
                load.connections_ramp.unwrap().counts(load.connections)
            })
            .collect();
        assert_eq!(counts, vec![vec![1, 2, 4], vec![1, 2, 3], vec![0, 2, 3]]);
        for (k, total) in want.iter().enumerate() {
            assert_eq!(counts.iter().map(|c| c[k]).sum::<u32>(), *total, "step {k}");
        }
        // Each host's connections open in the step of their rank in the whole ramp.
        for (i, s) in shards.iter().enumerate() {
            let load = &s.phases[0].spec.load;
            let ramp = load.connections_ramp.unwrap();
            for local in 0..load.connections {
                let rank = local * 3 + i as u32;
                assert_eq!(
                    ramp.step_of(local),
                    whole.step_of(rank),
                    "host {i} conn {local}"
                );
            }
        }
        // A host's spec reads back (the share validated against its connections), and a
        // share that does not match them is refused, naming the field.
        let json = shards[2].to_json_value();
        assert_eq!(
            json["load"]["connections_ramp"]["share"],
            serde_json::json!({ "index": 2, "of": 3, "connections": 10 })
        );
        assert!(Workload::from_json_value(json.clone()).is_ok());
        let mut bad = json;
        bad["load"]["connections"] = serde_json::json!(4);
        let e = Workload::from_json_value(bad).unwrap_err().to_string();
        assert!(
            e.contains("load.connections_ramp.share") && e.contains("dealt 3 of 10"),
            "{e}"
        );
    }
}
