//! respload's own trace format: JSON lines, one command a line and no header, so that any
//! JSON-lines reader takes it as is (`pandas.read_json(path, lines=True)` gives a clean
//! frame; a `.gz` file is gzip, which pandas reads too):
//!
//! ```text
//! {"t_us":1732852800123456,"db":0,"client":"127.0.0.1:53422","args":["SET","key:1","hello"]}
//! ```
//!
//! An argument is a JSON string when its bytes are UTF-8, `{"b64":"..."}` (standard base64)
//! when they are not, and `{"size":512}` for a value of that many bytes whose content the
//! trace does not hold. `db` may be left out (0), and so may `client` (empty); other keys are
//! ignored, so that a later version may add some.

use std::fs::File;
use std::io::{self, Write};

use base64::engine::general_purpose::{GeneralPurpose, GeneralPurposeConfig, STANDARD};
use base64::engine::DecodePaddingMode;
use base64::Engine as _;
use flate2::write::GzEncoder;
use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};

use super::record::{Record, TraceArg};

/// Lines are gathered up to this many bytes before they go to the output.
const CHUNK: usize = 64 * 1024;

enum Sink {
    Plain(Box<dyn Write + Send>),
    Gzip(Box<GzEncoder<File>>),
}

impl Sink {
    fn out(&mut self) -> &mut dyn Write {
        match self {
            Sink::Plain(w) => w,
            Sink::Gzip(w) => w,
        }
    }
}

/// Writes records as respload trace lines.
pub struct Writer {
    // `None` once finished; an Option so that `Drop` and `finish` can both take it.
    sink: Option<Sink>,
    buf: Vec<u8>,
    records: u64,
}

impl Writer {
    /// Create (or truncate) the file at `path`, gzip-compressed when it ends with `.gz`.
    pub fn create(path: &str) -> crate::Result<Writer> {
        let file = File::create(path).map_err(|source| crate::Error::File {
            path: path.to_string(),
            source,
        })?;
        let sink = if path.ends_with(".gz") {
            Sink::Gzip(Box::new(GzEncoder::new(
                file,
                flate2::Compression::default(),
            )))
        } else {
            Sink::Plain(Box::new(file))
        };
        Ok(Writer::with_sink(sink))
    }

    /// Write to `out` (buffered here: `out` needs no buffer of its own).
    pub fn new(out: Box<dyn Write + Send>) -> Writer {
        Writer::with_sink(Sink::Plain(out))
    }

    fn with_sink(sink: Sink) -> Writer {
        Writer {
            sink: Some(sink),
            buf: Vec::with_capacity(CHUNK + 1024),
            records: 0,
        }
    }

    /// Append one record as a line. A record without arguments, or whose first argument
    /// is a size, is refused (`InvalidInput`): it would not read back.
    pub fn write(&mut self, rec: &Record) -> io::Result<()> {
        if rec.name().is_none() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "a trace record needs a command name",
            ));
        }
        let start = self.buf.len();
        if let Err(e) = push_line(&mut self.buf, rec) {
            // No half line left behind.
            self.buf.truncate(start);
            return Err(e);
        }
        self.records += 1;
        if self.buf.len() >= CHUNK {
            self.drain()?;
        }
        Ok(())
    }

    /// Send what is buffered to the output and flush it; a gzip stream stays open (this ends
    /// a deflate block, so that what is written so far can be read).
    pub fn flush(&mut self) -> io::Result<()> {
        self.drain()?;
        match self.sink.as_mut() {
            Some(s) => s.out().flush(),
            None => Ok(()),
        }
    }

    /// Write what is buffered, end the gzip stream if any, and flush.
    pub fn finish(mut self) -> io::Result<()> {
        self.drain()?;
        match self.sink.take() {
            Some(Sink::Plain(mut w)) => w.flush(),
            Some(Sink::Gzip(w)) => (*w).finish()?.flush(),
            None => Ok(()),
        }
    }

    /// How many records were written.
    pub fn records(&self) -> u64 {
        self.records
    }

    fn drain(&mut self) -> io::Result<()> {
        if self.buf.is_empty() {
            return Ok(());
        }
        let r = match self.sink.as_mut() {
            Some(s) => s.out().write_all(&self.buf),
            None => Ok(()),
        };
        self.buf.clear();
        r
    }
}

