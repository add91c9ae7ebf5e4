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
    h.value_at_quantile(crate_quantile(n, q))
}

/// The quantile to ask the crate for so that it lands on rank `round(q * n)`: it takes
/// ceil(q' * n), so aim half a rank below.
fn crate_quantile(n: u64, q: f64) -> f64 {
    let rank = ((q.min(1.0) * n as f64 + 0.5) as u64).clamp(1, n);
    (rank as f64 - 0.5) / n as f64
}

/// The rank (from 1) of the sample that [`percentile`] reports for quantile `q` of `n`
/// samples, computed as the crate computes it from [`crate_quantile`], float for float.
pub(crate) fn percentile_rank(n: u64, q: f64) -> u64 {
    let q = crate_quantile(n, q).min(1.0);
    ((q * n as f64).ceil() as u64).max(1)
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

/// The percentile distribution of `h` (values in nanoseconds), in milliseconds, as
/// HdrHistogram's `outputPercentileDistribution` writes it: the `.hgrm` text that
/// HdrHistogram's plotter (and HistogramLogAnalyzer) draws on its percentile axis.
pub fn percentile_distribution(h: &hdrhistogram::Histogram<u64>) -> String {
    use std::fmt::Write as _;
    let mut out = String::from("       Value     Percentile TotalCount 1/(1-Percentile)\n\n");
    let mut total = 0u64;
    for v in h.iter_quantiles(5) {
        total += v.count_since_last_iteration();
        let q = v.quantile_iterated_to();
        let value = h.highest_equivalent(v.value_iterated_to()) as f64 / NS_PER_MS;
        let _ = if q < 1.0 {
            writeln!(
                out,
                "{value:12.3} {q:2.12} {total:10} {:14.2}",
                1.0 / (1.0 - q)
            )
        } else {
            writeln!(out, "{value:12.3} {q:2.12} {total:10}")
        };
    }
    let (mean, stdev) = (h.mean() / NS_PER_MS, h.stdev() / NS_PER_MS);
    let max = h.highest_equivalent(h.max()) as f64 / NS_PER_MS;
    let _ = writeln!(
        out,
        "#[Mean    = {mean:12.3}, StdDeviation   = {stdev:12.3}]"
    );
    let _ = writeln!(
        out,
        "#[Max     = {max:12.3}, Total count    = {:12}]",
        h.len()
    );
    out
}

impl super::Report {
    /// The latency distribution of the run's measured requests (`totals`), or of one
    /// `command` label's, as HdrHistogram's `.hgrm` text ([`percentile_distribution`]): what
    /// `respload compare --hgrm` writes, for HdrHistogram's plotter to overlay. Empty when no
    /// request finished; an unknown label is an error naming the labels there are.
    pub fn percentile_distribution(&self, command: Option<&str>) -> crate::Result<String> {
        let stats = match command {
            None => &self.totals,
            Some(label) => self.commands.get(label).ok_or_else(|| {
                let labels: Vec<&str> = self.commands.keys().map(String::as_str).collect();
                crate::Error::spec(
                    "command",
                    format!("no command `{label}` in the report; it has {labels:?}"),
                )
            })?,
        };
        Ok(decode_histogram(&stats.histogram)
            .map(|h| percentile_distribution(&h))
            .unwrap_or_default())
    }
}

/// Decode a histogram written by [`encode_histogram`] (base64 of a V2 encoding, compressed
/// or not); `None` for anything else, or when its declared length is not what it holds.
/// Read by [`super::sparse`], not the crate's reader, which sizes a buffer by the length a
/// header declares (4 GB for a few bytes) and, built with overflow checks, panics on some
/// damaged counts: both found by the `histogram` fuzz target.
pub fn decode_histogram(text: &str) -> Option<hdrhistogram::Histogram<u64>> {
    super::sparse::Sparse::decode(text)?.to_histogram()
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

    #[test]
    fn the_percentile_distribution_reads_as_hdrhistograms_hgrm() {
        let mut h = hdrhistogram::Histogram::<u64>::new(3).unwrap();
        for v in 1..=1000u64 {
            h.record(v * 1000).unwrap(); // 1 us to 1 ms
        }
        let text = percentile_distribution(&h);
        let rows: Vec<Vec<f64>> = text
            .lines()
            .filter(|l| l.trim_start().starts_with(|c: char| c.is_ascii_digit()))
            .map(|l| l.split_whitespace().map(|w| w.parse().unwrap()).collect())
            .collect();
        assert!(rows.len() > 20, "{text}");
        // Value (ms), percentile and count rise together; the last row is the maximum, at 1.
        for w in rows.windows(2) {
            assert!(
                w[1][0] >= w[0][0] && w[1][1] > w[0][1] && w[1][2] >= w[0][2],
                "{text}"
            );
        }
        let last = rows.last().unwrap();
        assert_eq!((last[1], last[2], last.len()), (1.0, 1000.0, 3), "{text}");
        assert!((last[0] - 1.0).abs() < 0.001, "{text}");
        let median = rows.iter().find(|r| r[1] >= 0.5).unwrap();
        assert!((median[0] - 0.5).abs() < 0.001, "{text}");
        assert!(
            text.contains("#[Max     =        1.000, Total count    =         1000]"),
            "{text}"
        );
    }

    #[test]
    fn a_report_gives_the_distribution_of_its_totals_or_of_one_command() {
        let mut h = hdrhistogram::Histogram::<u64>::new(3).unwrap();
        for v in 1..=100u64 {
            h.record(v * 10_000).unwrap();
        }
        let mut report = crate::Report::default();
        report.totals.histogram = encode_histogram(&h);
        let mut get = crate::report::Stats::default();
        h.reset();
        h.record(2_000_000).unwrap();
        get.histogram = encode_histogram(&h);
        report.commands.insert("GET".into(), get);
        let all = report.percentile_distribution(None).unwrap();
        assert!(all.contains("Total count    =          100]"), "{all}");
        let one = report.percentile_distribution(Some("GET")).unwrap();
        // The maximum as HdrHistogram writes it: the highest value of its bucket.
        assert!(
            one.contains("#[Max     =        2.001, Total count    =            1]"),
            "{one}"
        );
        let e = report
            .percentile_distribution(Some("SET"))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("no command `SET`") && e.contains("\"GET\""),
            "{e}"
        );
        // A report without requests: nothing to draw.
        let empty = crate::Report::default();
        assert_eq!(empty.percentile_distribution(None).unwrap(), "");
    }
}
