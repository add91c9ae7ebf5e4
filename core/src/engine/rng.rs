//! A small, fast, seedable generator (wyrand): the same seed gives the same request stream.

/// wyrand: one multiply per number, good enough statistics for load generation.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// A generator for `seed` (the tests'; runs take [`Rng::for_stream`]).
    #[cfg(test)]
    pub fn new(seed: u64) -> Self {
        Rng(seed)
    }

    /// A generator for one stream (`phase`, `connection`) of a run's `seed`.
    pub fn for_stream(seed: u64, phase: u64, connection: u64) -> Self {
        Rng(mix(seed
            ^ mix(
                phase.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ mix(connection)
            )))
    }

    /// The next 64 random bits.
    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0xa076_1d64_78bd_642f);
        let t = (self.0 as u128).wrapping_mul((self.0 ^ 0xe703_7ed1_a0b4_28db) as u128);
        ((t >> 64) as u64) ^ (t as u64)
    }

    /// Uniform in `0..n` (n > 0), by multiply-shift: no division on the hot path.
    #[inline]
    pub fn below(&mut self, n: u64) -> u64 {
        ((self.next_u64() as u128 * n as u128) >> 64) as u64
    }

    /// Uniform in `[0, 1)`, with 53 random bits.
    #[inline]
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// Uniform in `lo..=hi`.
    #[inline]
    pub fn between(&mut self, lo: i64, hi: i64) -> i64 {
        let span = (hi as i128 - lo as i128 + 1) as u128;
        if span > u64::MAX as u128 {
            return self.next_u64() as i64;
        }
        (lo as i128 + self.below(span as u64) as i128) as i64
    }
}

/// SplitMix64's finalizer: spreads nearby seeds far apart.
pub fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reproducible_and_in_range() {
        let mut a = Rng::for_stream(42, 0, 3);
        let mut b = Rng::for_stream(42, 0, 3);
        let mut c = Rng::for_stream(42, 0, 4);
        let xs: Vec<u64> = (0..100).map(|_| a.next_u64()).collect();
        assert_eq!(xs, (0..100).map(|_| b.next_u64()).collect::<Vec<_>>());
        assert_ne!(xs, (0..100).map(|_| c.next_u64()).collect::<Vec<_>>());
        let mut seen = [0u32; 10];
        for _ in 0..10_000 {
            seen[a.below(10) as usize] += 1;
        }
        assert!(seen.iter().all(|&n| (800..1200).contains(&n)), "{seen:?}");
        for _ in 0..1000 {
            assert!((-5..=5).contains(&a.between(-5, 5)));
        }
    }
}
