//! Key samplers: turn a distribution from the spec into key offsets within the range, with
//! no allocation and at most a few floating-point operations per request.

use super::rng::Rng;
use crate::spec::{Distribution, Shares};
use std::cell::Cell;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// The run-wide counters of sequential keys: the key's, one for each of `{draw1}` ...
/// `{draw9}`, then `{draw}`'s (valkey-benchmark `--sequential` counts each placeholder on
/// its own).
pub type SequenceCounters = [AtomicU64; 11];

/// The counter of `{draw}` in [`SequenceCounters`].
pub const DRAW_COUNTER: usize = 10;

/// Sequential keys handed out in chunks from run-wide counters, so that threads share one
/// sequence with one atomic operation per chunk instead of per request.
#[derive(Debug)]
pub struct Sequence {
    global: Arc<SequenceCounters>,
    next: [Cell<u64>; 11],
    end: [Cell<u64>; 11],
}

const SEQUENCE_CHUNK: u64 = 64;

impl Sequence {
    /// A thread's view of the run-wide counters.
    pub fn new(global: Arc<SequenceCounters>) -> Self {
        Sequence {
            global,
            next: Default::default(),
            end: Default::default(),
        }
    }

    /// The next number of counter `i` (0: the key's; 1 to 9: `{draw1}` ... `{draw9}`; 10:
    /// `{draw}`).
    /// `want` bounds the chunk taken, so that a request budget of N claims exactly N numbers
    /// between all threads.
    #[inline]
    pub fn take_of(&self, i: usize, want: u64) -> u64 {
        let i = i.min(self.next.len() - 1);
        let (next, end) = (&self.next[i], &self.end[i]);
        if next.get() == end.get() {
            let n = want.clamp(1, SEQUENCE_CHUNK);
            let start = self.global[i].fetch_add(n, Ordering::Relaxed);
            next.set(start);
            end.set(start + n);
        }
        let v = next.get();
        next.set(v + 1);
        v
    }
}

/// The slice of `span` keys that connection `index` of `total` walks with the parallel
/// distribution: `(first offset, length)`. Slices are contiguous, disjoint and cover the range.
pub fn parallel_slice(index: u64, total: u64, span: u64) -> (u64, u64) {
    let at = |i: u64| (i as u128 * span as u128 / total.max(1) as u128) as u64;
    (at(index), at(index + 1) - at(index))
}

/// One command's way of drawing key offsets in `0..span`.
#[derive(Debug, Clone)]
pub enum KeySampler {
    /// Uniform.
    Uniform,
    /// The run-wide sequence.
    Sequential,
    /// This connection's own slice, in order.
    Parallel {
        /// First offset of the slice.
        start: u64,
        /// Keys in the slice (at least 1).
        len: u64,
        /// Next position within the slice.
        next: u64,
    },
    /// Normal, redrawn when outside the range.
    Gaussian {
        /// Centre, as an offset.
        mean: f64,
        /// Standard deviation.
        stddev: f64,
    },
    /// Bounded Zipf by rejection-inversion.
    Zipf(Zipf),
    /// Hot keys first, cold keys after.
    Hotset {
        /// Number of hot keys (the range's first).
        hot: u64,
        /// Probability of a hot pick, scaled to 2^64.
        threshold: u64,
    },
    /// Given shares for the range's first keys, a tail after them.
    Empirical {
        /// The first keys' shares, as running thresholds.
        shares: Shares,
        /// Keys after the shares' (0: the shares are relative weights).
        tail_len: u64,
        /// Zipf over the tail's own ranks; none: uniform over the tail.
        tail: Option<Zipf>,
    },
}

impl KeySampler {
    /// The sampler for `d` over `span` keys starting at `lo`, for connection `index` of `total`.
    pub fn new(d: &Distribution, lo: u64, span: u64, index: u64, total: u64) -> Self {
        match *d {
            Distribution::Uniform => KeySampler::Uniform,
            Distribution::Sequential => KeySampler::Sequential,
            Distribution::Parallel => {
                let (start, len) = parallel_slice(index, total, span);
                KeySampler::Parallel {
                    start,
                    len: len.max(1),
                    next: 0,
                }
            }
            Distribution::Gaussian { median, stddev } => KeySampler::Gaussian {
                mean: median.map_or((span - 1) as f64 / 2.0, |m| m - lo as f64),
                stddev: stddev.unwrap_or(span as f64 / 6.0).max(f64::MIN_POSITIVE),
            },
            Distribution::Zipf { exponent } => KeySampler::Zipf(Zipf::new(span, exponent)),
            Distribution::Hotset { hot_keys, hot_ops } => {
                let hot = ((span as f64 * hot_keys).round() as u64).clamp(1, span);
                KeySampler::Hotset {
                    hot,
                    threshold: (hot_ops * u64::MAX as f64) as u64,
                }
            }
            Distribution::Empirical {
                ref shares,
                tail_exponent,
            } => {
                let tail_len = span.saturating_sub(shares.as_slice().len() as u64);
                KeySampler::Empirical {
                    shares: shares.clone(),
                    tail_len,
                    tail: tail_exponent
                        .filter(|_| tail_len > 0)
                        .map(|s| Zipf::new(tail_len, s)),
                }
            }
        }
    }

