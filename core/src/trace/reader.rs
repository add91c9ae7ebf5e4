//! Any trace file, line by line: respload's own JSON lines, a MONITOR log or a Twitter
//! cache-trace CSV, plain or gzip, its format detected from its first line when not given.
//! A malformed line is counted and skipped (the first ones kept with their line numbers), so
//! that one bad line in a billion does not stop a replay.

use std::fs::File;
use std::io::{self, BufRead, BufReader};

use flate2::bufread::MultiGzDecoder;

use super::record::Record;
use super::{jsonl, monitor, twitter};

/// A line longer than this is malformed: it is skipped, not held whole.
const MAX_LINE: usize = 512 << 20;
/// How many malformed lines are kept with their reasons.
const KEPT: usize = 100;
/// Read buffers, on the file and after gzip.
const BUF: usize = 64 * 1024;

/// A trace file format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// respload's own JSON lines ([`super::jsonl`]).
    Respload,
    /// `MONITOR` output ([`super::monitor`]).
    Monitor,
    /// The Twitter cache-trace CSV ([`super::twitter`]).
    Twitter,
}

impl Format {
    /// Its name: `respload`, `monitor` or `twitter`.
    pub fn name(&self) -> &'static str {
        match self {
            Format::Respload => "respload",
            Format::Monitor => "monitor",
            Format::Twitter => "twitter",
        }
    }

    /// The format of a name as [`Format::name`] gives it (any case); `None` for any other.
    pub fn parse(s: &str) -> Option<Format> {
        [Format::Respload, Format::Monitor, Format::Twitter]
            .into_iter()
            .find(|f| s.eq_ignore_ascii_case(f.name()))
    }

    /// The format a trace's first line (not empty, not a MONITOR `OK`) is in, if any.
    fn detect(line: &[u8]) -> Option<Format> {
        let line = line.trim_ascii();
        if line.starts_with(b"{") {
            return Some(Format::Respload);
        }
        if looks_like_monitor(line) {
            return Some(Format::Monitor);
        }
        // A header line has the seven fields too, without numbers.
        let mut rec = Record::default();
        if twitter::parse_line(line, &mut rec).is_ok()
            || line.iter().filter(|&&b| b == b',').count() == 6
        {
            return Some(Format::Twitter);
        }
        None
    }
}

/// `SECONDS.MICROS ` then `[` (or, from Redis before 2.6, `"` or `(db `).
fn looks_like_monitor(line: &[u8]) -> bool {
    let line = line.strip_prefix(b"+").unwrap_or(line);
    let digits = |s: &[u8]| s.iter().take_while(|b| b.is_ascii_digit()).count();
    let secs = digits(line);
    if secs == 0 || line.get(secs) != Some(&b'.') {
        return false;
    }
    let rest = line.get(secs + 1..).unwrap_or_default();
    let frac = digits(rest);
    if frac == 0 {
        return false;
    }
    let rest = rest.get(frac..).unwrap_or_default();
    rest.starts_with(b" [") || rest.starts_with(b" \"") || rest.starts_with(b" (db ")
}

/// A line that did not read, by its number (from 1).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Malformed {
    /// Its line number, from 1.
    pub line: u64,
    /// What is wrong with it.
    pub reason: String,
}

/// Reads a trace record by record, holding one line at a time.
pub struct TraceReader {
    input: Box<dyn BufRead + Send>,
    format: Format,
    path: String,
    line: Vec<u8>,
    // `line` holds a line already read and counted but not yet handled: the one the format
    // was detected from.
    pending: bool,
    // The line in `line` went over `max_line` and was cut.
    too_long: bool,
    max_line: usize,
    lines: u64,
    malformed: u64,
    kept: Vec<Malformed>,
}

impl TraceReader {
    /// Open the trace at `path`, in `format` or, `None`, in the format its first line is in
    /// (other than empty lines and MONITOR's `OK`): `{` for respload's own, `SECONDS.MICROS [`
    /// for MONITOR, seven comma-separated fields for a Twitter trace. A gzip file (its magic
    /// bytes, whatever its name) is read through gzip. An empty file reads as an empty
    /// respload trace.
    pub fn open(path: &str, format: Option<Format>) -> crate::Result<TraceReader> {
        let file_err = |source| crate::Error::File {
            path: path.to_string(),
            source,
        };
        let mut file = BufReader::with_capacity(BUF, File::open(path).map_err(file_err)?);
        let gzip = file
            .fill_buf()
            .map_err(file_err)?
            .starts_with(&[0x1f, 0x8b]);
        let input: Box<dyn BufRead + Send> = if gzip {
            Box::new(BufReader::with_capacity(BUF, MultiGzDecoder::new(file)))
        } else {
            Box::new(file)
        };
        let mut r = TraceReader::with_path(input, format.unwrap_or(Format::Respload), path);
        if format.is_none() {
            r.detect()?;
        }
        Ok(r)
    }

