//! Whether open-loop requests went out as a Poisson process: a fixed-size random sample of
//! the achieved gaps between sends, and the Anderson-Darling test of it against the
//! exponential distribution (as Lancet, USENIX ATC 2019, checks its own arrivals).

/// Gaps kept per worker thread (and in a merged sample): enough for the test to see a
/// distortion of a few percent, few enough that it does not flag the clock's jitter.
pub const SAMPLE: usize = 2000;

/// A's critical value at the 1% level for the exponential with its mean estimated from the
/// sample, for the statistic corrected by (1 + 0.6/n) (D'Agostino & Stephens, Goodness-of-Fit
/// Techniques, table 4.11).
pub const AD_CRITICAL_1PCT: f64 = 1.957;

/// A uniform random sample (reservoir sampling, Algorithm R) of gaps between sends, each in
/// units of the gap intended on average (so every connection and every ramp step is Exp(1)).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct GapSample {
    /// The sample.
    pub gaps: Vec<f64>,
    /// Gaps seen in all.
    pub seen: u64,
    state: u64,
}

impl GapSample {
    /// An empty sample whose choices follow `seed`.
    pub fn new(seed: u64) -> Self {
        GapSample {
            gaps: Vec::new(),
            seen: 0,
            state: seed | 1,
        }
    }

    /// Offer one gap.
    #[inline]
    pub fn offer(&mut self, gap: f64) {
        self.seen += 1;
        if self.gaps.len() < SAMPLE {
            self.gaps.push(gap);
            return;
        }
        // xorshift64: the choice of which gaps to keep needs no quality beyond uniformity.
        self.state ^= self.state << 13;
        self.state ^= self.state >> 7;
        self.state ^= self.state << 17;
        let j = ((self.state as u128 * self.seen as u128) >> 64) as usize;
        if j < SAMPLE {
            self.gaps[j] = gap;
        }
    }

    /// Add another sample of the same process: each keeps a share of the merged sample in
    /// proportion to the gaps it saw.
    pub fn merge(&mut self, other: &GapSample) {
        let total = self.seen + other.seen;
        if total == 0 {
            return;
        }
        let room = SAMPLE.min(self.gaps.len() + other.gaps.len());
        let mine = ((room as u128 * self.seen as u128) / total as u128) as usize;
        let mine = mine
            .min(self.gaps.len())
            .max(room.saturating_sub(other.gaps.len()));
        let theirs = room - mine;
        let mut gaps = thin(&self.gaps, mine);
        gaps.extend(thin(&other.gaps, theirs));
        self.gaps = gaps;
        self.seen = total;
    }
}

/// `k` values of `v` spread evenly over it (a sample not yet full is in time order).
fn thin(v: &[f64], k: usize) -> Vec<f64> {
    let k = k.min(v.len());
    (0..k).map(|i| v[i * v.len() / k]).collect()
}

/// The Anderson-Darling statistic A*² of `sample` against an exponential distribution whose
/// mean is estimated from the sample, with Stephens' small-sample correction; `None` with
/// fewer than 20 values or a mean of 0. Compare with [`AD_CRITICAL_1PCT`].
pub fn anderson_darling_exponential(sample: &[f64]) -> Option<f64> {
    let n = sample.len();
    if n < 20 {
        return None;
    }
    let mean = sample.iter().sum::<f64>() / n as f64;
    if mean <= 0.0 || !mean.is_finite() {
        return None;
    }
    let mut z: Vec<f64> = sample
        .iter()
        .map(|x| {
            // The CDF, kept off 0 and 1 so both logarithms stay finite (gaps of 0: requests
            // written together).
            let f = 1.0 - (-x.max(0.0) / mean).exp();
            f.clamp(1e-12, 1.0 - 1e-12)
        })
        .collect();
    z.sort_by(f64::total_cmp);
    let nf = n as f64;
    let s: f64 = (0..n)
        .map(|i| (2 * i + 1) as f64 * (z[i].ln() + (1.0 - z[n - 1 - i]).ln()))
        .sum();
    let a2 = -nf - s / nf;
    Some(a2 * (1.0 + 0.6 / nf))
}

/// Uniform numbers in `[0, 1)` from `seed` (SplitMix64), for this layer's tests: the
/// engine's generator is in a layer above.
#[cfg(test)]
pub(crate) fn test_uniform(seed: u64) -> impl FnMut() -> f64 {
    let mut state = seed;
    move || {
        state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        ((z ^ (z >> 31)) >> 11) as f64 / (1u64 << 53) as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exponential(n: usize, seed: u64) -> Vec<f64> {
        let mut unit = test_uniform(seed);
        (0..n).map(|_| -(1.0 - unit()).ln()).collect()
    }

    #[test]
    fn exponential_gaps_pass_and_others_fail() {
        let mut passed = 0;
        for seed in 0..100 {
            let a = anderson_darling_exponential(&exponential(SAMPLE, seed)).unwrap();
            passed += (a < AD_CRITICAL_1PCT) as u32;
        }
        // At the 1% level about 99 of 100 true samples pass.
        assert!(passed >= 95, "{passed}");
        // Even gaps (uniform arrivals), and gaps bunched on a 1 ms tick of a 2 ms mean.
        let even = vec![1.0; SAMPLE];
        assert!(anderson_darling_exponential(&even).unwrap() > 100.0);
        let ticked: Vec<f64> = exponential(SAMPLE, 7)
            .iter()
            .map(|g| (g * 2.0).floor() / 2.0)
            .collect();
        let a = anderson_darling_exponential(&ticked).unwrap();
        assert!(a > AD_CRITICAL_1PCT, "{a}");
        assert_eq!(anderson_darling_exponential(&[1.0; 5]), None);
        assert_eq!(anderson_darling_exponential(&[0.0; 50]), None);
    }

    #[test]
    fn a_reservoir_keeps_a_uniform_sample_and_merges_in_proportion() {
        let mut s = GapSample::new(3);
        for i in 0..100_000 {
            s.offer(i as f64);
        }
        assert_eq!((s.gaps.len(), s.seen), (SAMPLE, 100_000));
        // A uniform sample of 0..100,000 has a mean near 50,000 (sd about 650).
        let mean = s.gaps.iter().sum::<f64>() / SAMPLE as f64;
        assert!((mean - 50_000.0).abs() < 3_000.0, "{mean}");
        let mut small = GapSample::new(4);
        for _ in 0..100 {
            small.offer(-1.0);
        }
        let mut m = small.clone();
        m.merge(&s);
        assert_eq!((m.gaps.len(), m.seen), (SAMPLE, 100_100));
        // 100 of 100,100 gaps: 1 or 2 of the 2,000 kept.
        let from_small = m.gaps.iter().filter(|g| **g < 0.0).count();
        assert!((1..=3).contains(&from_small), "{from_small}");
        let mut empty = GapSample::default();
        empty.merge(&small);
        assert_eq!((empty.gaps.len(), empty.seen), (100, 100));
    }
}