impl Drop for Writer {
    /// A writer dropped without [`Writer::finish`] still writes what it buffered (errors
    /// ignored; a gzip stream is ended by its own drop).
    fn drop(&mut self) {
        let _ = self.drain();
        if let Some(s) = self.sink.as_mut() {
            let _ = s.out().flush();
        }
    }
}

/// Append `rec` as one line.
fn push_line(b: &mut Vec<u8>, rec: &Record) -> io::Result<()> {
    let mut num = itoa::Buffer::new();
    b.extend_from_slice(b"{\"t_us\":");
    b.extend_from_slice(num.format(rec.t_us).as_bytes());
    b.extend_from_slice(b",\"db\":");
    b.extend_from_slice(num.format(rec.db).as_bytes());
    b.extend_from_slice(b",\"client\":");
    push_json_str(b, &rec.client);
    b.extend_from_slice(b",\"args\":[");
    for (i, arg) in rec.args().enumerate() {
        if i > 0 {
            b.push(b',');
        }
        match arg {
            TraceArg::Bytes(x) => match std::str::from_utf8(x) {
                Ok(s) => push_json_str(b, s),
                Err(_) => {
                    b.extend_from_slice(b"{\"b64\":\"");
                    let at = b.len();
                    let n = base64::encoded_len(x.len(), true).ok_or_else(|| {
                        io::Error::new(io::ErrorKind::InvalidInput, "argument too long")
                    })?;
                    b.resize(at + n, 0);
                    STANDARD
                        .encode_slice(x, &mut b[at..])
                        .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
                    b.extend_from_slice(b"\"}");
                }
            },
            TraceArg::Size(n) => {
                b.extend_from_slice(b"{\"size\":");
                b.extend_from_slice(num.format(n).as_bytes());
                b.push(b'}');
            }
        }
    }
    b.extend_from_slice(b"]}\n");
    Ok(())
}

/// Append `s` as a JSON string (RFC 8259: quote, backslash and control characters escaped).
fn push_json_str(out: &mut Vec<u8>, s: &str) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    out.push(b'"');
    let bytes = s.as_bytes();
    let mut from = 0;
    for (i, &c) in bytes.iter().enumerate() {
        let esc: &[u8] = match c {
            b'"' => b"\\\"",
            b'\\' => b"\\\\",
            b'\n' => b"\\n",
            b'\r' => b"\\r",
            b'\t' => b"\\t",
            0x08 => b"\\b",
            0x0c => b"\\f",
            0..=0x1f => &[
                b'\\',
                b'u',
                b'0',
                b'0',
                HEX[usize::from(c >> 4)],
                HEX[usize::from(c & 0xf)],
            ],
            _ => continue,
        };
        out.extend_from_slice(&bytes[from..i]);
        out.extend_from_slice(esc);
        from = i + 1;
    }
    out.extend_from_slice(&bytes[from..]);
    out.push(b'"');
}

/// Read one trace line into `rec` (cleared first); `Err` says what is wrong with it.
pub fn parse_line(line: &[u8], rec: &mut Record) -> Result<(), String> {
    rec.clear();
    let mut de = serde_json::Deserializer::from_slice(line);
    LineSeed { rec }
        .deserialize(&mut de)
        .and_then(|()| de.end())
        .map_err(reason)
}

/// serde_json's message without its position (always line 1), which only a syntax error
/// needs.
fn reason(e: serde_json::Error) -> String {
    let mut s = e.to_string();
    if let Some(at) = s.rfind(" at line ") {
        s.truncate(at);
    }
    match e.classify() {
        serde_json::error::Category::Syntax | serde_json::error::Category::Eof => {
            format!("not JSON: {s} at column {}", e.column())
        }
        _ => s,
    }
}

/// Base64 as Python, JavaScript or a shell may write it: padded or not.
const B64: GeneralPurpose = GeneralPurpose::new(
    &base64::alphabet::STANDARD,
    GeneralPurposeConfig::new().with_decode_padding_mode(DecodePaddingMode::Indifferent),
);