    /// Read `format` from `r` (taken as it is: no gzip detection).
    pub fn from_reader(r: Box<dyn BufRead + Send>, format: Format) -> TraceReader {
        TraceReader::with_path(r, format, "<trace>")
    }

    fn with_path(input: Box<dyn BufRead + Send>, format: Format, path: &str) -> TraceReader {
        TraceReader {
            input,
            format,
            path: path.to_string(),
            line: Vec::new(),
            pending: false,
            too_long: false,
            max_line: MAX_LINE,
            lines: 0,
            malformed: 0,
            kept: Vec::new(),
        }
    }

    /// The format it reads.
    pub fn format(&self) -> Format {
        self.format
    }

    /// Read lines up to the first that says the format, and keep it for
    /// [`TraceReader::next_record`].
    fn detect(&mut self) -> crate::Result<()> {
        loop {
            if !self.read_line()? {
                return Ok(());
            }
            if monitor::is_preamble(&self.line) {
                continue;
            }
            self.pending = true;
            let Some(format) = Format::detect(&self.line) else {
                let cut = self.line.trim_ascii();
                let shown = String::from_utf8_lossy(cut.get(..80).unwrap_or(cut));
                let more = if cut.len() > 80 { "..." } else { "" };
                return Err(crate::Error::spec(
                    "trace",
                    format!(
                        "{}: not a respload trace, a MONITOR log or a Twitter cache-trace CSV \
                         (first line: {shown:?}{more})",
                        self.path
                    ),
                ));
            };
            self.format = format;
            return Ok(());
        }
    }

    /// The next good record into `rec`; malformed lines are counted and skipped (the first
    /// 100 kept with their line numbers and reasons), empty lines and MONITOR's `OK` skipped.
    /// `Ok(false)` at the end; `Err` only for an I/O error (gzip data that does not inflate
    /// included).
    pub fn next_record(&mut self, rec: &mut Record) -> crate::Result<bool> {
        loop {
            if self.pending {
                self.pending = false;
            } else if !self.read_line()? {
                return Ok(false);
            }
            if self.too_long {
                self.bad(format!("longer than {} bytes", self.max_line));
                continue;
            }
            let line = self.line.trim_ascii_end();
            if line.trim_ascii_start().is_empty() {
                continue;
            }
            let read = match self.format {
                Format::Respload => jsonl::parse_line(line, rec),
                Format::Monitor if monitor::is_preamble(line) => continue,
                Format::Monitor => monitor::parse_line(line, rec),
                Format::Twitter => twitter::parse_line(line, rec),
            };
            match read {
                Ok(()) => return Ok(true),
                Err(reason) => self.bad(reason),
            }
        }
    }

    /// How many lines were read so far.
    pub fn lines(&self) -> u64 {
        self.lines
    }

    /// How many lines were malformed so far.
    pub fn malformed(&self) -> u64 {
        self.malformed
    }

    /// The first 100 malformed lines, with what is wrong with each.
    pub fn malformed_lines(&self) -> &[Malformed] {
        &self.kept
    }

    fn bad(&mut self, reason: String) {
        self.malformed += 1;
        if self.kept.len() < KEPT {
            self.kept.push(Malformed {
                line: self.lines,
                reason,
            });
        }
    }

