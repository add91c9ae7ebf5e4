//! A replay's parts around its measured phase: the prefill before it (the keys the trace
//! reads before writing them, SET in large pipelined batches, not measured), and the
//! fidelity section of its report.

use crate::net::Client;
use crate::plan::{Phase, ReplayPlan};
use crate::report::{PhaseReport, PrefillReport, ReplayFidelity};
use crate::Result;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

/// SETs per write of the prefill.
const BATCH: usize = 256;

/// Write the prefill keys of `phase`'s replay (when it has any) on one connection; stops
/// early when `stop` is set.
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
        let mut client = Client::connect(&phase.connect).await?;
        let timeout = phase.spec.load.timeout.0;
        let mut keys: Vec<Vec<u8>> = Vec::with_capacity(BATCH);
        let mut filler: Vec<u8> = Vec::new();
        for chunk in fill.keys.chunks(BATCH) {
            if stop.load(Ordering::Relaxed) {
                break;
            }
            keys.clear();
            let mut longest = 0;
            for (key, size) in chunk {
                let mut k = Vec::new();
                plan.rewrite_key(&mut k, key);
                keys.push(k);
                longest = longest.max(*size as usize);
            }
            if filler.len() < longest {
                filler.resize(longest.min(crate::spec::MAX_VALUE_SIZE as usize), b'x');
            }
            let cmds: Vec<Vec<&[u8]>> = chunk
                .iter()
                .zip(&keys)
                .map(|((_, size), k)| {
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
        Ok::<_, crate::Error>(())
    })?;
    report.duration_s = started.elapsed().as_secs_f64();
    Ok(Some(report))
}

/// The fidelity section of a replay phase's report.
pub fn fidelity(plan: &ReplayPlan, report: &PhaseReport) -> ReplayFidelity {
    let passes = plan.spec.loops as u64;
    ReplayFidelity {
        file: plan.spec.file.clone(),
        format: plan.format.name().into(),
        traced: plan.traced,
        planned: plan.requests * passes,
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
