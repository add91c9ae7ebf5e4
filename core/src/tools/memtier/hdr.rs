//! memtier_benchmark's HdrHistogram files (`--hdr-file-prefix`): the percentile text and
//! the interval log of each command.

use super::json::{encode, to_micros};
use super::report::*;
use crate::report::Report;
use crate::{Error, Result};
use hdrhistogram::Histogram;
use std::fmt::Write as _;

/// `hdr_percentiles_print` (CLASSIC format, values in ms) of a microsecond histogram.
pub(super) fn percentiles_text(us: &Histogram<u64>) -> String {
    let mut out = format!(
        "{:>12} {:>12} {:>12} {:>12}\n\n",
        "Value", "Percentile", "TotalCount", "1/(1-Percentile)"
    );
    let mut cumulative = 0u64;
    for v in us.iter_quantiles(10) {
        cumulative += v.count_since_last_iteration();
        let q = v.quantile_iterated_to();
        let inverted = 1.0 / (1.0 - q);
        let inv = if inverted.is_finite() {
            format!("{inverted:>12.2}")
        } else {
            format!("{:>12}", "inf")
        };
        let _ = writeln!(
            out,
            "{:>12.3} {:>12.6} {:>12} {inv}",
            us.highest_equivalent(v.value_iterated_to()) as f64 / 1000.0,
            q,
            cumulative
        );
    }
    let sub_buckets = (2.0 * 10f64.powi(us.sigfig() as i32)).log2().ceil().exp2() as u64;
    let _ = write!(
        out,
        "#[Mean    = {:>12.3}, StdDeviation   = {:>12.3}]\n#[Max     = {:>12.3}, Total count    = {:>12}]\n#[Buckets = {:>12}, SubBuckets     = {:>12}]\n",
        us.mean() / 1000.0,
        us.stdev() / 1000.0,
        us.max() as f64 / 1000.0,
        us.len(),
        us.buckets(),
        sub_buckets
    );
    out
}

/// `Www Mmm HH:MM:SS GMT YYYY` (C's `%a %b %X %Z %Y` in GMT) of seconds since the epoch.
pub(super) fn gmt(secs: f64) -> String {
    let t = secs.max(0.0) as i64;
    let days = t.div_euclid(86_400);
    let rem = t.rem_euclid(86_400);
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    const DAYS: [&str; 7] = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"];
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    format!(
        "{} {} {:02}:{:02}:{:02} GMT {}",
        DAYS[days.rem_euclid(7) as usize],
        MONTHS[(month - 1) as usize],
        rem / 3600,
        rem % 3600 / 60,
        rem % 60,
        year
    )
}

/// `hdr_log_write_header` + `hdr_log_write` of one histogram, as memtier writes its `.hgrm`.
pub(super) fn log_text(us: &Histogram<u64>, header: &str, start_s: f64, end_s: f64) -> String {
    format!(
        "#[{header}]\n#[Histogram log format version 1.2]\n#[StartTime: {start_s:.3} (seconds since epoch), {}]\n\"StartTimestamp\",\"EndTimestamp\",\"Interval_Max\",\"Interval_Compressed_Histogram\"\n{start_s:.3},{end_s:.3},{}.0,{}\n",
        gmt(start_s),
        us.max(),
        encode(us)
    )
}

/// Write memtier's HdrHistogram files for every run: `PREFIX_FULL_RUN_N.txt` and `.hgrm`,
/// and per command `PREFIX_SET_command_run_N.txt` / `.hgrm` (GET, or each `--command`
/// name), for histograms that hold values. Returns the paths written.
pub fn write_hdr_files(report: &Report, options: &Options) -> Result<Vec<String>> {
    let Some(prefix) = &options.hdr_file_prefix else {
        return Ok(Vec::new());
    };
    let mut written = Vec::new();
    let mut at_s = report.started_at;
    let runs = report.phases.iter().filter(|p| p.measured);
    for (i, p) in runs.enumerate() {
        let run = i + 1;
        let v = view_of(p, String::new(), at_s * 1000.0, options);
        let (start, end) = (at_s, at_s + p.duration_s);
        at_s = end;
        let mut files = vec![(
            format!("{prefix}_FULL_RUN_{run}"),
            "Full Run command HDR latency histogram results".to_string(),
            &v.totals,
        )];
        for r in &v.rows {
            files.push((
                format!("{prefix}_{}_command_run_{run}", r.command),
                format!("{} command HDR latency histogram results", r.command),
                &r.cell,
            ));
        }
        for (base, header, cell) in files {
            if cell.count() == 0 {
                continue;
            }
            let us = to_micros(&cell.hist);
            for (path, text) in [
                (format!("{base}.txt"), percentiles_text(&us)),
                (format!("{base}.hgrm"), log_text(&us, &header, start, end)),
            ] {
                std::fs::write(&path, text).map_err(|source| Error::File {
                    path: path.clone(),
                    source,
                })?;
                written.push(path);
            }
        }
    }
    Ok(written)
}