// The line is read by serde visitors straight into the record: no value tree, and no
// allocation but for strings with escapes.

struct LineSeed<'r> {
    rec: &'r mut Record,
}

impl<'de> DeserializeSeed<'de> for LineSeed<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_map(self)
    }
}

enum Key {
    TUs,
    Db,
    Client,
    Args,
    Other,
}

/// A key, or with `args` an argument object's key, matched without allocating.
struct KeySeed;

impl<'de> DeserializeSeed<'de> for KeySeed {
    type Value = Key;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Key, D::Error> {
        d.deserialize_str(self)
    }
}

impl Visitor<'_> for KeySeed {
    type Value = Key;
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a key")
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Key, E> {
        Ok(match v {
            "t_us" => Key::TUs,
            "db" => Key::Db,
            "client" => Key::Client,
            "args" => Key::Args,
            _ => Key::Other,
        })
    }
}

impl<'de> Visitor<'de> for LineSeed<'_> {
    type Value = ();
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a JSON object (one record a line)")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let rec = self.rec;
        let (mut t_us, mut db, mut client, mut args) = (false, false, false, false);
        let dup = |seen: &mut bool, name: &str| {
            if std::mem::replace(seen, true) {
                Err(de::Error::custom(format!("`{name}` given twice")))
            } else {
                Ok(())
            }
        };
        while let Some(key) = map.next_key_seed(KeySeed)? {
            match key {
                Key::TUs => {
                    dup(&mut t_us, "t_us")?;
                    rec.t_us = map.next_value_seed(Int {
                        what: "`t_us` as microseconds (an integer)",
                        max: u64::MAX,
                    })?;
                }
                Key::Db => {
                    dup(&mut db, "db")?;
                    let n = map.next_value_seed(Int {
                        what: "`db` as an integer",
                        max: u64::from(u32::MAX),
                    })?;
                    rec.db = u32::try_from(n).unwrap_or(u32::MAX);
                }
                Key::Client => {
                    dup(&mut client, "client")?;
                    map.next_value_seed(Client {
                        out: &mut rec.client,
                    })?;
                }
                Key::Args => {
                    dup(&mut args, "args")?;
                    map.next_value_seed(Args { rec: &mut *rec })?;
                }
                Key::Other => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        if !t_us {
            return Err(de::Error::custom("`t_us` missing"));
        }
        if !args {
            return Err(de::Error::custom("`args` missing"));
        }
        match rec.arg(0) {
            None => Err(de::Error::custom("`args` is empty")),
            Some(TraceArg::Size(_)) => Err(de::Error::custom(
                "args[0]: the command name must be a string or {\"b64\":..}, not a size",
            )),
            Some(TraceArg::Bytes(_)) => Ok(()),
        }
    }
}

/// A non-negative integer up to `max`.
struct Int {
    what: &'static str,
    max: u64,
}

impl<'de> DeserializeSeed<'de> for Int {
    type Value = u64;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<u64, D::Error> {
        d.deserialize_u64(self)
    }
}

impl Visitor<'_> for Int {
    type Value = u64;
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str(self.what)
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<u64, E> {
        if v > self.max {
            return Err(E::invalid_value(de::Unexpected::Unsigned(v), &self));
        }
        Ok(v)
    }
}

struct Client<'r> {
    out: &'r mut String,
}

impl<'de> DeserializeSeed<'de> for Client<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_option(self)
    }
}

impl<'de> Visitor<'de> for Client<'_> {
    type Value = ();
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("`client` as a string")
    }
    // A null client (as a data frame may write a missing one) is an empty one.
    fn visit_none<E: de::Error>(self) -> Result<(), E> {
        Ok(())
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_str(self)
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<(), E> {
        self.out.push_str(v);
        Ok(())
    }
}

struct Args<'r> {
    rec: &'r mut Record,
}

impl<'de> DeserializeSeed<'de> for Args<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for Args<'_> {
    type Value = ();
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("`args` as an array")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let mut i = 0;
        while seq
            .next_element_seed(Arg {
                rec: &mut *self.rec,
                i,
            })?
            .is_some()
        {
            i += 1;
        }
        Ok(())
    }
}

