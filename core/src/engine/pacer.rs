//! Open-loop pacing: each connection's intended send times, evenly spaced or Poisson.

use super::rng::Rng;
use crate::spec::Arrivals;
use std::time::{Duration, Instant};

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
            next: start + Duration::from_secs_f64(offset),
            gap,
            poisson: arrivals == Arrivals::Poisson,
            rng,
        }
    }

    /// When the next request is due.
    #[inline]
    pub fn due(&self) -> Instant {
        self.next
    }

    /// Move on to the request after.
    #[inline]
    pub fn advance(&mut self) {
        self.offset += if self.poisson {
            // Exponential gap with mean `gap`; 1 - U lies in (0, 1], so ln is finite.
            -(1.0 - self.rng.unit()).ln() * self.gap
        } else {
            self.gap
        };
        self.next = self.base + Duration::from_secs_f64(self.offset);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
