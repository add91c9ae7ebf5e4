//! A replay's parts around its measured phase: the prefill before it (the keys the trace
//! reads before writing them, SET in large pipelined batches, not measured), and the
//! fidelity section of its report.

use crate::net::cluster::SlotMap;
use crate::net::Client;
use crate::plan::{ConnectOptions, Phase, ReplayPlan};
use crate::report::{PhaseReport, PrefillReport, ReplayFidelity};
use crate::resp::slot::key_slot;
use crate::Result;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

/// SETs per write of the prefill.
const BATCH: usize = 256;

/// Keys as sent, each with its value size.
type Keys = Vec<(Vec<u8>, u64)>;

/// Write the prefill keys of `phase`'s replay (when it has any), on one connection per
/// server (each cluster primary gets the keys of its slots); stops early when `stop` is set.
pub fn prefill(phase: &Phase, stop: &AtomicBool) -> Result<Option<PrefillReport>> {
    let Some(plan) = &phase.replay else {
        return Ok(None);
    };
    let Some(fill) = &plan.prefill else {
        return Ok(None);
    };
    let started = Instant::now();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| crate::Error::Internal(format!("runtime: {e}")))?;
    let mut report = PrefillReport {
        not_prefilled: fill.not_prefilled.clone(),
        ..PrefillReport::default()
    };
    rt.block_on(async {
        // Each key as sent, with its value size, grouped by the server that holds it.
        let mut groups: Vec<(ConnectOptions, Keys)> = Vec::new();
        match &phase.connect.cluster {
            None => {
                let keys = fill.keys.iter().map(|(k, n)| (rewritten(plan, k), *n));
                groups.push((phase.connect.clone(), keys.collect()));
            }
            Some(seeds) => {
                let map = SlotMap::fetch(seeds, &phase.connect).await?;
                let primaries = map.primaries();
                groups = primaries
                    .iter()
                    .map(|p| (p.connect(&phase.connect), Vec::new()))
                    .collect();
                for (key, size) in &fill.keys {
                    let k = rewritten(plan, key);
                    let owner = map.primary_of(key_slot(&k));
                    if let Some(g) = owner.and_then(|o| primaries.iter().position(|p| p == o)) {
                        groups[g].1.push((k, *size));
                    }
                }
            }
        }
        for (connect, keys) in &groups {
            if keys.is_empty() {
                continue;
            }
            let mut client = Client::connect(connect).await?;
            write(&mut client, keys, phase, stop, &mut report).await?;
        }
        Ok::<_, crate::Error>(())
    })?;
    report.duration_s = started.elapsed().as_secs_f64();
    Ok(Some(report))
}

/// `key` as the replay sends it.
fn rewritten(plan: &ReplayPlan, key: &[u8]) -> Vec<u8> {
    let mut k = Vec::new();
    plan.rewrite_key(&mut k, key);
    k
}

/// SET each of `keys` (with a filler of its size) on `client`, in pipelined batches.
async fn write(
    client: &mut Client,
    keys: &[(Vec<u8>, u64)],
    phase: &Phase,
    stop: &AtomicBool,
    report: &mut PrefillReport,
) -> Result<()> {
    let timeout = phase.spec.load.timeout.0;
    let longest = keys.iter().map(|(_, n)| *n as usize).max().unwrap_or(0);
    let filler = vec![b'x'; longest.min(crate::spec::MAX_VALUE_SIZE as usize)];
    for chunk in keys.chunks(BATCH) {
        if stop.load(Ordering::Relaxed) {
            break;
        }
        let cmds: Vec<Vec<&[u8]>> = chunk
            .iter()
            .map(|(k, size)| {
                let n = (*size as usize).min(filler.len());
                vec![&b"SET"[..], k.as_slice(), &filler[..n]]
            })
            .collect();
        let replies = client.pipeline(&cmds, timeout).await?;
        report.keys += chunk.len() as u64;
        report.errors += replies
            .iter()
            .filter(|r| matches!(r, crate::net::Value::Error(_)))
            .count() as u64;
    }
    Ok(())
}

/// The fidelity section of a replay phase's report.
pub fn fidelity(plan: &ReplayPlan, report: &PhaseReport) -> ReplayFidelity {
    ReplayFidelity {
        file: plan.spec.file.clone(),
        format: plan.format.name().into(),
        traced: plan.traced,
        planned: plan.requests_over(0..plan.per_connection.len(), plan.spec.loops),
        replayed: report.totals.ops,
        skipped: plan.skipped.clone(),
        malformed: plan.malformed.0,
        malformed_lines: plan
            .malformed
            .1
            .iter()
            .take(10)
            .map(|m| format!("line {}: {}", m.line, m.reason))
            .collect(),
        speed: plan.speed,
        trace_rate: plan.trace_rate(),
        rate: plan.rate(),
        loops: plan.spec.loops,
        connections: plan.connections,
        per_client: plan.spec.connections.is_none(),
        hosts: plan.spec.share.map(|s| s.of),
        others: plan.others,
        schedule_ms: report.totals.send_lag_ms.clone(),
        prefill: None,
    }
}
