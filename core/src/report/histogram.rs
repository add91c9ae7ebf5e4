//! Histograms in reports: their base64 encoding and percentiles ranked as the reference
//! implementations rank them.

use base64::Engine as _;
use hdrhistogram::serialization::{Serializer as _, V2DeflateSerializer};

pub(crate) const NS_PER_MS: f64 = 1e6;

/// The value at quantile `q` (0 to 1): the highest value equivalent to the sample of rank
/// `round(q * count)`, at least rank 1, as Python's `hdrhistogram` and Go's
/// `hdrhistogram-go` rank, so a notebook decoding our histograms reports the same
/// percentiles. Java's HdrHistogram and the Rust crate rank by `ceil` (one rank higher where
/// `q * count` has a fraction below one half).
pub fn percentile(h: &hdrhistogram::Histogram<u64>, q: f64) -> u64 {
    let n = h.len();
    if n == 0 {
        return 0;
    }
    let rank = ((q.min(1.0) * n as f64 + 0.5) as u64).clamp(1, n);
    // The crate takes ceil(q' * n): aim half a rank below so it lands on `rank` exactly.
    h.value_at_quantile((rank as f64 - 0.5) / n as f64)
}

/// A percentile in milliseconds, capped at the exact maximum `max_ns` (0 when empty).
pub(crate) fn percentile_ms(h: &hdrhistogram::Histogram<u64>, q: f64, max_ns: u64) -> f64 {
    percentile(h, q).min(max_ns) as f64 / NS_PER_MS
}

/// Base64 of the V2 compressed encoding, as HdrHistogram's other implementations read it.
pub fn encode_histogram(h: &hdrhistogram::Histogram<u64>) -> String {
    thread_local! {
        // The serializer zero-fills a ~300 KB buffer per call: reused, every interval's
        // row is encoded without a fresh allocation (a long run's RSS stays flat).
        static SERIALIZER: std::cell::RefCell<V2DeflateSerializer> =
            std::cell::RefCell::new(V2DeflateSerializer::new());
    }
    let mut bytes = Vec::new();
    let done = SERIALIZER.with(|s| match s.try_borrow_mut() {
        Ok(mut s) => s.serialize(h, &mut bytes).is_ok(),
        Err(_) => V2DeflateSerializer::new().serialize(h, &mut bytes).is_ok(),
    });
    match done {
        true => base64::engine::general_purpose::STANDARD.encode(&bytes),
        false => String::new(),
    }
}

/// Decode a histogram written by [`encode_histogram`].
pub fn decode_histogram(text: &str) -> Option<hdrhistogram::Histogram<u64>> {
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(text)
        .ok()?;
    hdrhistogram::serialization::Deserializer::new()
        .deserialize(&mut bytes.as_slice())
        .ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentile_ranks_like_the_reference_implementation() {
        let mut h = hdrhistogram::Histogram::<u64>::new(3).unwrap();
        for v in 1..=1000u64 {
            h.record(v).unwrap();
        }
        // 0.0014 * 1000 = 1.4: Python's and Go's rule rounds to rank 1, ceil (Java's, the
        // crate's) gives 2.
        assert_eq!(percentile(&h, 0.0014), 1);
        assert_eq!(h.value_at_quantile(0.0014), 2);
        assert_eq!(percentile(&h, 0.5), 500);
        assert_eq!(percentile(&h, 1.0), 1000);
        assert_eq!(percentile(&h, 0.0), 1);
        assert_eq!(
            percentile(&hdrhistogram::Histogram::<u64>::new(3).unwrap(), 0.5),
            0
        );
    }
}
