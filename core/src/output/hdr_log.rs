//! The timeline as an HdrHistogram interval log (readable by HistogramLogAnalyzer, Java's
//! HistogramLogProcessor and Python's `hdrhistogram`).

use crate::stats::decode_histogram;
use crate::{Error, Report};
use hdrhistogram::serialization::interval_log::IntervalLogWriterBuilder;
use hdrhistogram::serialization::V2DeflateSerializer;
use std::time::{Duration, UNIX_EPOCH};

/// Write one interval histogram per timeline row to `path`. Values are nanoseconds; the
/// max column is in milliseconds (max value divisor 1e6).
pub fn write_hdr_log(report: &Report, path: &str) -> crate::Result<()> {
    let file_err = |source| Error::File {
        path: path.into(),
        source,
    };
    let mut out = Vec::new();
    let start = UNIX_EPOCH + Duration::from_secs_f64(report.started_at.max(0.0));
    let mut serializer = V2DeflateSerializer::new();
    {
        let mut builder = IntervalLogWriterBuilder::new();
        builder
            .add_comment(&format!(
                "respload {} latency log, values in nanoseconds",
                report.respload_version
            ))
            .with_start_time(start)
            .with_base_time(start)
            .with_max_value_divisor(1e6);
        let mut writer = builder
            .begin_log_with(&mut out, &mut serializer)
            .map_err(file_err)?;
        for row in &report.timeline {
            if row.histogram.is_empty() && row.ops > 0 {
                return Err(Error::spec(
                    "output.interval_histograms",
                    "the report kept no interval histograms: set it to true to write an \
                     interval log",
                ));
            }
            let Some(h) = decode_histogram(&row.histogram) else {
                continue;
            };
            let begin = Duration::from_secs_f64((row.t - row.interval_s).max(0.0));
            writer
                .write_histogram(
                    &h,
                    begin,
                    Duration::from_secs_f64(row.interval_s.max(0.0)),
                    None,
                )
                .map_err(|e| file_err(std::io::Error::other(format!("{e:?}"))))?;
        }
    }
    std::fs::write(path, out).map_err(file_err)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::TimelineRow;

    #[test]
    fn a_timeline_without_its_histograms_is_refused_by_name() {
        let report = Report {
            timeline: vec![TimelineRow {
                t: 1.0,
                interval_s: 1.0,
                ops: 10,
                ..TimelineRow::default()
            }],
            ..Report::default()
        };
        let path = std::env::temp_dir().join(format!("respload-hdr-{}.log", std::process::id()));
        let err = write_hdr_log(&report, path.to_str().unwrap()).unwrap_err();
        assert!(
            err.to_string().contains("output.interval_histograms"),
            "{err}"
        );
        assert!(!path.exists());
    }
}