/// Argument `i`: a string, `{"b64": ..}` or `{"size": n}`.
struct Arg<'r> {
    rec: &'r mut Record,
    i: usize,
}

impl Arg<'_> {
    fn bad<E: de::Error>(&self) -> E {
        E::custom(format!(
            "args[{}]: expected a string, {{\"b64\":..}} or {{\"size\":n}}",
            self.i
        ))
    }
}

impl<'de> DeserializeSeed<'de> for Arg<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Arg<'_> {
    type Value = ();
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        write!(
            f,
            "args[{}] as a string, {{\"b64\":..}} or {{\"size\":n}}",
            self.i
        )
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<(), E> {
        self.rec.push_bytes(v.as_bytes());
        Ok(())
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let Some(key) = map.next_key_seed(ArgKeySeed)? else {
            return Err(self.bad());
        };
        let i = self.i;
        match key {
            ArgKey::B64 => map.next_value_seed(B64Arg { rec: self.rec, i })?,
            ArgKey::Size => {
                let n = map.next_value_seed(Int {
                    what: "`size` as a byte count (an integer)",
                    max: u64::MAX,
                })?;
                self.rec.push_size(n);
            }
            ArgKey::Other => return Err(self.bad()),
        }
        if map.next_key::<IgnoredAny>()?.is_some() {
            return Err(de::Error::custom(format!(
                "args[{i}]: an argument object holds one key, `b64` or `size`"
            )));
        }
        Ok(())
    }
    fn visit_bool<E: de::Error>(self, _: bool) -> Result<(), E> {
        Err(self.bad())
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<(), E> {
        Err(self.bad())
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<(), E> {
        Err(self.bad())
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<(), E> {
        Err(self.bad())
    }
    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        Err(self.bad())
    }
    fn visit_none<E: de::Error>(self) -> Result<(), E> {
        Err(self.bad())
    }
    fn visit_seq<A: SeqAccess<'de>>(self, _: A) -> Result<(), A::Error> {
        Err(self.bad())
    }
}

enum ArgKey {
    B64,
    Size,
    Other,
}

struct ArgKeySeed;

impl<'de> DeserializeSeed<'de> for ArgKeySeed {
    type Value = ArgKey;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<ArgKey, D::Error> {
        d.deserialize_str(self)
    }
}

impl Visitor<'_> for ArgKeySeed {
    type Value = ArgKey;
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("`b64` or `size`")
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<ArgKey, E> {
        Ok(match v {
            "b64" => ArgKey::B64,
            "size" => ArgKey::Size,
            _ => ArgKey::Other,
        })
    }
}

/// A `b64` string, decoded straight into the record's buffer.
struct B64Arg<'r> {
    rec: &'r mut Record,
    i: usize,
}

impl<'de> DeserializeSeed<'de> for B64Arg<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_str(self)
    }
}

