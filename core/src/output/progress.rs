//! Live progress of a run, per phase: what the bindings' live displays show (a notebook's
//! bars, a terminal's line). The figures and the line come from here, so that every front end
//! shows the CLI's numbers.

use super::progress_line;
use crate::plan::Workload;
use crate::report::Snapshot;
use crate::spec::Requests;
use serde::Serialize;

/// What bounds a phase: whichever of its `requests` and `duration` is nearer its end.
#[derive(Debug, Clone, Copy, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Bound {
    /// `load.requests` (or `"all_keys"`: the key range's size).
    Requests,
    /// `load.duration`.
    Duration,
}

/// One phase's progress so far.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct PhaseProgress {
    /// The phase's name.
    pub phase: String,
    /// Whether the phase is measured.
    pub measured: bool,
    /// Whether a snapshot of this phase was seen.
    pub started: bool,
    /// Whether a later phase started, or the run ended ([`Progress::finish`]).
    pub finished: bool,
    /// What the bar counts (none for a phase bounded otherwise, e.g. by an `[slo]` search).
    pub bound: Option<Bound>,
    /// Requests finished, or seconds measured, so far (as `bound` says).
    pub done: f64,
    /// The bound: requests, or seconds.
    pub total: Option<f64>,
    /// `done / total`, 0 to 1 (1 once finished).
    pub fraction: Option<f64>,
    /// Seconds measured so far.
    pub elapsed_s: f64,
    /// Requests finished so far.
    pub ops: u64,
    /// Failed requests so far.
    pub errors: u64,
    /// The last interval's throughput.
    pub ops_per_sec: f64,
    /// The last interval's median latency (ms).
    pub p50_ms: f64,
    /// The last interval's 99th percentile latency (ms).
    pub p99_ms: f64,
    /// The CLI's live line of the last interval (empty before the first).
    pub line: String,
}

impl PhaseProgress {
    fn fresh(phase: &str, measured: bool) -> Self {
        PhaseProgress {
            phase: phase.into(),
            measured,
            started: false,
            finished: false,
            bound: None,
            done: 0.0,
            total: None,
            fraction: None,
            elapsed_s: 0.0,
            ops: 0,
            errors: 0,
            ops_per_sec: 0.0,
            p50_ms: 0.0,
            p99_ms: 0.0,
            line: String::new(),
        }
    }
}

/// The progress of every phase of a run, fed with its snapshots.
#[derive(Debug, Clone)]
pub struct Progress {
    phases: Vec<PhaseProgress>,
    requests: Vec<Option<f64>>,
    duration: Vec<Option<f64>>,
    current: usize,
}

impl Progress {
    /// Nothing done yet, the bounds taken from the workload's phases.
    pub fn new(workload: &Workload) -> Self {
        let mut requests = Vec::new();
        let mut duration = Vec::new();
        let phases = workload
            .phases
            .iter()
            .map(|p| {
                let load = &p.spec.load;
                requests.push(match load.requests {
                    Some(Requests::Count(n)) => Some(n as f64),
                    Some(Requests::AllKeys) => Some(p.spec.keys.count() as f64),
                    None if load.duration.is_none() => Some(100_000.0),
                    None => None,
                });
                duration.push(load.duration.map(|d| d.0.as_secs_f64()));
                PhaseProgress::fresh(&p.spec.name, p.spec.measured)
            })
            .collect();
        let mut progress = Progress {
            phases,
            requests,
            duration,
            current: 0,
        };
        for i in 0..progress.phases.len() {
            progress.bound(i);
        }
        progress
    }