    /// The next offset in `0..span`. `budget_left` bounds sequential chunks.
    #[inline]
    pub fn draw(&mut self, rng: &mut Rng, span: u64, sequence: &Sequence, budget_left: u64) -> u64 {
        self.draw_of(0, rng, span, sequence, budget_left)
    }

    /// [`KeySampler::draw`], sequential keys taken from counter `counter` of the sequence.
    #[inline]
    pub fn draw_of(
        &mut self,
        counter: usize,
        rng: &mut Rng,
        span: u64,
        sequence: &Sequence,
        budget_left: u64,
    ) -> u64 {
        match self {
            KeySampler::Uniform => rng.below(span),
            KeySampler::Sequential => sequence.take_of(counter, budget_left) % span,
            KeySampler::Parallel { start, len, next } => {
                let k = *start + *next;
                *next = if *next + 1 == *len { 0 } else { *next + 1 };
                k.min(span - 1)
            }
            KeySampler::Gaussian { mean, stddev } => {
                for _ in 0..64 {
                    let x = (*mean + *stddev * standard_normal(rng)).round();
                    if x >= 0.0 && x < span as f64 {
                        return x as u64;
                    }
                }
                mean.clamp(0.0, (span - 1) as f64) as u64
            }
            KeySampler::Zipf(z) => z.sample(rng) - 1,
            KeySampler::Hotset { hot, threshold } => {
                if rng.next_u64() < *threshold || *hot == span {
                    rng.below(*hot)
                } else {
                    *hot + rng.below(span - *hot)
                }
            }
            KeySampler::Empirical {
                shares,
                tail_len,
                tail,
            } => {
                let cum = shares.cumulative();
                let top = cum.last().copied().unwrap_or(0);
                let u = if *tail_len == 0 {
                    rng.below(top.max(1))
                } else {
                    rng.next_u64()
                };
                let k = if u < top || *tail_len == 0 {
                    // The first rank whose running threshold passes u.
                    (cum.partition_point(|&c| c <= u) as u64).min(cum.len() as u64 - 1)
                } else {
                    cum.len() as u64
                        + match tail {
                            Some(z) => z.sample(rng) - 1,
                            None => rng.below(*tail_len),
                        }
                };
                k.min(span - 1)
            }
        }
    }
}

