//! `output.failed_keys`: the requests that failed for good, one CSV line each, appended to
//! the file as they fail (memtier_benchmark's `--failed-keys-file` format), so that a run cut
//! short keeps every line written before.

use crate::resp::request::request_arg;
use std::fs::File;
use std::io::{Seek, SeekFrom, Write};
use std::sync::Mutex;
use std::time::{SystemTime, UNIX_EPOCH};

/// The first line of an empty file.
const HEADER: &str = "timestamp,command,key,status,retries\n";

/// The failed-requests file of a phase, shared by its worker threads.
#[derive(Debug)]
pub(super) struct FailedKeys {
    file: Mutex<Option<File>>,
    /// Each command's name (by index), as the report names it.
    names: Box<[String]>,
}

impl FailedKeys {
    /// Open `path` for appending (created when missing), writing the header when it is empty.
    pub(super) fn open(path: &str, names: Box<[String]>) -> std::io::Result<Self> {
        let mut file = std::fs::OpenOptions::new()
            .append(true)
            .create(true)
            .open(path)?;
        if file.seek(SeekFrom::End(0))? == 0 {
            file.write_all(HEADER.as_bytes())?;
        }
        Ok(FailedKeys {
            file: Mutex::new(Some(file)),
            names,
        })
    }

    /// Append the line of request `req` (its bytes as sent, its key argument `key`) of
    /// command `cmd`, failed for good with `error` (an error reply, or a kind of failure
    /// without one) after `retries` resends. A write that fails stops the logging (with a
    /// warning on stderr), not the run.
    pub(super) fn log(
        &self,
        cmd: usize,
        key: Option<usize>,
        req: &[u8],
        error: &[u8],
        retries: u16,
    ) {
        let key = key.and_then(|k| request_arg(req, k)).unwrap_or_default();
        let name = self.names.get(cmd).map_or("UNKNOWN", String::as_str);
        let line = line(SystemTime::now(), name, key, error, retries);
        let Ok(mut guard) = self.file.lock() else {
            return;
        };
        if let Some(file) = guard.as_mut() {
            if let Err(e) = file.write_all(line.as_bytes()) {
                eprintln!("warning: output.failed_keys: a write failed ({e}); logging stopped");
                *guard = None;
            }
        }
    }
}

/// One line of the file.
fn line(at: SystemTime, command: &str, key: &[u8], error: &[u8], retries: u16) -> String {
    let since = at.duration_since(UNIX_EPOCH).unwrap_or_default();
    let secs = since.as_secs();
    let (y, m, d) = crate::spec::civil_from_days((secs / 86_400) as i64);
    let rem = secs % 86_400;
    let status: &[u8] = match error {
        [b'-', ..] => {
            let end = error
                .iter()
                .position(|&b| b == b'\r' || b == b'\n')
                .unwrap_or(error.len());
            &error[..end]
        }
        b"CONNECTION" => b"connection-dropped",
        kind => kind,
    };
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{:06}Z,{command},{},{},{retries}\n",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60,
        since.subsec_micros(),
        quoted(key),
        quoted(status),
    )
}

/// A CSV field in double quotes: an inner quote doubled, a byte outside printable ASCII as
/// `\xHH`.
fn quoted(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len() + 2);
    out.push('"');
    for &b in bytes {
        match b {
            b'"' => out.push_str("\"\""),
            0x20..=0x7e => out.push(b as char),
            _ => out.push_str(&format!("\\x{b:02x}")),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn lines_are_memtiers_csv() {
        let at = UNIX_EPOCH + Duration::from_micros(1_764_423_000_000_042);
        assert_eq!(
            line(at, "SET", b"memtier-7", b"-WRONGTYPE Operation\r\n", 0),
            "2025-11-29T13:30:00.000042Z,SET,\"memtier-7\",\"-WRONGTYPE Operation\",0\n"
        );
        assert_eq!(
            line(at, "GET", b"a\"b\x01", b"CONNECTION", 3),
            "2025-11-29T13:30:00.000042Z,GET,\"a\"\"b\\x01\",\"connection-dropped\",3\n"
        );
        assert_eq!(
            line(at, "PING", b"", b"TIMEOUT", 1),
            "2025-11-29T13:30:00.000042Z,PING,\"\",\"TIMEOUT\",1\n"
        );
    }
}
