//! A run's report assembled from its phases, one after the other: what the engine does as
//! each phase ends, and what [`Report::join`] does with the reports of phases run one by one,
//! so that both give the same run-level figures.

use super::{Availability, PhaseReport, Report, ServerLoad, ServerSample, TimelineRow, Validity};

impl Report {
    /// Add a finished phase, as a run does: its client cost (every phase's), and for a
    /// measured phase its timeline and server samples (`t` counting on from the measured
    /// phases before it), its longest gap without a reply (kept when the longest so far)
    /// and its measured seconds. The run's totals are the caller's: the engine sums its
    /// recorders, [`Report::join`] adds the phases' histograms.
    pub(crate) fn add_phase(&mut self, phase: PhaseReport) {
        self.client.add(&phase.client);
        if phase.measured {
            let offset = self.duration_s;
            self.timeline.extend(shifted(&phase.timeline, offset));
            self.server_timeline
                .extend(shifted_samples(&phase.server_timeline, offset));
            let a = &phase.availability;
            if self.availability.longest_gap_ms < a.longest_gap_ms {
                self.availability = Availability {
                    longest_gap_ms: a.longest_gap_ms,
                    longest_gap_at_s: a.longest_gap_at_s + offset,
                };
            }
            for (name, node) in &phase.server_nodes {
                let acc = self.server_nodes.entry(name.clone()).or_default();
                acc.server_timeline
                    .extend(shifted_samples(&node.server_timeline, offset));
            }
            self.duration_s += phase.duration_s;
        }
        self.phases.push(phase);
    }

    /// What a run sums up once its last phase is in: the server load of the samples (per
    /// node and together), the validity of every phase's checks, and the client's CPU per
    /// million requests over every phase's requests.
    pub(crate) fn end_phases(&mut self) {
        for node in self.server_nodes.values_mut() {
            node.server_load = ServerLoad::of(&node.server_timeline);
        }
        self.server_load = match self.server_nodes.is_empty() {
            true => ServerLoad::of(&self.server_timeline),
            false => ServerLoad::of_nodes(&self.server_nodes),
        };
        let checks = self.phases.iter().flat_map(|p| p.validity.checks.clone());
        self.validity = Validity::of(checks.collect());
        let ops: u64 = self.phases.iter().map(|p| p.totals.ops).sum();
        let cpu = self.client.cpu_user_s + self.client.cpu_sys_s;
        self.client.cpu_s_per_million = cpu / ops.max(1) as f64 * 1e6;
    }
}

/// The run's timeline of its phases, as [`Report::add_phase`] builds it: the measured
/// phases' rows, `t` counting on across them.
pub(super) fn measured_timeline(phases: &[PhaseReport]) -> Vec<TimelineRow> {
    let mut out = Vec::new();
    let mut offset = 0.0;
    for p in phases.iter().filter(|p| p.measured) {
        out.extend(shifted(&p.timeline, offset));
        offset += p.duration_s;
    }
    out
}

/// Timeline rows with `offset` seconds added to their `t`.
fn shifted(rows: &[TimelineRow], offset: f64) -> impl Iterator<Item = TimelineRow> + '_ {
    rows.iter().map(move |row| TimelineRow {
        t: row.t + offset,
        ..row.clone()
    })
}

/// Server samples with `offset` seconds added to their `t`.
fn shifted_samples(
    samples: &[ServerSample],
    offset: f64,
) -> impl Iterator<Item = ServerSample> + '_ {
    samples.iter().map(move |s| ServerSample {
        t: s.t + offset,
        ..s.clone()
    })
}