/// A standard normal variate (Box-Muller, one of the pair).
#[inline]
fn standard_normal(rng: &mut Rng) -> f64 {
    let u1 = 1.0 - rng.unit(); // in (0, 1]: ln is finite
    let u2 = rng.unit();
    (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
}

/// Bounded Zipf over ranks `1..=n` with weight `k^-s`, by Hörmann and Derflinger's
/// rejection-inversion (as Apache Commons RNG's sampler): O(1) per draw for any `n`.
#[derive(Debug, Clone)]
pub struct Zipf {
    n: f64,
    s: f64,
    h_x1: f64,
    h_n: f64,
    cut: f64,
}

impl Zipf {
    /// The distribution over `1..=n` with exponent `s > 0`.
    pub fn new(n: u64, s: f64) -> Self {
        let mut z = Zipf {
            n: n as f64,
            s,
            h_x1: 0.0,
            h_n: 0.0,
            cut: 0.0,
        };
        z.h_x1 = z.h_integral(1.5) - 1.0;
        z.h_n = z.h_integral(n as f64 + 0.5);
        z.cut = 2.0 - z.h_integral_inverse(z.h_integral(2.5) - z.h(2.0));
        z
    }

    /// A rank in `1..=n`.
    #[inline]
    pub fn sample(&self, rng: &mut Rng) -> u64 {
        loop {
            let u = self.h_n + rng.unit() * (self.h_x1 - self.h_n);
            let x = self.h_integral_inverse(u);
            let k = (x + 0.5).floor().clamp(1.0, self.n);
            if k - x <= self.cut || u >= self.h_integral(k + 0.5) - self.h(k) {
                return k as u64;
            }
        }
    }

    fn h(&self, x: f64) -> f64 {
        (-self.s * x.ln()).exp()
    }

    fn h_integral(&self, x: f64) -> f64 {
        let log_x = x.ln();
        helper2((1.0 - self.s) * log_x) * log_x
    }

    fn h_integral_inverse(&self, x: f64) -> f64 {
        let t = (x * (1.0 - self.s)).max(-1.0);
        (helper1(t) * x).exp()
    }
}

/// ln(1 + x) / x, accurate near 0.
fn helper1(x: f64) -> f64 {
    if x.abs() > 1e-8 {
        x.ln_1p() / x
    } else {
        1.0 - x * (0.5 - x * (1.0 / 3.0 - 0.25 * x))
    }
}

/// (e^x - 1) / x, accurate near 0.
fn helper2(x: f64) -> f64 {
    if x.abs() > 1e-8 {
        x.exp_m1() / x
    } else {
        1.0 + x * 0.5 * (1.0 + x / 3.0 * (1.0 + 0.25 * x))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn draws(d: Distribution, span: u64, n: usize) -> Vec<u64> {
        let seq = Sequence::new(Arc::default());
        let mut s = KeySampler::new(&d, 0, span, 0, 1);
        let mut rng = Rng::new(7);
        (0..n).map(|_| s.draw(&mut rng, span, &seq, 1)).collect()
    }

    /// Pearson's chi-square statistic of `observed` counts against `expected` probabilities.
    fn chi_square(observed: &[u64], expected: &[f64]) -> f64 {
        let n: u64 = observed.iter().sum();
        observed
            .iter()
            .zip(expected)
            .map(|(&o, &p)| {
                let e = p * n as f64;
                (o as f64 - e).powi(2) / e
            })
            .sum()
    }

    #[test]
    fn uniform_passes_chi_square() {
        let mut counts = vec![0u64; 50];
        for k in draws(Distribution::Uniform, 50, 200_000) {
            counts[k as usize] += 1;
        }
        // 49 degrees of freedom: the 99.9th percentile of chi-square is 85.4.
        let x2 = chi_square(&counts, &[1.0 / 50.0; 50]);
        assert!(x2 < 85.4, "chi-square {x2}");
    }

    #[test]
    fn gaussian_quantiles_match_the_normal() {
        let d = Distribution::Gaussian {
            median: Some(5_000.0),
            stddev: Some(500.0),
        };
        let mut xs = draws(d, 10_001, 100_000);
        xs.sort_unstable();
        let q = |p: f64| xs[(p * xs.len() as f64) as usize] as f64;
        // Normal quantiles: z(0.5) = 0, z(0.8413) = 1, z(0.0228) = -2, z(0.9987) = 3.
        for (p, z) in [(0.5, 0.0), (0.8413, 1.0), (0.0228, -2.0), (0.9987, 3.0)] {
            let want = 5_000.0 + z * 500.0;
            assert!((q(p) - want).abs() < 25.0, "q({p}) = {} want {want}", q(p));
        }
        // Defaults: centre of the range, a sixth of it as the deviation; nothing escapes it.
        let xs = draws(
            Distribution::Gaussian {
                median: None,
                stddev: None,
            },
            600,
            50_000,
        );
        let mean = xs.iter().sum::<u64>() as f64 / xs.len() as f64;
        assert!((mean - 299.5).abs() < 3.0, "{mean}");
        assert!(xs.iter().all(|&k| k < 600));
    }

    #[test]
    fn zipf_rank_frequency_slope_is_the_exponent() {
        for s in [0.8, 1.0, 1.5] {
            let span = 1_000_000;
            let mut counts = vec![0u64; 101];
            for k in draws(Distribution::Zipf { exponent: s }, span, 400_000) {
                if k < 100 {
                    counts[k as usize + 1] += 1;
                }
            }
            // Least squares of ln(frequency) on ln(rank) over ranks 1..=20.
            let pts: Vec<(f64, f64)> = (1..=20)
                .map(|r| ((r as f64).ln(), (counts[r] as f64).ln()))
                .collect();
            let n = pts.len() as f64;
            let (mx, my) = (
                pts.iter().map(|p| p.0).sum::<f64>() / n,
                pts.iter().map(|p| p.1).sum::<f64>() / n,
            );
            let slope = pts.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum::<f64>()
                / pts.iter().map(|p| (p.0 - mx).powi(2)).sum::<f64>();
            assert!((slope + s).abs() < 0.06, "exponent {s}: slope {slope}");
        }
        // Small ranges: every rank reachable, none beyond.
        let xs = draws(Distribution::Zipf { exponent: 1.0 }, 3, 10_000);
        assert!(xs.iter().all(|&k| k < 3) && xs.contains(&2));
    }

    #[test]
    fn hotset_sends_the_asked_share_to_the_hot_keys() {
        let d = Distribution::Hotset {
            hot_keys: 0.1,
            hot_ops: 0.9,
        };
        let xs = draws(d, 1000, 100_000);
        let hot = xs.iter().filter(|&&k| k < 100).count() as f64 / xs.len() as f64;
        assert!((hot - 0.9).abs() < 0.006, "{hot}");
        // Within each part, uniform: chi-square over 10 buckets of the hot keys.
        let mut counts = vec![0u64; 10];
        for &k in xs.iter().filter(|&&k| k < 100) {
            counts[(k / 10) as usize] += 1;
        }
        assert!(chi_square(&counts, &[0.1; 10]) < 27.9); // 9 dof, 99.9th percentile
        assert!(xs.iter().any(|&k| k >= 900));
    }

    #[test]
    fn empirical_gives_each_first_key_its_share_and_the_tail_the_rest() {
        let shares = vec![0.3, 0.0, 0.1, 0.05];
        let d = Distribution::Empirical {
            shares: Shares::new(shares.clone()),
            tail_exponent: Some(1.0),
        };
        let n = 400_000;
        let span = 1004;
        let mut counts = vec![0u64; span as usize];
        for k in draws(d, span, n) {
            counts[k as usize] += 1;
        }
        // Each share within 4 standard deviations of its binomial count; a 0 share never.
        for (i, &p) in shares.iter().enumerate() {
            let sd = (n as f64 * p * (1.0 - p)).sqrt();
            let got = counts[i] as f64;
            assert!(
                (got - n as f64 * p).abs() <= 4.0 * sd,
                "rank {}: {got}",
                i + 1
            );
        }
        assert_eq!(counts[1], 0);
        // The tail: 55% over 1000 keys by Zipf(1) of their own ranks; its first key gets
        // 0.55 / H(1000, 1).
        let h: f64 = (1..=1000).map(|r| 1.0 / r as f64).sum();
        let p = 0.55 / h;
        let sd = (n as f64 * p * (1.0 - p)).sqrt();
        assert!(
            (counts[4] as f64 - n as f64 * p).abs() <= 4.0 * sd,
            "{}",
            counts[4]
        );
        let tail: u64 = counts[4..].iter().sum();
        assert!((tail as f64 / n as f64 - 0.55).abs() < 0.005, "{tail}");
        assert!(counts[span as usize - 1] > 0);

        // Without a tail exponent, the tail is uniform; with no tail, shares are weights.
        let d = Distribution::Empirical {
            shares: Shares::new(vec![0.5]),
            tail_exponent: None,
        };
        let xs = draws(d, 11, 100_000);
        let mut c = vec![0u64; 11];
        xs.iter().for_each(|&k| c[k as usize] += 1);
        assert!(chi_square(&c[1..], &[0.1; 10]) < 27.9, "{c:?}"); // 9 dof, 99.9th percentile
        let d = Distribution::Empirical {
            shares: Shares::new(vec![0.2, 0.6]),
            tail_exponent: Some(1.0),
        };
        let xs = draws(d, 2, 100_000);
        let first = xs.iter().filter(|&&k| k == 0).count() as f64 / xs.len() as f64;
        assert!((first - 0.25).abs() < 0.006, "{first}");
    }

    #[test]
    fn parallel_slices_cover_the_range_once() {
        let span = 1003;
        let mut seen = vec![0u32; span as usize];
        for c in 0..7 {
            let (start, len) = parallel_slice(c, 7, span);
            let mut s = KeySampler::new(&Distribution::Parallel, 0, span, c, 7);
            let seq = Sequence::new(Arc::default());
            let mut rng = Rng::new(1);
            for i in 0..len {
                let k = s.draw(&mut rng, span, &seq, 1);
                assert_eq!(k, start + i);
                seen[k as usize] += 1;
            }
            // Then it wraps within its own slice.
            assert_eq!(s.draw(&mut rng, span, &seq, 1), start);
        }
        assert!(seen.iter().all(|&n| n == 1));
    }
}
