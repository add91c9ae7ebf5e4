//! Open-loop pacing: each connection's intended send times, evenly spaced or Poisson, at a
//! fixed rate or along a rate staircase.

use super::feed::Cursor;
use super::rng::Rng;
use crate::spec::Arrivals;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A rate staircase as a connection sees it: its own gap in each step.
#[derive(Debug, Clone)]
pub struct Staircase {
    /// Seconds from the pacer's start to the end of the first step (may be negative when
    /// the connection opened later).
    first_end: f64,
    /// Length of a step in seconds.
    step: f64,
    /// Seconds between this connection's requests in each step; the last holds forever.
    gaps: Arc<[f64]>,
}

impl Staircase {
    /// The step that `t` seconds from the pacer's start lie in.
    fn step_at(&self, t: f64) -> usize {
        if t < self.first_end {
            0
        } else {
            (((t - self.first_end) / self.step).floor() as usize + 1).min(self.gaps.len() - 1)
        }
    }

    /// How many of the connection's gaps fit between `from` and `to` (seconds from the
    /// pacer's start), each step's part at that step's gap: one request is due at `from`,
    /// and one more for each whole gap after it.
    pub fn gaps_between(&self, from: f64, to: f64) -> f64 {
        let (mut t, mut k, mut total) = (from, self.step_at(from), 0.0);
        while t < to {
            let last = k + 1 == self.gaps.len();
            let end = if last {
                to
            } else {
                (self.first_end + self.step * k as f64).min(to)
            };
            total += (end - t).max(0.0) / self.gaps[k];
            if last {
                break;
            }
            t = t.max(end);
            k += 1;
        }
        total
    }
}

/// Intended send times are at most this many seconds (about 31 years) from the pacer's start:
/// later ones would overflow `Instant`, and are never reached anyway.
const FAR: f64 = 1e9;

/// `base` plus `offset` seconds, the offset held between 0 and [`FAR`] (NaN counts as 0).
fn at(base: Instant, offset: f64) -> Instant {
    base + Duration::from_secs_f64(offset.clamp(0.0, FAR).max(0.0))
}

/// One connection's schedule of intended send times.
#[derive(Debug, Clone)]
pub struct Pacer {
    base: Instant,
    /// Seconds from `base` to the next intended send, kept as a float so that rounding
    /// never accumulates into a rate error.
    offset: f64,
    next: Instant,
    gap: f64,
    poisson: bool,
    rng: Rng,
    /// With a rate ramp: the staircase, and the step `offset` lies in.
    ramp: Option<(Staircase, usize)>,
    /// A replay: the recorded schedule, and whether `next` is only when to look again
    /// (nothing was queued for the connection yet).
    replay: Option<(Cursor, bool)>,
}

impl Pacer {
    /// A schedule of `rate` requests per second from `start`, shifted by `phase` (0 to 1) of
    /// one gap so that evenly paced connections do not send in step.
    pub fn new(start: Instant, rate: f64, arrivals: Arrivals, phase: f64, rng: Rng) -> Self {
        let gap = 1.0 / rate;
        let offset = gap * phase.clamp(0.0, 1.0);
        Pacer {
            base: start,
            offset,
            next: at(start, offset),
            gap,
            poisson: arrivals == Arrivals::Poisson,
            rng,
            ramp: None,
            replay: None,
        }
    }

    /// A replay's schedule: each request at its recorded instant (`cursor`); `gap` is the
    /// connection's mean gap, for the figures that need one.
    pub fn replayed(cursor: Cursor, gap: f64) -> Self {
        let (next, waiting) = cursor.due();
        Pacer {
            base: next,
            offset: 0.0,
            next,
            gap,
            poisson: false,
            rng: Rng::for_stream(0, 0, 0),
            ramp: None,
            replay: Some((cursor, waiting)),
        }
    }

