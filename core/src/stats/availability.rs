//! Availability figures: the stretches without any successful reply, and what each fault
//! drill did to the load (errors, p99 and throughput before and during, recovery).

use super::recorder::{Recorder, SuccessMarks, Timings, MARK_BUCKET_NS};
use crate::report::{percentile_ms, Availability, EventReport, TimelineRow};

/// Gaps at least this long are kept (for the per-event figures); shorter ones only count
/// towards the longest.
const KEEP_GAP_NS: u64 = 10_000_000;
/// At most this many gaps are kept; past it only gaps of 100 ms or more are.
const MAX_GAPS: usize = 100_000;
/// The throughput counted as recovered: this share of the level before a drill.
pub const RECOVERED_SHARE: f64 = 0.8;
/// Full timeline intervals before a drill that make its "before" figures, at most.
pub const BEFORE_INTERVALS: usize = 5;

/// A stretch without a successful reply, in nanoseconds since the start of measurement.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Gap {
    /// The last success before it (or the start of measurement).
    pub start_ns: u64,
    /// The first success after it (or the end of measurement).
    pub end_ns: u64,
}

impl Gap {
    fn len(&self) -> u64 {
        self.end_ns.saturating_sub(self.start_ns)
    }
}

/// The gaps of a phase.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Gaps {
    /// The longest.
    pub longest: Gap,
    /// Those of 10 ms or more, in time order (bounded, see [`GapTracker`]).
    pub kept: Vec<Gap>,
}

impl Gaps {
    /// The longest kept gap that overlaps `from_ns..to_ns`.
    pub fn longest_within(&self, from_ns: u64, to_ns: u64) -> Option<Gap> {
        self.kept
            .iter()
            .chain(std::iter::once(&self.longest))
            .filter(|g| g.start_ns < to_ns && g.end_ns > from_ns && g.len() >= KEEP_GAP_NS)
            .max_by_key(|g| g.len())
            .copied()
    }
}

/// Finds the gaps between successful replies as the intervals' success marks come in, in
/// bounded memory: buckets are settled (and dropped) once every worker has reported past them.
#[derive(Debug, Default)]
pub struct GapTracker {
    pending: SuccessMarks,
    last: Option<u64>,
    gaps: Gaps,
}

impl GapTracker {
    /// Take in one worker's marks.
    pub fn add(&mut self, marks: &SuccessMarks) {
        self.pending.merge(marks);
    }

    /// Every mark before `upto_ns` has arrived: account for the buckets before it.
    pub fn settle(&mut self, upto_ns: u64) {
        for (first, last) in self.pending.take_below(upto_ns / MARK_BUCKET_NS) {
            let from = self.last.unwrap_or(0);
            self.record(Gap {
                start_ns: from,
                end_ns: first,
            });
            self.last = Some(from.max(last));
        }
    }

    fn record(&mut self, g: Gap) {
        if g.end_ns <= g.start_ns {
            return;
        }
        if g.len() > self.gaps.longest.len() {
            self.gaps.longest = g;
        }
        let room = self.gaps.kept.len() < MAX_GAPS || g.len() >= 10 * KEEP_GAP_NS;
        if g.len() >= KEEP_GAP_NS && room {
            self.gaps.kept.push(g);
        }
    }

    /// Measurement ended at `end_ns`: the gaps, the stretch after the last success included.
    pub fn finish(mut self, end_ns: u64) -> Gaps {
        self.settle(u64::MAX);
        let from = self.last.unwrap_or(0);
        self.record(Gap {
            start_ns: from,
            end_ns,
        });
        self.gaps
    }
}

impl Availability {
    /// The figures of `gaps`.
    pub fn of(gaps: &Gaps) -> Availability {
        Availability {
            longest_gap_ms: gaps.longest.len() as f64 / 1e6,
            longest_gap_at_s: gaps.longest.start_ns as f64 / 1e9,
        }
    }
}

impl EventReport {
    /// Fill the load figures of a drill that started: `window` holds the requests finished
    /// during it; `timeline` and `intervals` (the interval recorders, same order) give the
    /// "before" level and the recovery; `end_s` is the end of measurement.
    pub fn fill_load_figures(
        &mut self,
        window: Option<&Recorder>,
        timeline: &[TimelineRow],
        intervals: &[&Recorder],
        gaps: &Gaps,
        end_s: f64,
    ) {
        let Some(start) = self.started_s else {
            return;
        };
        let end = self.finished_s.unwrap_or(end_s).max(start);
        let empty = Recorder::default();
        let w = window.unwrap_or(&empty).total();
        self.ops_during = Some(w.ops);
        self.errors_during = Some(w.errors);
        self.p99_during_ms = p99(&w.latency);
        self.longest_gap_ms = Some(
            gaps.longest_within((start * 1e9) as u64, (end * 1e9) as u64)
                .map_or(0.0, |g| g.len() as f64 / 1e6),
        );
        // Full intervals that ended by the start, the last few of them.
        let before: Vec<usize> = (0..timeline.len())
            .filter(|&i| timeline[i].t <= start + 1e-9)
            .collect();
        let before = &before[before.len().saturating_sub(BEFORE_INTERVALS)..];
        if before.is_empty() {
            return;
        }
        let mut t = Timings::default();
        let (mut ok, mut secs) = (0u64, 0.0);
        for &i in before {
            if let Some(r) = intervals.get(i) {
                for c in &r.commands {
                    t.merge(&c.latency);
                }
            }
            ok += timeline[i].ops - timeline[i].errors;
            secs += timeline[i].interval_s;
        }
        self.p99_before_ms = p99(&t);
        if secs <= 0.0 {
            return;
        }
        let level = ok as f64 / secs;
        self.throughput_before = Some(level);
        let rate = |r: &TimelineRow| {
            if r.interval_s > 0.0 {
                (r.ops - r.errors) as f64 / r.interval_s
            } else {
                0.0
            }
        };
        let after: Vec<&TimelineRow> = timeline.iter().filter(|r| r.t > start + 1e-9).collect();
        let line = level * RECOVERED_SHARE;
        self.recovered_after_s = match after.iter().position(|r| rate(r) < line) {
            None if after.is_empty() => None,
            None => Some(0.0),
            Some(dip) => after[dip + 1..]
                .iter()
                .find(|r| rate(r) >= line)
                .map(|r| (r.t - r.interval_s - start).max(0.0)),
        };
    }
}