impl Visitor<'_> for B64Arg<'_> {
    type Value = ();
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        write!(f, "args[{}]: `b64` as a base64 string", self.i)
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<(), E> {
        let start = self.rec.open_arg();
        B64.decode_vec(v, self.rec.arg_buf())
            .map_err(|e| E::custom(format!("args[{}]: bad base64: {e}", self.i)))?;
        self.rec.close_arg(start);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::{Format, TraceReader};
    use std::sync::{Arc, Mutex};

    /// An output the test can read after the writer is done with it.
    #[derive(Clone, Default)]
    struct Shared(Arc<Mutex<Vec<u8>>>);

    impl Write for Shared {
        fn write(&mut self, b: &[u8]) -> io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(b);
            Ok(b.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    fn record(t_us: u64, db: u32, client: &str, args: &[TraceArg<'_>]) -> Record {
        let mut r = Record::default();
        r.t_us = t_us;
        r.db = db;
        r.client.push_str(client);
        for a in args {
            match a {
                TraceArg::Bytes(b) => r.push_bytes(b),
                TraceArg::Size(n) => r.push_size(*n),
            }
        }
        r
    }

    fn samples() -> Vec<Record> {
        use TraceArg::{Bytes, Size};
        vec![
            record(
                1_732_852_800_123_456,
                0,
                "127.0.0.1:53422",
                &[Bytes(b"SET"), Bytes(b"key:1"), Bytes(b"hello")],
            ),
            record(
                1,
                15,
                "[::1]:6379",
                &[Bytes(b"SET"), Bytes(&[0, 0xff, 0xfe, b'a']), Size(512)],
            ),
            record(
                u64::MAX,
                u32::MAX,
                "caf\u{e9} \"q\" \\ \u{1f600}",
                &[Bytes("h\u{e9}llo \u{4e16}\u{754c}".as_bytes()), Bytes(b"")],
            ),
            record(
                2,
                0,
                "ctl\u{1}\u{1f}\u{7f}",
                &[
                    Bytes(b"ECHO"),
                    Bytes(b"\x00\x01\x08\x0c\n\r\t\x1f\x7f\"\\/"),
                ],
            ),
            record(3, 1, "", &[Bytes(b"PING"), Size(0), Size(u64::MAX)]),
        ]
    }

    fn write_all(records: &[Record]) -> Vec<u8> {
        let out = Shared::default();
        let mut w = Writer::new(Box::new(out.clone()));
        for r in records {
            w.write(r).unwrap();
        }
        assert_eq!(w.records(), records.len() as u64);
        w.finish().unwrap();
        let v = out.0.lock().unwrap().clone();
        v
    }

    #[test]
    fn written_lines_parse_back() {
        let recs = samples();
        let text = write_all(&recs);
        let lines: Vec<&[u8]> = text.split_inclusive(|&b| b == b'\n').collect();
        assert_eq!(lines.len(), recs.len());
        let mut back = Record::default();
        for (line, want) in lines.iter().zip(&recs) {
            parse_line(line, &mut back).unwrap();
            assert_eq!(&back, want, "{}", String::from_utf8_lossy(line));
            // Every line is JSON as any reader takes it.
            let v: serde_json::Value = serde_json::from_slice(line).unwrap();
            assert!(v["args"].is_array());
        }
        assert_eq!(
            lines[0],
            br#"{"t_us":1732852800123456,"db":0,"client":"127.0.0.1:53422","args":["SET","key:1","hello"]}
"#
        );
        assert_eq!(
            lines[1],
            br#"{"t_us":1,"db":15,"client":"[::1]:6379","args":["SET",{"b64":"AP/+YQ=="},{"size":512}]}
"#
        );
        assert!(String::from_utf8_lossy(lines[3]).contains(r#""ctl\u0001\u001f"#));
    }

    #[test]
    fn a_dropped_writer_still_writes() {
        let out = Shared::default();
        let mut w = Writer::new(Box::new(out.clone()));
        w.write(&samples()[0]).unwrap();
        drop(w);
        assert!(out.0.lock().unwrap().ends_with(b"]}\n"));
    }

    #[test]
    fn a_writer_refuses_what_would_not_read_back() {
        let mut w = Writer::new(Box::new(io::sink()));
        assert!(w.write(&Record::default()).is_err());
        assert!(w.write(&record(1, 0, "", &[TraceArg::Size(3)])).is_err());
        assert_eq!(w.records(), 0);
    }

    #[test]
    fn parse_is_lenient_where_it_can_be() {
        let mut r = Record::default();
        parse_line(
            br#" { "args" : ["get", "k\u00e9", {"b64":"AP8"}], "t_us": 5, "extra": [1, {"x": null}], "client": null } "#,
            &mut r,
        )
        .unwrap();
        assert_eq!((r.t_us, r.db, r.client.as_str()), (5, 0, ""));
        assert_eq!(r.arg(1), Some(TraceArg::Bytes("k\u{e9}".as_bytes())));
        assert_eq!(r.arg(2), Some(TraceArg::Bytes(&[0, 0xff])));
        parse_line(b"{\"t_us\":1,\"args\":[\"PING\"]}\r\n", &mut r).unwrap();
        assert_eq!(r.len(), 1);
    }

    #[test]
    fn malformed_lines_say_why() {
        let mut r = Record::default();
        let cases: &[(&str, &str)] = &[
            (r#"{"args":["GET"]}"#, "`t_us` missing"),
            (r#"{"t_us":1}"#, "`args` missing"),
            (r#"{"t_us":1,"args":[]}"#, "`args` is empty"),
            (
                r#"{"t_us":1,"args":[{"size":3}]}"#,
                "args[0]: the command name",
            ),
            (
                r#"{"t_us":1,"args":["GET",5]}"#,
                r#"args[1]: expected a string, {"b64":..} or {"size":n}"#,
            ),
            (r#"{"t_us":1,"args":["GET","a",null]}"#, "args[2]: expected"),
            (r#"{"t_us":1,"args":["GET",[]]}"#, "args[1]: expected"),
            (r#"{"t_us":1,"args":["GET",{}]}"#, "args[1]: expected"),
            (
                r#"{"t_us":1,"args":["GET",{"hex":"00"}]}"#,
                "args[1]: expected",
            ),
            (
                r#"{"t_us":1,"args":["GET",{"b64":"!!"}]}"#,
                "args[1]: bad base64",
            ),
            (
                r#"{"t_us":1,"args":["GET",{"b64":"AA==","size":1}]}"#,
                "args[1]: an argument object holds one key",
            ),
            (
                r#"{"t_us":1,"args":["GET",{"size":-1}]}"#,
                "`size` as a byte count",
            ),
            (r#"{"t_us":-1,"args":["GET"]}"#, "`t_us` as microseconds"),
            (r#"{"t_us":1.5,"args":["GET"]}"#, "`t_us` as microseconds"),
            (r#"{"t_us":"1","args":["GET"]}"#, "`t_us` as microseconds"),
            (
                r#"{"t_us":1,"db":4294967296,"args":["GET"]}"#,
                "`db` as an integer",
            ),
            (
                r#"{"t_us":1,"t_us":2,"args":["GET"]}"#,
                "`t_us` given twice",
            ),
            (r#"{"t_us":1,"args":"GET"}"#, "`args` as an array"),
            (
                r#"{"t_us":1,"client":5,"args":["GET"]}"#,
                "`client` as a string",
            ),
            (r#"[1]"#, "a JSON object"),
            (r#"{"t_us":1,"args":["GET"]} x"#, "not JSON"),
            (r#"{"t_us":1,"args":["GET"#, "not JSON"),
            ("", "not JSON"),
        ];
        for (line, want) in cases {
            let e = parse_line(line.as_bytes(), &mut r).expect_err(line);
            assert!(e.contains(want), "{line}: {e}");
            assert!(!e.contains("at line"), "{line}: {e}");
        }
        assert!(parse_line(b"{\"t_us\":1,\"args\":[\"\xff\"]}", &mut r).is_err());
    }

    #[test]
    fn gzip_round_trip_through_the_reader() {
        let path = std::env::temp_dir().join(format!(
            "respload-jsonl-{}-{:?}.jsonl.gz",
            std::process::id(),
            std::thread::current().id()
        ));
        let path = path.to_str().unwrap().to_string();
        let recs = samples();
        let mut w = Writer::create(&path).unwrap();
        for r in &recs {
            w.write(r).unwrap();
        }
        w.flush().unwrap();
        for r in &recs {
            w.write(r).unwrap();
        }
        w.finish().unwrap();
        let raw = std::fs::read(&path).unwrap();
        assert_eq!(&raw[..2], &[0x1f, 0x8b]);

        let mut reader = TraceReader::open(&path, None).unwrap();
        assert_eq!(reader.format(), Format::Respload);
        let mut rec = Record::default();
        let mut got = Vec::new();
        while reader.next_record(&mut rec).unwrap() {
            got.push(rec.clone());
        }
        let _ = std::fs::remove_file(&path);
        assert_eq!(reader.malformed(), 0);
        assert_eq!(reader.lines(), 2 * recs.len() as u64);
        assert_eq!(got.len(), 2 * recs.len());
        for (g, w) in got.iter().zip(recs.iter().chain(&recs)) {
            assert_eq!(g, w);
        }
    }

    #[test]
    fn create_reports_the_path() {
        let e = Writer::create("/nonexistent-dir/x/trace.jsonl")
            .err()
            .unwrap();
        assert!(
            matches!(&e, crate::Error::File { path, .. } if path == "/nonexistent-dir/x/trace.jsonl")
        );
    }
}