    /// A replay with nothing queued yet: `due` is only when to look again.
    #[inline]
    pub fn waiting(&self) -> bool {
        matches!(self.replay, Some((_, true)))
    }

    /// A replay: look again for the next request (when [`Pacer::waiting`]).
    pub fn refresh(&mut self) {
        if let Some((cursor, waiting)) = &mut self.replay {
            let (next, w) = cursor.due();
            self.next = next;
            *waiting = w;
        }
    }

    /// A schedule from `start` along a staircase: `rates[k]` requests per second from
    /// `origin + k * step` (the first rate before that too, the last one for ever after).
    pub fn ramped(
        start: Instant,
        origin: Instant,
        step: Duration,
        rates: &Arc<[f64]>,
        arrivals: Arrivals,
        phase: f64,
        rng: Rng,
    ) -> Self {
        let secs = |t: Instant| match t.checked_duration_since(start) {
            Some(d) => d.as_secs_f64(),
            None => -start.duration_since(t).as_secs_f64(),
        };
        let step = step.as_secs_f64();
        let gaps: Arc<[f64]> = rates.iter().map(|r| 1.0 / r).collect();
        let first_end = secs(origin) + step;
        let stairs = Staircase {
            first_end,
            step,
            gaps,
        };
        // The step the pacer starts in (a connection opened during a ramp).
        let k = stairs.step_at(0.0);
        let mut p = Pacer::new(start, 1.0 / stairs.gaps[k], arrivals, phase, rng);
        p.ramp = Some((stairs, k));
        p
    }

    /// Along a rate ramp: the schedule's start and its staircase.
    pub fn staircase(&self) -> Option<(Instant, Staircase)> {
        self.ramp.as_ref().map(|(s, _)| (self.base, s.clone()))
    }

    /// When the next request is due.
    #[inline]
    pub fn due(&self) -> Instant {
        self.next
    }

    /// Seconds between this connection's requests around the next one (with a ramp, the gap
    /// of the step that request falls in; the mean gap for Poisson arrivals).
    #[inline]
    pub fn gap(&self) -> f64 {
        match &self.ramp {
            Some((s, k)) => s.gaps[*k],
            None => self.gap,
        }
    }

