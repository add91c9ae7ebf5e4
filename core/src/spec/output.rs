//! Files a phase writes when it ends, and what its report keeps (`output` in a spec).

use crate::{Error, Result};
use serde::{Deserialize, Serialize};

/// Reports written to files when the phase ends, beside the report the run returns.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct Output {
    /// memtier_benchmark's text report of this phase (run information, the `ALL STATS`
    /// table and the latency distribution), written to this file when the phase ends, as
    /// memtier's `--out-file` does. A relative path is relative to the working directory.
    /// The file is created before any traffic, so a path that cannot be written fails first.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memtier: Option<String>,
    /// Keep each timeline row's encoded latency histogram in the report
    /// (`timeline[i].histogram`; default false, leaving it empty). At 50k ops/s each one is
    /// about 4 KB, so keeping them makes a long run's memory grow with its length. The
    /// interval snapshots (progress callbacks) carry the histogram either way. The CLI's
    /// `--hdr-log` and memtier's `--json-out-file` turn it on.
    #[serde(default, skip_serializing_if = "is_false")]
    pub interval_histograms: bool,
    /// A CSV file of the requests that failed for good, appended as each fails, as
    /// memtier's `--failed-keys-file` writes it: a `timestamp,command,key,status,retries`
    /// header when the file is empty, then one line per request (the UTC time to the
    /// microsecond, the command's name in the report, its key quoted, the error reply's
    /// first line or `connection-dropped`, `TIMEOUT`, `PROTOCOL`, `ABORTED` quoted, and how
    /// often it was resent). Warm-up requests included. Opened before any traffic. In
    /// cluster mode, `retries` counts the redirects followed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failed_keys: Option<String>,
    /// memtier_benchmark's per-client statistics files (its `--client-stats`), written when
    /// the phase ends: one CSV per connection, `PREFIX-RUN-THREAD-CLIENT.csv` (RUN the
    /// phase's number from 1, THREAD the worker thread from 0, CLIENT the connection's
    /// number within its thread from 0), with a row per second in which the connection
    /// finished measured requests: per command its requests, average latency, bytes, and
    /// for GET its hits and misses. Connections count their requests apart only with this
    /// set. Not with `target.cluster` yet.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_stats: Option<String>,
}

fn is_false(b: &bool) -> bool {
    !*b
}

impl Output {
    /// Whether nothing is asked for (no file, no interval histograms).
    pub fn is_empty(&self) -> bool {
        self.memtier.is_none()
            && !self.interval_histograms
            && self.failed_keys.is_none()
            && self.client_stats.is_none()
    }

    pub(crate) fn validate(&self, prefix: &str) -> Result<()> {
        for (field, path, what) in [
            ("memtier", &self.memtier, "memtier's text report"),
            (
                "failed_keys",
                &self.failed_keys,
                "the requests that failed for good",
            ),
            (
                "client_stats",
                &self.client_stats,
                "the per-client statistics files' names",
            ),
        ] {
            if path.as_ref().is_some_and(|p| p.trim().is_empty()) {
                return Err(Error::spec(
                    format!("{prefix}output.{field}"),
                    format!("an empty path: give the file to write {what} to"),
                ));
            }
        }
        Ok(())
    }
}
