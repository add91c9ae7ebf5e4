//! A trace file as the bindings and the command line use it: records as JSON values, read
//! in batches (never the whole file), and a model fitted from a file in one pass.

use super::model::{Model, ModelBuilder, ModelOptions};
use super::{Format, Record, TraceArg, TraceReader};
use crate::{Error, Result};
use base64::Engine as _;
use serde_json::{json, Value as Json};

/// An open trace file, read record by record.
pub struct TraceFile {
    reader: TraceReader,
    rec: Record,
}

/// Read `format` (`respload`, `monitor`, `twitter`; `None`: told by the first line).
fn format_of(format: Option<&str>) -> Result<Option<Format>> {
    match format {
        None => Ok(None),
        Some(f) => Format::parse(f).map(Some).ok_or_else(|| {
            Error::spec(
                "format",
                format!("`{f}`: allowed are \"respload\", \"monitor\" and \"twitter\""),
            )
        }),
    }
}

impl TraceFile {
    /// Open `path`.
    pub fn open(path: &str, format: Option<&str>) -> Result<TraceFile> {
        Ok(TraceFile {
            reader: TraceReader::open(path, format_of(format)?)?,
            rec: Record::default(),
        })
    }

    /// The file's format: `respload`, `monitor` or `twitter`.
    pub fn format(&self) -> &'static str {
        self.reader.format().name()
    }

    /// Up to `n` more records as JSON (see [`record_json`]); empty at the end.
    pub fn next_batch(&mut self, n: usize) -> Result<Vec<Json>> {
        let mut out = Vec::with_capacity(n.min(4096));
        while out.len() < n && self.reader.next_record(&mut self.rec)? {
            out.push(record_json(&self.rec));
        }
        Ok(out)
    }

    /// Malformed lines so far, and the first of them as `line N: reason`.
    pub fn malformed(&self) -> (u64, Vec<String>) {
        let lines = self
            .reader
            .malformed_lines()
            .iter()
            .map(|m| format!("line {}: {}", m.line, m.reason))
            .collect();
        (self.reader.malformed(), lines)
    }
}

/// A record as JSON, as a respload trace line holds it: `{"t_us", "db", "client", "args"}`,
/// each argument a string, `{"b64": ...}` (bytes that are not UTF-8) or `{"size": n}`.
pub fn record_json(rec: &Record) -> Json {
    let args: Vec<Json> = rec
        .args()
        .map(|a| match a {
            TraceArg::Bytes(b) => match std::str::from_utf8(b) {
                Ok(s) => json!(s),
                Err(_) => json!({ "b64": base64::engine::general_purpose::STANDARD.encode(b) }),
            },
            TraceArg::Size(n) => json!({ "size": n }),
        })
        .collect();
    json!({ "t_us": rec.t_us, "db": rec.db, "client": rec.client, "args": args })
}

/// Fit a model to the trace at `path` in one pass (`respload model`, `Trace.model()`).
pub fn fit_file(path: &str, format: Option<&str>, opts: &ModelOptions) -> Result<Model> {
    let mut reader = TraceReader::open(path, format_of(format)?)?;
    let mut builder = ModelBuilder::new();
    let mut rec = Record::default();
    while reader.next_record(&mut rec)? {
        builder.observe(&rec);
    }
    Ok(builder.fit(opts))
}