    /// The next line into `self.line` (with its `\n`), counted; `false` at the end. A line
    /// over `max_line` is cut there, the rest skipped, and `too_long` set.
    fn read_line(&mut self) -> crate::Result<bool> {
        self.line.clear();
        self.too_long = false;
        // A huge line's buffer is not kept for the short ones after it.
        if self.line.capacity() > 64 << 20 {
            self.line = Vec::new();
        }
        let mut any = false;
        loop {
            let avail = match self.input.fill_buf() {
                Ok(b) => b,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(source) => {
                    return Err(crate::Error::File {
                        path: self.path.clone(),
                        source,
                    })
                }
            };
            if avail.is_empty() {
                if any {
                    self.lines += 1;
                }
                return Ok(any);
            }
            any = true;
            let (n, end) = match avail.iter().position(|&b| b == b'\n') {
                Some(i) => (i + 1, true),
                None => (avail.len(), false),
            };
            if !self.too_long {
                let room = self.max_line.saturating_sub(self.line.len());
                if n <= room {
                    self.line.extend_from_slice(&avail[..n]);
                } else {
                    self.line.extend_from_slice(&avail[..room]);
                    self.too_long = true;
                }
            }
            self.input.consume(n);
            if end {
                self.lines += 1;
                return Ok(true);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Cursor, Write as _};

    fn reader(text: &[u8], format: Format) -> TraceReader {
        TraceReader::from_reader(Box::new(Cursor::new(text.to_vec())), format)
    }

    fn drain(r: &mut TraceReader) -> Vec<Record> {
        let mut rec = Record::default();
        let mut out = Vec::new();
        while r.next_record(&mut rec).unwrap() {
            out.push(rec.clone());
        }
        out
    }

    fn temp(name: &str, bytes: &[u8]) -> String {
        let path =
            std::env::temp_dir().join(format!("respload-reader-{}-{name}", std::process::id()));
        std::fs::write(&path, bytes).unwrap();
        path.to_str().unwrap().to_string()
    }

    fn gzip(bytes: &[u8]) -> Vec<u8> {
        let mut z = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        z.write_all(bytes).unwrap();
        z.finish().unwrap()
    }

    #[test]
    fn format_names() {
        for f in [Format::Respload, Format::Monitor, Format::Twitter] {
            assert_eq!(Format::parse(f.name()), Some(f));
        }
        assert_eq!(Format::parse("MONITOR"), Some(Format::Monitor));
        assert_eq!(Format::parse("csv"), None);
    }

    #[test]
    fn formats_are_detected() {
        let cases: &[(&str, &[u8], Format, usize)] = &[
            (
                "resp.jsonl",
                b"\n{\"t_us\":1,\"args\":[\"PING\"]}\n",
                Format::Respload,
                1,
            ),
            (
                "mon.log",
                b"OK\r\n1339518083.107412 [0 127.0.0.1:60866] \"keys\" \"*\"\r\n\
                  1339518083.107413 [0 lua] \"get\" \"k\"\r\n",
                Format::Monitor,
                2,
            ),
            (
                "old-mon.log",
                b"1339518083.107412 \"keys\" \"*\"\n",
                Format::Monitor,
                1,
            ),
            (
                "tw.csv",
                b"0,nz:u:eeW511W3dcH3de3d15ec,24,1052,7,set,3600\n0,k,1,0,7,get,0",
                Format::Twitter,
                2,
            ),
            (
                "tw-header.csv",
                b"timestamp,key,key size,value size,client id,operation,TTL\n0,k,1,0,7,get,0\n",
                Format::Twitter,
                1,
            ),
        ];
        for (name, text, format, n) in cases {
            for (suffix, bytes) in [("", text.to_vec()), (".gz", gzip(text))] {
                // The name says nothing: the magic bytes do.
                let path = temp(&format!("{name}{suffix}.data"), &bytes);
                let mut r = TraceReader::open(&path, None).unwrap();
                assert_eq!(r.format(), *format, "{name}{suffix}");
                assert_eq!(drain(&mut r).len(), *n, "{name}{suffix}");
                let _ = std::fs::remove_file(&path);
            }
        }
    }

    #[test]
    fn detection_fails_with_the_first_line() {
        let path = temp("garbage.txt", b"\n\nhello world\n");
        let e = TraceReader::open(&path, None).err().unwrap().to_string();
        let _ = std::fs::remove_file(&path);
        assert!(
            e.contains("not a respload trace, a MONITOR log or a Twitter"),
            "{e}"
        );
        assert!(e.contains("(first line: \"hello world\")"), "{e}");
        assert!(e.contains(&path), "{e}");

        let e = TraceReader::open("/nonexistent/trace.jsonl", None)
            .err()
            .unwrap();
        assert!(matches!(e, crate::Error::File { .. }), "{e}");
    }

    #[test]
    fn an_empty_file_is_an_empty_trace() {
        let path = temp("empty", b"");
        let mut r = TraceReader::open(&path, None).unwrap();
        let _ = std::fs::remove_file(&path);
        assert_eq!(r.format(), Format::Respload);
        assert!(drain(&mut r).is_empty());
        assert_eq!(r.lines(), 0);
    }

    #[test]
    fn a_given_format_is_not_detected() {
        let path = temp("given", b"1,k,1,1,1,get,0\n");
        let mut r = TraceReader::open(&path, Some(Format::Respload)).unwrap();
        let _ = std::fs::remove_file(&path);
        assert!(drain(&mut r).is_empty());
        assert_eq!(r.malformed(), 1);
    }

    #[test]
    fn malformed_lines_are_counted_by_line_number() {
        let text = b"{\"t_us\":1,\"args\":[\"PING\"]}\n\
                     \n\
                     not json\n\
                     {\"t_us\":2,\"args\":[\"PING\"]}\r\n\
                     {\"args\":[\"PING\"]}\n\
                     \x20\t\n\
                     {\"t_us\":3,\"args\":[\"GET\",\"\xff\"]}\n\
                     {\"t_us\":4,\"args\":[\"PING\"]}";
        let path = temp("mixed.jsonl", text);
        let mut r = TraceReader::open(&path, None).unwrap();
        let _ = std::fs::remove_file(&path);
        let got: Vec<u64> = drain(&mut r).iter().map(|r| r.t_us).collect();
        assert_eq!(got, [1, 2, 4]);
        assert_eq!(r.lines(), 8);
        assert_eq!(r.malformed(), 3);
        let lines: Vec<u64> = r.malformed_lines().iter().map(|m| m.line).collect();
        assert_eq!(lines, [3, 5, 7]);
        assert!(r.malformed_lines()[1].reason.contains("`t_us` missing"));
    }

    #[test]
    fn monitor_preambles_and_twitter_lines_through_the_reader() {
        let mut r = reader(
            b"OK\n1.000001 [0 lua] \"ping\"\nOK\nbad\n2.000000 [1 unix:/s] \"get\" \"k\"",
            Format::Monitor,
        );
        let got = drain(&mut r);
        assert_eq!(got.len(), 2);
        assert_eq!(r.malformed(), 1);
        assert_eq!(r.malformed_lines()[0].line, 4);

        let mut r = reader(b"1,k,1,5,c,set,0\n1,k,1,5,c,nope,0\n", Format::Twitter);
        assert_eq!(drain(&mut r).len(), 1);
        assert_eq!(r.malformed_lines()[0].line, 2);
        assert!(r.malformed_lines()[0].reason.contains("operation: `nope`"));
    }

    #[test]
    fn only_the_first_malformed_lines_are_kept() {
        let text = "x\n".repeat(250);
        let mut r = reader(text.as_bytes(), Format::Twitter);
        assert!(drain(&mut r).is_empty());
        assert_eq!(r.malformed(), 250);
        assert_eq!(r.malformed_lines().len(), KEPT);
        assert_eq!(r.malformed_lines()[99].line, 100);
    }

    #[test]
    fn a_too_long_line_is_skipped_not_held() {
        let mut text = b"1,k,1,5,c,get,0\n".to_vec();
        text.extend(std::iter::repeat_n(b'a', 200_000));
        text.extend_from_slice(b"\n1,k,1,5,c,get,0\n");
        text.extend(std::iter::repeat_n(b'b', 1000));
        let mut r = reader(&text, Format::Twitter);
        r.max_line = 100;
        let got = drain(&mut r);
        assert_eq!(got.len(), 2);
        assert_eq!(r.lines(), 4);
        assert!(r.line.capacity() < 1024);
        let lines: Vec<u64> = r.malformed_lines().iter().map(|m| m.line).collect();
        assert_eq!(lines, [2, 4]);
        assert!(r.malformed_lines()[0]
            .reason
            .contains("longer than 100 bytes"));
    }

    #[test]
    fn bad_gzip_is_an_io_error() {
        let mut bytes = gzip(
            b"{\"t_us\":1,\"args\":[\"PING\"]}\n"
                .repeat(1000)
                .as_slice(),
        );
        let n = bytes.len();
        bytes.truncate(n / 2);
        let path = temp("cut.gz", &bytes);
        let mut r = TraceReader::open(&path, Some(Format::Respload)).unwrap();
        let _ = std::fs::remove_file(&path);
        let mut rec = Record::default();
        let err = loop {
            match r.next_record(&mut rec) {
                Ok(true) => {}
                Ok(false) => panic!("a cut gzip file reads to its end"),
                Err(e) => break e,
            }
        };
        assert!(matches!(err, crate::Error::File { .. }), "{err}");
    }
}
