//! The timeline as an HdrHistogram interval log (readable by HistogramLogAnalyzer, Java's
//! HistogramLogProcessor and Python's `hdrhistogram`).

use crate::report::decode_histogram;
use crate::{Error, Report};
use hdrhistogram::serialization::interval_log::IntervalLogWriterBuilder;
use hdrhistogram::serialization::V2DeflateSerializer;
use std::time::{Duration, UNIX_EPOCH};

/// The timeline as an interval log: one interval histogram per timeline row. Values are
/// nanoseconds; the max column is in milliseconds (max value divisor 1e6). A report whose
/// rows kept no histograms (`output.interval_histograms` off) is refused by that name.
pub fn hdr_log(report: &Report) -> crate::Result<String> {
    let failed = |e: &dyn std::fmt::Debug| Error::Internal(format!("interval log: {e:?}"));
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
            .map_err(|e| failed(&e))?;
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
                .map_err(|e| failed(&e))?;
        }
    }
    // The log is ASCII: comments, numbers and base64.
    String::from_utf8(out).map_err(|e| failed(&e))
}

/// [`hdr_log`] written to `path`.
pub fn write_hdr_log(report: &Report, path: &str) -> crate::Result<()> {
    let text = hdr_log(report)?;
    std::fs::write(path, text).map_err(|source| Error::File {
        path: path.into(),
        source,
    })
}

/// [`hdr_log`] of a report's JSON text, for the bindings, which hold reports as JSON.
pub fn hdr_log_of_json(report_json: &str) -> crate::Result<String> {
    hdr_log(&Report::from_json_str(report_json)?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::TimelineRow;

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