    /// Count a snapshot in its phase (the first of that name from the current one on; earlier
    /// phases are then finished) and return that phase's progress.
    pub fn update(&mut self, s: &Snapshot) -> &PhaseProgress {
        let i = (self.current..self.phases.len())
            .find(|&i| self.phases[i].phase == s.phase)
            .or_else(|| self.phases.iter().position(|p| p.phase == s.phase));
        let i = match i {
            Some(i) => i,
            None => {
                // Not a phase of the workload (a search step's name): follow it at the end.
                self.phases.push(PhaseProgress::fresh(&s.phase, s.measured));
                self.requests.push(None);
                self.duration.push(None);
                self.phases.len() - 1
            }
        };
        for p in &mut self.phases[self.current.min(i)..i] {
            p.finished = true;
        }
        self.current = self.current.max(i);
        let r = &s.row;
        let p = &mut self.phases[i];
        p.started = true;
        p.measured = s.measured;
        p.elapsed_s = r.t;
        p.ops += r.ops;
        p.errors += r.errors;
        p.ops_per_sec = r.ops_per_sec;
        p.p50_ms = r.latency_ms.p50;
        p.p99_ms = r.latency_ms.p99;
        p.line = progress_line(s);
        self.bound(i);
        &self.phases[i]
    }

    /// The run ended: every phase started is finished.
    pub fn finish(&mut self) {
        for i in 0..self.phases.len() {
            if self.phases[i].started {
                self.phases[i].finished = true;
                self.bound(i);
            }
        }
    }

    /// Every phase's progress, in order.
    pub fn phases(&self) -> &[PhaseProgress] {
        &self.phases
    }

    /// Set phase `i`'s bound, done, total and fraction from its figures.
    fn bound(&mut self, i: usize) {
        let p = &mut self.phases[i];
        let by_requests = self.requests[i].map(|n| (Bound::Requests, p.ops as f64, n));
        let by_time = self.duration[i].map(|d| (Bound::Duration, p.elapsed_s, d));
        let fraction = |(_, done, total): (Bound, f64, f64)| {
            if total > 0.0 {
                (done / total).clamp(0.0, 1.0)
            } else {
                1.0
            }
        };
        let nearer = match (by_requests, by_time) {
            (Some(a), Some(b)) => Some(if fraction(a) >= fraction(b) { a } else { b }),
            (a, b) => a.or(b),
        };
        if let Some(b) = nearer {
            p.bound = Some(b.0);
            p.done = b.1;
            p.total = Some(b.2);
            p.fraction = Some(if p.finished { 1.0 } else { fraction(b) });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::TimelineRow;

    fn workload(json: serde_json::Value) -> Workload {
        Workload::from_json_value(json).unwrap()
    }

    fn snapshot(phase: &str, t: f64, ops: u64, errors: u64) -> Snapshot {
        let row: TimelineRow = serde_json::from_value(serde_json::json!({
            "t": t, "interval_s": 1.0, "ops": ops, "ops_per_sec": ops as f64, "errors": errors,
            "latency_ms": {"p50": 0.1, "p99": 0.5, "max": 1.0, "mean": 0.2},
            "connections": 2, "histogram": ""
        }))
        .unwrap();
        Snapshot {
            phase: phase.into(),
            measured: true,
            row,
        }
    }

    #[test]
    fn requests_bound_a_phase_and_a_later_phase_finishes_it() {
        let mut p = progress_of_two();
        let a = p.update(&snapshot("load", 1.0, 250, 1)).clone();
        assert_eq!(a.bound, Some(Bound::Requests));
        assert_eq!(a.total, Some(1000.0));
        assert_eq!(a.fraction, Some(0.25));
        assert_eq!(a.errors, 1);
        assert!(a.line.starts_with("[load]"), "{}", a.line);
        let b = p.update(&snapshot("soak", 2.0, 10, 0)).clone();
        assert_eq!(b.bound, Some(Bound::Duration));
        assert_eq!(b.fraction, Some(0.5));
        assert!(p.phases()[0].finished);
        assert!(!p.phases()[1].finished);
        p.finish();
        assert_eq!(p.phases()[1].fraction, Some(1.0));
    }

    fn progress_of_two() -> Progress {
        Progress::new(&workload(serde_json::json!({
            "target": {"port": 6399},
            "phases": [
                {"name": "load", "load": {"requests": 1000}},
                {"name": "soak", "load": {"duration": "4s"}}
            ]
        })))
    }
}