    /// Move on to the request after.
    #[inline]
    pub fn advance(&mut self) {
        if let Some((cursor, waiting)) = &mut self.replay {
            if !*waiting {
                cursor.pop();
            }
            let (next, w) = cursor.due();
            self.next = next;
            *waiting = w;
            return;
        }
        // One gap's worth of "work": 1 for even gaps, Exp(1) for Poisson; 1 - U lies in
        // (0, 1], so ln is finite.
        let units = if self.poisson {
            -(1.0 - self.rng.unit()).ln()
        } else {
            1.0
        };
        match &mut self.ramp {
            None => self.offset += units * self.gap,
            Some((s, k)) => {
                // Spend the units step by step: the part that crosses into the next step
                // runs at that step's rate (exact for Poisson, which is memoryless).
                let mut units = units;
                loop {
                    let gap = s.gaps[*k];
                    let end = s.first_end + s.step * *k as f64;
                    if *k + 1 == s.gaps.len() || self.offset + units * gap <= end {
                        self.offset += units * gap;
                        break;
                    }
                    units -= (end - self.offset).max(0.0) / gap;
                    self.offset = self.offset.max(end);
                    *k += 1;
                }
            }
        }
        self.next = at(self.base, self.offset);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_gap_beyond_the_clock_is_held_far_away() {
        // What a search halving its rate 70 times would ask of one connection.
        let t0 = Instant::now();
        for arrivals in [Arrivals::Uniform, Arrivals::Poisson] {
            let mut p = Pacer::new(t0, 1e-20, arrivals, 0.5, Rng::new(1));
            p.advance();
            p.advance();
            let far = p.due().duration_since(t0).as_secs_f64();
            assert!((FAR * 0.99..=FAR).contains(&far), "{far}");
        }
        let mut p = Pacer::new(t0, f64::MIN_POSITIVE, Arrivals::Uniform, 0.0, Rng::new(1));
        p.advance();
        assert!(p.due() > t0);
    }

    #[test]
    fn even_and_poisson_schedules_keep_the_rate() {
        let t0 = Instant::now();
        for arrivals in [Arrivals::Uniform, Arrivals::Poisson] {
            let mut p = Pacer::new(t0, 1000.0, arrivals, 0.5, Rng::new(9));
            assert!(p.due() >= t0);
            let mut gaps = Vec::new();
            let mut last = p.due();
            for _ in 0..100_000 {
                p.advance();
                gaps.push(p.due().duration_since(last).as_secs_f64());
                last = p.due();
            }
            // 100,000 gaps of 1 ms on average: 100 s within 1%.
            let total = p.due().duration_since(t0).as_secs_f64();
            assert!((total - 100.0).abs() < 1.0, "{arrivals:?}: {total}");
            let mean = gaps.iter().sum::<f64>() / gaps.len() as f64;
            let var = gaps.iter().map(|g| (g - mean).powi(2)).sum::<f64>() / gaps.len() as f64;
            match arrivals {
                // Even gaps: no spread at all (up to the clock's nanoseconds).
                Arrivals::Uniform => assert!(var.sqrt() < 1e-8, "{}", var.sqrt()),
                // Exponential gaps: the standard deviation equals the mean.
                Arrivals::Poisson => assert!((var.sqrt() / mean - 1.0).abs() < 0.02),
            }
        }
    }

    /// Count the sends of `p` in each second up to `secs` seconds after `t0`.
    fn per_second(mut p: Pacer, t0: Instant, secs: usize) -> Vec<u64> {
        let mut counts = vec![0u64; secs];
        loop {
            let at = p.due().duration_since(t0).as_secs_f64() as usize;
            if at >= secs {
                return counts;
            }
            counts[at] += 1;
            p.advance();
        }
    }

    #[test]
    fn a_staircase_sends_each_steps_rate_in_that_step() {
        let t0 = Instant::now();
        let rates: Arc<[f64]> = vec![1000.0, 3000.0, 500.0].into();
        let step = Duration::from_secs(10);
        let even = Pacer::ramped(t0, t0, step, &rates, Arrivals::Uniform, 0.0, Rng::new(1));
        let counts = per_second(even, t0, 40);
        for (s, &n) in counts.iter().enumerate() {
            let want = [1000, 3000, 500, 500][s / 10];
            assert!(n.abs_diff(want) <= 1, "second {s}: {n} for {want}");
        }
        let poisson = Pacer::ramped(t0, t0, step, &rates, Arrivals::Poisson, 0.0, Rng::new(2));
        let counts = per_second(poisson, t0, 30);
        for k in 0..3 {
            let n: u64 = counts[k * 10..(k + 1) * 10].iter().sum();
            let want = rates[k] * 10.0;
            // Poisson counts: within 5 standard deviations.
            assert!((n as f64 - want).abs() < 5.0 * want.sqrt(), "step {k}: {n}");
        }
    }

    #[test]
    fn a_connection_opened_during_a_ramp_starts_at_the_current_step() {
        let t0 = Instant::now();
        let rates: Arc<[f64]> = vec![100.0, 200.0, 400.0].into();
        let step = Duration::from_secs(1);
        // Opened 1.5 s after the ramp began: in the second step, then the third.
        let start = t0 + Duration::from_millis(1500);
        let p = Pacer::ramped(start, t0, step, &rates, Arrivals::Uniform, 0.0, Rng::new(3));
        let counts = per_second(p, start, 3);
        assert!(counts[0].abs_diff(100 + 200) <= 2, "{counts:?}");
        assert!(
            counts[1].abs_diff(400) <= 1 && counts[2].abs_diff(400) <= 1,
            "{counts:?}"
        );
    }
}
