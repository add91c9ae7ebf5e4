//! Traces: the user's own traffic as a file of commands with their instants and clients.
//!
//! - `record`: one traced command ([`Record`]), refilled in place by readers.
//! - [`jsonl`]: respload's own trace format (JSON lines, optionally gzip), reader and writer.
//! - [`monitor`]: `MONITOR` output (what `redis-cli MONITOR` prints, and what capture reads).
//! - [`twitter`]: the Twitter cache-trace CSV (OSDI 2020), mapped to RESP commands.
//! - `reader`: any of the three, detected from the file ([`TraceReader`]), streamed with
//!   malformed lines counted by line number.
//! - [`redact`]: secrets taken out of a command before it is written.
//! - [`model`]: a workload spec fitted to a trace.
//! - `file`: a trace file for the bindings ([`TraceFile`]): records as JSON in batches, a
//!   model in one pass.
//!
//! The types of the private modules are reached here, at `trace::` (one path each).
//!
//! docs/traffic.md describes the format and its reasons.

mod file;
pub mod jsonl;
pub mod model;
pub mod monitor;
mod reader;
mod record;
pub mod redact;
pub mod twitter;

pub use file::{fit_file, record_json, TraceFile};
pub use reader::{Format, Malformed, TraceReader};
pub use record::{Record, TraceArg};