fn p99(t: &Timings) -> Option<f64> {
    (!t.histogram.is_empty()).then(|| percentile_ms(&t.histogram, 0.99, t.max_ns))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn marks(ns: &[u64]) -> SuccessMarks {
        let mut m = SuccessMarks::default();
        ns.iter().for_each(|&n| m.mark(n));
        m
    }

    const MS: u64 = 1_000_000;

    #[test]
    fn the_longest_gap_spans_workers_and_settles_in_order() {
        let mut g = GapTracker::default();
        // Two workers: one stalls from 100 to 700 ms, the other from 300 to 650 ms.
        g.add(&marks(&[5 * MS, 50 * MS, 100 * MS, 700 * MS]));
        g.add(&marks(&[10 * MS, 300 * MS]));
        g.settle(1000 * MS);
        g.add(&marks(&[650 * MS + 1])); // late: already settled past, ignored as a gap
        g.add(&marks(&[
            1010 * MS,
            1200 * MS,
            1400 * MS,
            1600 * MS,
            1800 * MS,
            1950 * MS,
        ]));
        let gaps = g.finish(2000 * MS);
        // 300 to 700 ms: no success from either.
        assert_eq!(
            gaps.longest,
            Gap {
                start_ns: 300 * MS,
                end_ns: 700 * MS
            }
        );
        assert_eq!(
            gaps.longest_within(1050 * MS, 1100 * MS),
            Some(Gap {
                start_ns: 1010 * MS,
                end_ns: 1200 * MS
            })
        );
        // The stretch after the last success counts too.
        assert!(gaps.kept.contains(&Gap {
            start_ns: 1950 * MS,
            end_ns: 2000 * MS
        }));
        let a = Availability::of(&gaps);
        assert!(a.longest_gap_ms >= 400.0);
    }

    #[test]
    fn no_success_at_all_is_one_gap_over_the_whole_measurement() {
        let gaps = GapTracker::default().finish(3000 * MS);
        assert_eq!(Availability::of(&gaps).longest_gap_ms, 3000.0);
        assert_eq!(Availability::of(&gaps).longest_gap_at_s, 0.0);
    }

    fn row(t: f64, ops: u64, errors: u64) -> TimelineRow {
        TimelineRow {
            t,
            interval_s: 1.0,
            ops,
            errors,
            ..TimelineRow::default()
        }
    }

    #[test]
    fn recovery_is_the_first_interval_back_at_80_percent_after_a_dip() {
        let timeline = vec![
            row(1.0, 1000, 0),
            row(2.0, 1000, 0),
            row(3.0, 900, 500), // the drill starts at 2.5
            row(4.0, 700, 0),
            row(5.0, 950, 0),
        ];
        let mut e = EventReport {
            started_s: Some(2.5),
            finished_s: Some(3.2),
            ..EventReport::default()
        };
        e.fill_load_figures(None, &timeline, &[], &Gaps::default(), 5.0);
        assert_eq!(e.throughput_before, Some(1000.0));
        assert_eq!(e.recovered_after_s, Some(4.0 - 2.5));
        assert_eq!((e.ops_during, e.errors_during), (Some(0), Some(0)));
        assert_eq!(e.p99_during_ms, None);
        assert_eq!(e.p99_before_ms, None);
        assert_eq!(e.longest_gap_ms, Some(0.0));
        // Never below the line: 0; never back: null; no full interval before: null.
        let steady = vec![row(1.0, 1000, 0), row(2.0, 990, 0)];
        let mut e = EventReport {
            started_s: Some(1.2),
            ..EventReport::default()
        };
        e.fill_load_figures(None, &steady, &[], &Gaps::default(), 2.0);
        assert_eq!(e.recovered_after_s, Some(0.0));
        let down = vec![row(1.0, 1000, 0), row(2.0, 10, 0)];
        let mut e = EventReport {
            started_s: Some(1.2),
            ..EventReport::default()
        };
        e.fill_load_figures(None, &down, &[], &Gaps::default(), 2.0);
        assert_eq!(e.recovered_after_s, None);
        let mut e = EventReport {
            started_s: Some(0.5),
            ..EventReport::default()
        };
        e.fill_load_figures(None, &down, &[], &Gaps::default(), 2.0);
        assert_eq!((e.throughput_before, e.recovered_after_s), (None, None));
        // A drill that never started has no load figures.
        let mut e = EventReport::default();
        e.fill_load_figures(None, &down, &[], &Gaps::default(), 2.0);
        assert_eq!(e.ops_during, None);
    }
}
