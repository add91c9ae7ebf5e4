//! Incremental RESP2/RESP3 reply framer: finds reply boundaries and classifies
//! replies without building values or allocating.

use std::fmt;
use std::ops::Range;

/// Nesting bound for aggregates (attributes included).
const MAX_DEPTH: usize = 64;
/// Redis' default `proto-max-bulk-len`.
const MAX_BULK_LEN: i64 = 512 * 1024 * 1024;
const MAX_AGGREGATE_LEN: i64 = 1 << 32;
/// Sign plus the 19 digits of an i64; anything longer is garbage.
const MAX_INT_LINE: usize = 20;
/// Longest simple string, error or other line: a server sending more without CRLF is not
/// answering (real ones are short; a script's status reply of a megabyte would be refused).
const MAX_TEXT_LINE: usize = 1 << 20;

/// Class of one complete top-level reply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reply {
    /// Simple string, integer, boolean, double, big number.
    Ok,
    /// A non-null bulk/verbatim string (including empty `""`), or a non-empty array/map/set.
    Value,
    /// RESP2 null bulk (`$-1`) or null array (`*-1`), RESP3 null (`_`).
    Nil,
    /// An aggregate (array, map, set) with zero elements.
    Empty,
    /// Simple error (`-`) or blob error (`!`).
    Error {
        /// Byte range (relative to the slice passed to [`Framer::next`]) of the first
        /// word of the message, e.g. `WRONGTYPE`, `MOVED`, `ERR`; the whole message
        /// if it has no space.
        kind: Range<usize>,
    },
    /// RESP3 push message (`>`): out of band, not the answer to a request.
    Push,
}

/// Malformed input; the connection should be dropped and the framer reset.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProtocolError {
    /// Offset of the offending byte, relative to the slice passed to [`Framer::next`].
    pub offset: usize,
    /// Short description of what was wrong.
    pub message: &'static str,
}

impl ProtocolError {
    fn new(offset: usize, message: &'static str) -> Self {
        Self { offset, message }
    }
}

impl fmt::Display for ProtocolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "RESP protocol error at byte {}: {}",
            self.offset, self.message
        )
    }
}

impl std::error::Error for ProtocolError {}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Line {
    Text,
    Int,
    Bool,
    Null,
}

/// Resumable framer for one connection's reply stream.
#[derive(Debug, Clone)]
pub struct Framer {
    /// Type byte of the item being parsed, relative to the caller's buffer.
    pos: usize,
    /// Next byte to inspect in a partial line (0 = not started), so long lines
    /// are scanned once in total rather than once per call.
    scan: usize,
    /// (data start, data end) of a bulk body still arriving.
    bulk: Option<(usize, usize)>,
    /// Elements still expected by each open aggregate.
    remaining: [u64; MAX_DEPTH],
    /// Bit i set: frame i is an attribute, which does not count as an element.
    attr: u64,
    depth: usize,
    /// Class of the top-level value, decided by its header.
    top: Reply,
    #[cfg(test)]
    inspected: usize,
}

impl Default for Framer {
    fn default() -> Self {
        Self::new()
    }
}

impl Framer {
    /// Creates a framer positioned at the start of a reply.
    pub fn new() -> Self {
        Self {
            pos: 0,
            scan: 0,
            bulk: None,
            remaining: [0; MAX_DEPTH],
            attr: 0,
            depth: 0,
            top: Reply::Ok,
            #[cfg(test)]
            inspected: 0,
        }
    }

    /// Try to frame one reply from the start of `buf`.
    ///
    /// The caller passes the same unconsumed bytes again (possibly with more
    /// appended at the end) until a reply completes; then it drops `consumed`
    /// bytes from the front. `Ok(None)` means more bytes are needed. Progress is
    /// kept between calls, so a long reply is not rescanned from its start.
    ///
    /// After an error the framer is reset; the stream itself cannot be resynced.
    pub fn next(&mut self, buf: &[u8]) -> Result<Option<(usize, Reply)>, ProtocolError> {
        if self.pos == 0 && self.scan == 0 && self.bulk.is_none() && self.depth == 0 {
            if let Some(r) = whole_simple_reply(buf) {
                return Ok(Some(r));
            }
        }
        let r = self.step(buf);
        if r.is_err() {
            self.reset();
        }
        r
    }

    /// Forget any partial state (after a reconnect).
    pub fn reset(&mut self) {
        *self = Self::new();
    }

    fn step(&mut self, buf: &[u8]) -> Result<Option<(usize, Reply)>, ProtocolError> {
        loop {
            if let Some((start, end)) = self.bulk {
                let Some(term) = buf.get(end..end.saturating_add(2)) else {
                    return Ok(None);
                };
                self.count(2);
                if term != b"\r\n" {
                    return Err(ProtocolError::new(end, "bulk data not followed by CRLF"));
                }
                self.bulk = None;
                self.pos = end + 2;
                if self.depth == 0 {
                    if let Reply::Error { kind } = &mut self.top {
                        *kind = first_word(buf, start, end);
                    }
                }
                if self.element_done() {
                    return Ok(Some(self.take()));
                }
                continue;
            }

            let at = self.pos;
            let Some(&ty) = buf.get(at) else {
                return Ok(None);
            };
            let line = match ty {
                b'+' | b'-' | b',' | b'(' => Line::Text,
                b':' | b'$' | b'=' | b'!' | b'*' | b'%' | b'~' | b'>' | b'|' => Line::Int,
                b'#' => Line::Bool,
                b'_' => Line::Null,
                _ => return Err(ProtocolError::new(at, "unknown type byte")),
            };
            let Some(cr) = self.scan_line(buf, line)? else {
                return Ok(None);
            };
            let body_start = at + 1;
            let body = buf.get(body_start..cr).unwrap_or_default();
            let next = cr + 2;
            let bad_int = || ProtocolError::new(body_start, "invalid integer");

            let class = match ty {
                b'+' | b',' | b'(' => Reply::Ok,
                b'-' if self.depth == 0 => Reply::Error {
                    kind: first_word(buf, body_start, cr),
                },
                b'-' => Reply::Ok, // nested: class is never reported
                b':' => {
                    parse_int(body).ok_or_else(bad_int)?;
                    Reply::Ok
                }
                b'#' if body == b"t" || body == b"f" => Reply::Ok,
                b'#' => return Err(ProtocolError::new(body_start, "invalid boolean")),
                b'_' => Reply::Nil,
                b'$' | b'=' | b'!' => {
                    let n = parse_int(body).ok_or_else(bad_int)?;
                    if n == -1 && ty == b'$' {
                        Reply::Nil
                    } else {
                        if !(0..=MAX_BULK_LEN).contains(&n) {
                            return Err(ProtocolError::new(body_start, "bulk length out of range"));
                        }
                        let end = usize::try_from(n)
                            .ok()
                            .and_then(|n| next.checked_add(n))
                            .ok_or_else(|| ProtocolError::new(body_start, "bulk too large"))?;
                        if self.depth == 0 {
                            self.top = if ty == b'!' {
                                Reply::Error { kind: 0..0 }
                            } else {
                                Reply::Value
                            };
                        }
                        self.bulk = Some((next, end));
                        self.pos = next;
                        continue;
                    }
                }
                _ => {
                    let n = parse_int(body).ok_or_else(bad_int)?;
                    if n == -1 && ty == b'*' {
                        Reply::Nil
                    } else {
                        if !(0..=MAX_AGGREGATE_LEN).contains(&n) {
                            return Err(ProtocolError::new(
                                body_start,
                                "aggregate count out of range",
                            ));
                        }
                        let pairs = ty == b'%' || ty == b'|';
                        let items = n.unsigned_abs() << u32::from(pairs);
                        if ty == b'|' {
                            // Attribute: skipped, the value after it is the reply.
                            self.pos = next;
                            if items > 0 {
                                self.open(items, true, at)?;
                            }
                            continue;
                        }
                        if items > 0 {
                            if self.depth == 0 {
                                self.top = if ty == b'>' {
                                    Reply::Push
                                } else {
                                    Reply::Value
                                };
                            }
                            self.open(items, false, at)?;
                            self.pos = next;
                            continue;
                        }
                        if ty == b'>' {
                            Reply::Push
                        } else {
                            Reply::Empty
                        }
                    }
                }
            };
            // A scalar, or an aggregate that is complete already (null/empty).
            self.pos = next;
            if self.depth == 0 {
                self.top = class;
            }
            if self.element_done() {
                return Ok(Some(self.take()));
            }
        }
    }

    /// Finds the CR of the line whose type byte is at `self.pos`, validating as
    /// it goes so garbage is rejected without waiting for a CRLF that may never come.
    fn scan_line(&mut self, buf: &[u8], line: Line) -> Result<Option<usize>, ProtocolError> {
        let start = self.pos + 1;
        let max = match line {
            Line::Text => MAX_TEXT_LINE,
            Line::Int => MAX_INT_LINE,
            Line::Bool => 1,
            Line::Null => 0,
        };
        self.scan = self.scan.max(start);
        while let Some(&b) = buf.get(self.scan) {
            self.count(1);
            match b {
                b'\r' => {
                    return match buf.get(self.scan + 1) {
                        None => Ok(None),
                        Some(b'\n') => {
                            let cr = self.scan;
                            self.scan = 0;
                            Ok(Some(cr))
                        }
                        Some(_) => Err(ProtocolError::new(self.scan + 1, "expected LF after CR")),
                    }
                }
                b'\n' => return Err(ProtocolError::new(self.scan, "LF without CR")),
                _ => {}
            }
            let i = self.scan - start;
            if i >= max {
                return Err(ProtocolError::new(self.scan, "line too long"));
            }
            if line == Line::Int && !(b.is_ascii_digit() || (b == b'-' && i == 0)) {
                return Err(ProtocolError::new(self.scan, "invalid integer"));
            }
            self.scan += 1;
        }
        Ok(None)
    }

    fn open(&mut self, items: u64, attr: bool, at: usize) -> Result<(), ProtocolError> {
        if self.depth >= MAX_DEPTH {
            return Err(ProtocolError::new(at, "nesting too deep"));
        }
        self.remaining[self.depth] = items;
        if attr {
            self.attr |= 1 << self.depth;
        }
        self.depth += 1;
        Ok(())
    }

    /// Records one finished element; returns true when the top-level reply is complete.
    fn element_done(&mut self) -> bool {
        while let Some(i) = self.depth.checked_sub(1) {
            let left = &mut self.remaining[i];
            *left = left.saturating_sub(1);
            if *left > 0 {
                return false;
            }
            self.depth = i;
            let bit = 1u64 << i;
            if self.attr & bit != 0 {
                self.attr &= !bit;
                return false;
            }
        }
        true
    }

    fn take(&mut self) -> (usize, Reply) {
        let consumed = self.pos;
        self.pos = 0;
        self.scan = 0;
        (consumed, std::mem::replace(&mut self.top, Reply::Ok))
    }

    #[inline]
    fn count(&mut self, _n: usize) {
        #[cfg(test)]
        {
            self.inspected += _n;
        }
    }
}

/// The common replies framed in one pass, at the start of a reply: a complete top-level bulk
/// string (`$1024\r\n...\r\n`, a GET hit), null (`$-1\r\n`, `_\r\n`: a miss), simple
/// string (`+OK\r\n`) or integer of up to 18 digits (`:1\r\n`: INCR, DEL, SADD...). `None`
/// for anything else, incomplete or malformed: the general path then frames it (and reports
/// errors), so this only has to be right when it answers.
#[inline]
fn whole_simple_reply(buf: &[u8]) -> Option<(usize, Reply)> {
    match *buf.first()? {
        b'$' if buf.get(1) == Some(&b'-') => {
            (buf.get(..5)? == b"$-1\r\n").then_some((5, Reply::Nil))
        }
        b'_' => (buf.get(..3)? == b"_\r\n").then_some((3, Reply::Nil)),
        b':' => {
            // At most 18 digits: no i64 overflows, so the general path's parse agrees.
            let start = 1 + usize::from(buf.get(1) == Some(&b'-'));
            let mut i = start;
            loop {
                match *buf.get(i)? {
                    b'0'..=b'9' if i - start < 18 => i += 1,
                    b'\r' if i > start => break,
                    _ => return None,
                }
            }
            (buf.get(i + 1) == Some(&b'\n')).then_some((i + 2, Reply::Ok))
        }
        b'$' => {
            let mut n: usize = 0;
            let mut i = 1;
            loop {
                let b = *buf.get(i)?;
                match b {
                    b'0'..=b'9' if i <= MAX_FAST_DIGITS => n = n * 10 + usize::from(b - b'0'),
                    b'\r' if i > 1 => break,
                    _ => return None,
                }
                i += 1;
            }
            if buf.get(i + 1) != Some(&b'\n') || n > MAX_BULK_LEN as usize {
                return None;
            }
            let end = i + 2 + n;
            (buf.get(end..end + 2)? == b"\r\n").then_some((end + 2, Reply::Value))
        }
        b'+' => {
            let cr = buf.iter().position(|&b| b == b'\r' || b == b'\n')?;
            // A longer line is the general path's error, whether it arrived whole or not.
            (cr <= 1 + MAX_TEXT_LINE && buf[cr] == b'\r' && buf.get(cr + 1) == Some(&b'\n'))
                .then_some((cr + 2, Reply::Ok))
        }
        _ => None,
    }
}

/// Length digits the fast path reads: enough for any valid bulk ([`MAX_BULK_LEN`] has 9),
/// and no overflow of a 32-bit `usize`.
const MAX_FAST_DIGITS: usize = 9;

fn first_word(buf: &[u8], start: usize, end: usize) -> Range<usize> {
    let len = buf
        .get(start..end)
        .and_then(|m| m.iter().position(|&b| b == b' '))
        .unwrap_or(end.saturating_sub(start));
    start..start + len
}

fn parse_int(s: &[u8]) -> Option<i64> {
    let (neg, digits) = match s.split_first() {
        Some((b'-', rest)) => (true, rest),
        _ => (false, s),
    };
    if digits.is_empty() {
        return None;
    }
    digits.iter().try_fold(0i64, |v, &d| {
        if !d.is_ascii_digit() {
            return None;
        }
        let d = i64::from(d - b'0');
        let v = v.checked_mul(10)?;
        // Accumulate negatives downward so i64::MIN parses.
        if neg {
            v.checked_sub(d)
        } else {
            v.checked_add(d)
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(kind: Range<usize>) -> Reply {
        Reply::Error { kind }
    }

    /// (bytes, expected reply); each entry is exactly one complete reply.
    fn table() -> Vec<(&'static [u8], Reply)> {
        use Reply::*;
        vec![
            (b"+OK\r\n", Ok),
            (b"+\r\n", Ok),
            (b"-ERR unknown command\r\n", err(1..4)),
            (b"-WRONGTYPE Operation against a key\r\n", err(1..10)),
            (b"-MOVED 3999 127.0.0.1:6381\r\n", err(1..6)),
            (b"-NOSPACE\r\n", err(1..8)),
            (b":1000\r\n", Ok),
            (b":-9223372036854775808\r\n", Ok),
            (b"$5\r\nhello\r\n", Value),
            (b"$0\r\n\r\n", Value),
            (b"$4\r\n\r\n\0\n\r\n", Value),
            (b"$-1\r\n", Nil),
            (b"*0\r\n", Empty),
            (b"*-1\r\n", Nil),
            (b"*3\r\n$3\r\nfoo\r\n:1\r\n$-1\r\n", Value),
            (b"_\r\n", Nil),
            (b"#t\r\n", Ok),
            (b"#f\r\n", Ok),
            (b",3.14\r\n", Ok),
            (b",-inf\r\n", Ok),
            (b"(3492890328409238509324850943850943825024385\r\n", Ok),
            (b"=15\r\ntxt:Some string\r\n", Value),
            (b"!21\r\nSYNTAX invalid syntax\r\n", err(5..11)),
            (b"!3\r\nERR\r\n", err(4..7)),
            (b"%1\r\n+key\r\n:1\r\n", Value),
            (b"%0\r\n", Empty),
            (b"~2\r\n+a\r\n+b\r\n", Value),
            (b"~0\r\n", Empty),
            (b">3\r\n+message\r\n+chan\r\n$2\r\nhi\r\n", Push),
            (b">0\r\n", Push),
            // Attribute before the reply, then nested maps of arrays.
            (b"|1\r\n+key-popularity\r\n%2\r\n$1\r\na\r\n,0.1923\r\n$1\r\nb\r\n,0.0012\r\n*2\r\n:2039123\r\n:9543892\r\n", Value),
            (b"|1\r\n+a\r\n*1\r\n:1\r\n-ERR x\r\n", err(17..20)),
            (b"|0\r\n*0\r\n", Empty),
            (b"%2\r\n+a\r\n*2\r\n:1\r\n%1\r\n+x\r\n*0\r\n+b\r\n*0\r\n", Value),
            // Nested attribute does not count as an element; nested push/error/null are elements.
            (b"*2\r\n|1\r\n+a\r\n+b\r\n:1\r\n:2\r\n", Value),
            (b"*3\r\n>1\r\n+x\r\n-ERR nested\r\n_\r\n", Value),
            (b"*1\r\n!3\r\nERR\r\n", Value),
        ]
    }

    /// (bytes, offset, message) of malformed input.
    fn bad() -> Vec<(Vec<u8>, usize, &'static str)> {
        let mut deep = b"*1\r\n".repeat(MAX_DEPTH + 1);
        deep.extend_from_slice(b":1\r\n");
        vec![
            (b"?x\r\n".to_vec(), 0, "unknown type byte"),
            (b"$abc".to_vec(), 1, "invalid integer"),
            (b"*1x".to_vec(), 2, "invalid integer"),
            (b"$\r\n".to_vec(), 1, "invalid integer"),
            (b"*-\r\n".to_vec(), 1, "invalid integer"),
            (b":1-2\r\n".to_vec(), 2, "invalid integer"),
            (b"$99999999999999999999\r\n".to_vec(), 1, "invalid integer"),
            (b"$123456789012345678901".to_vec(), 21, "line too long"),
            (b"$5\rX".to_vec(), 3, "expected LF after CR"),
            (b"+OK\n".to_vec(), 3, "LF without CR"),
            (
                b"$3\r\nfoobar".to_vec(),
                7,
                "bulk data not followed by CRLF",
            ),
            (b"$-2\r\n".to_vec(), 1, "bulk length out of range"),
            (b"=-1\r\n".to_vec(), 1, "bulk length out of range"),
            (b"$536870913\r\n".to_vec(), 1, "bulk length out of range"),
            // 2^62 bytes, 2^40 elements (issue 29): refused by their headers, never allocated.
            (
                b"$4611686018427387904\r\n".to_vec(),
                1,
                "bulk length out of range",
            ),
            (
                b"*4294967297\r\n".to_vec(),
                1,
                "aggregate count out of range",
            ),
            (
                b"*1099511627776\r\n".to_vec(),
                1,
                "aggregate count out of range",
            ),
            (
                b"~1099511627776\r\n".to_vec(),
                1,
                "aggregate count out of range",
            ),
            (b"%-1\r\n".to_vec(), 1, "aggregate count out of range"),
            (b"#x\r\n".to_vec(), 1, "invalid boolean"),
            (b"#tt".to_vec(), 2, "line too long"),
            (b"_x".to_vec(), 1, "line too long"),
            (deep, 4 * MAX_DEPTH, "nesting too deep"),
        ]
    }

    #[derive(Debug, PartialEq)]
    enum Ev {
        Reply(usize, Reply, Vec<u8>),
        Err(usize, &'static str),
    }

    /// Feeds `chunks` the way a connection would: append, call `next` until
    /// `None`, drain what was consumed. Error offsets are made stream-absolute.
    fn feed<'a>(f: &mut Framer, chunks: impl IntoIterator<Item = &'a [u8]>) -> Vec<Ev> {
        let (mut buf, mut base, mut out) = (Vec::new(), 0, Vec::new());
        for chunk in chunks {
            buf.extend_from_slice(chunk);
            loop {
                match f.next(&buf) {
                    Ok(Some((n, r))) => {
                        let kind = match &r {
                            Reply::Error { kind } => buf[kind.clone()].to_vec(),
                            _ => Vec::new(),
                        };
                        out.push(Ev::Reply(n, r, kind));
                        buf.drain(..n);
                        base += n;
                    }
                    Ok(None) => break,
                    Err(e) => {
                        out.push(Ev::Err(base + e.offset, e.message));
                        return out;
                    }
                }
            }
        }
        out
    }

    fn whole(stream: &[u8]) -> Vec<Ev> {
        feed(&mut Framer::new(), [stream])
    }

    #[test]
    fn every_type() {
        for (bytes, want) in table() {
            let mut f = Framer::new();
            let got = f.next(bytes).unwrap();
            assert_eq!(
                got,
                Some((bytes.len(), want.clone())),
                "{:?}",
                String::from_utf8_lossy(bytes)
            );
            // Trailing bytes must not change the result, and every strict prefix is incomplete.
            let mut more = bytes.to_vec();
            more.extend_from_slice(b"+OK\r\n");
            assert_eq!(
                Framer::new().next(&more).unwrap(),
                Some((bytes.len(), want))
            );
            for i in 0..bytes.len() {
                assert_eq!(Framer::new().next(&bytes[..i]).unwrap(), None);
            }
        }
    }

    #[test]
    fn error_kinds() {
        let kinds: Vec<Vec<u8>> = whole(&streams()[0])
            .into_iter()
            .filter_map(|e| match e {
                Ev::Reply(_, Reply::Error { .. }, k) => Some(k),
                _ => None,
            })
            .collect();
        let want: [&[u8]; 7] = [
            b"ERR",
            b"WRONGTYPE",
            b"MOVED",
            b"NOSPACE",
            b"SYNTAX",
            b"ERR",
            b"ERR",
        ];
        assert_eq!(kinds, want);
    }

    #[test]
    fn a_line_that_does_not_end_is_refused_at_its_limit() {
        // Not in `bad()`: split at every boundary, a megabyte would take minutes.
        let mut endless = b"-".to_vec();
        endless.resize(1 + MAX_TEXT_LINE, b'a');
        let mut f = Framer::new();
        assert_eq!(f.next(&endless).unwrap(), None);
        endless.push(b'a');
        let e = f.next(&endless).unwrap_err();
        assert_eq!((e.offset, e.message), (1 + MAX_TEXT_LINE, "line too long"));
        // A line of the longest allowed, ended: a reply.
        endless.truncate(1 + MAX_TEXT_LINE);
        endless.extend_from_slice(b"\r\n");
        let (len, reply) = Framer::new().next(&endless).unwrap().unwrap();
        assert_eq!(len, MAX_TEXT_LINE + 3);
        assert!(matches!(reply, Reply::Error { .. }));
        // The same for a simple string (the one-pass path): the longest allowed is a reply,
        // one byte more is refused even when its CRLF came in the same read.
        endless[0] = b'+';
        let (len, reply) = Framer::new().next(&endless).unwrap().unwrap();
        assert_eq!((len, reply), (MAX_TEXT_LINE + 3, Reply::Ok));
        endless.insert(1, b'a');
        let e = Framer::new().next(&endless).unwrap_err();
        assert_eq!((e.offset, e.message), (1 + MAX_TEXT_LINE, "line too long"));
    }

    #[test]
    fn malformed() {
        for (bytes, offset, message) in bad() {
            let mut f = Framer::new();
            let e = f.next(&bytes).unwrap_err();
            assert_eq!(
                (e.offset, e.message),
                (offset, message),
                "{:?}",
                String::from_utf8_lossy(&bytes)
            );
            // The framer resets itself after an error.
            assert_eq!(f.next(b"+OK\r\n").unwrap(), Some((5, Reply::Ok)));
        }
        let mut ok_depth = b"*1\r\n".repeat(MAX_DEPTH);
        ok_depth.extend_from_slice(b":1\r\n");
        assert_eq!(
            Framer::new().next(&ok_depth).unwrap(),
            Some((ok_depth.len(), Reply::Value))
        );
    }

    fn streams() -> Vec<Vec<u8>> {
        let mixed: Vec<u8> = table().iter().flat_map(|(b, _)| b.to_vec()).collect();
        let mut push_between =
            b"$3\r\nabc\r\n>2\r\n+invalidate\r\n*1\r\n$1\r\nk\r\n:7\r\n".to_vec();
        push_between.extend_from_slice(b"$3\r\nfoobar"); // ends in a protocol error
        let mut streams = vec![mixed, push_between];
        streams.extend(bad().into_iter().map(|(mut b, _, _)| {
            b.splice(0..0, b"-MOVED 1 h:1\r\n".iter().copied());
            b
        }));
        streams
    }

    #[test]
    fn mixed_stream() {
        let events = whole(&streams()[0]);
        let want: Vec<(usize, Reply)> = table().into_iter().map(|(b, r)| (b.len(), r)).collect();
        let got: Vec<(usize, Reply)> = events
            .into_iter()
            .map(|e| match e {
                Ev::Reply(n, r, _) => (n, r),
                Ev::Err(o, m) => panic!("unexpected error at {o}: {m}"),
            })
            .collect();
        assert_eq!(got, want);
        let pushes = whole(&streams()[1]);
        assert_eq!(pushes[1], Ev::Reply(28, Reply::Push, Vec::new()));
        assert_eq!(pushes[3], Ev::Err(48, "bulk data not followed by CRLF"));
    }

    #[test]
    fn split_at_every_boundary() {
        for stream in streams() {
            let want = whole(&stream);
            for i in 0..=stream.len() {
                let got = feed(&mut Framer::new(), [&stream[..i], &stream[i..]]);
                assert_eq!(
                    got,
                    want,
                    "split at {i} of {:?}",
                    String::from_utf8_lossy(&stream)
                );
            }
            assert_eq!(feed(&mut Framer::new(), stream.chunks(1)), want);
            assert_eq!(feed(&mut Framer::new(), stream.chunks(7)), want);
        }
    }

    /// A small seeded random stream: `rand(n)` is in `0..n`.
    fn xorshift(mut seed: u64) -> impl FnMut(usize) -> usize {
        move |n| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % n as u64) as usize
        }
    }

    #[test]
    fn mutated_streams_never_panic_and_split_consistently() {
        let base = streams().swap_remove(0);
        let alphabet = b"\r\n-+*$%|>_#:!0123456789 ";
        let mut rand = xorshift(0x9e37_79b9_7f4a_7c15);
        for _ in 0..2_000 {
            let mut s = base.clone();
            for _ in 0..1 + rand(3) {
                let i = rand(s.len());
                s[i] = alphabet[rand(alphabet.len())];
            }
            let want = whole(&s);
            let cut = rand(s.len() + 1);
            assert_eq!(feed(&mut Framer::new(), [&s[..cut], &s[cut..]]), want);
            assert_eq!(feed(&mut Framer::new(), s.chunks(1 + rand(9))), want);
        }
    }

    #[test]
    fn the_fast_path_agrees_with_the_general_one_wherever_it_answers() {
        let mut rand = xorshift(0x2545_f491_4f6c_dd1d);
        let alphabet = b"\r\n-+$:_0123456789x";
        let base = streams().swap_remove(0);
        let mut answered = 0;
        for round in 0..3_000 {
            let mut s = base.clone();
            for _ in 0..round % 4 {
                let i = rand(s.len());
                s[i] = alphabet[rand(alphabet.len())];
            }
            for at in 0..s.len() {
                for end in [s.len(), at + rand(s.len() - at + 1)] {
                    let buf = &s[at..end];
                    if let Some(fast) = whole_simple_reply(buf) {
                        answered += 1;
                        assert_eq!(Framer::new().step(buf), Ok(Some(fast)), "{buf:?}");
                    }
                }
            }
        }
        // It did answer, for every type it knows.
        assert!(answered > 10_000, "{answered}");
        for (buf, reply) in [
            (&b"$5\r\nhello\r\n"[..], Reply::Value),
            (b"+OK\r\n", Reply::Ok),
            (b"$-1\r\n", Reply::Nil),
            (b"_\r\n", Reply::Nil),
            (b":0\r\n", Reply::Ok),
            (b":-12\r\n", Reply::Ok),
            (b":999999999999999999\r\n", Reply::Ok),
        ] {
            assert_eq!(
                whole_simple_reply(buf),
                Some((buf.len(), reply.clone())),
                "{buf:?}"
            );
            assert_eq!(
                Framer::new().step(buf),
                Ok(Some((buf.len(), reply))),
                "{buf:?}"
            );
        }
        for other in [
            &b"$5\r\nhello\r"[..],
            b"$-1\r",
            b"$-2\r\n",
            b"$-10\r\n",
            b"$\r\n",
            b"+OK\r",
            b"+O\nK\r\n",
            b"_\r",
            b"_x\r\n",
            b":\r\n",
            b":-\r\n",
            b":1\r",
            b":1x\r\n",
            b":--1\r\n",
            // 19 digits: left to the general path, which checks for overflow.
            b":9223372036854775807\r\n",
            b":9223372036854775808\r\n",
        ] {
            assert_eq!(whole_simple_reply(other), None, "{other:?}");
        }
    }

    #[test]
    fn large_replies_are_not_rescanned() {
        let mut f = Framer::new();
        let mut bulk = b"$1048576\r\n".to_vec();
        bulk.resize(bulk.len() + (1 << 20), b'\r');
        bulk.extend_from_slice(b"\r\n");
        let got = feed(&mut f, bulk.chunks(4096));
        assert_eq!(got, [Ev::Reply(bulk.len(), Reply::Value, Vec::new())]);
        assert!(f.inspected < 64, "bulk body inspected: {}", f.inspected);

        let mut line = vec![b'+'];
        line.resize(1 << 20, b'a');
        line.extend_from_slice(b"\r\n");
        let mut f = Framer::new();
        assert_eq!(feed(&mut f, line.chunks(4096)).len(), 1);
        assert!(f.inspected <= line.len() + line.len() / 4096 + 1);

        let mut array = b"*10000\r\n".to_vec();
        for _ in 0..10_000 {
            array.extend_from_slice(b":12345\r\n");
        }
        let mut f = Framer::new();
        let got = feed(&mut f, array.chunks(4096));
        assert_eq!(got, [Ev::Reply(array.len(), Reply::Value, Vec::new())]);
        assert!(f.inspected <= array.len() + array.len() / 4096 + 1);
    }

    #[test]
    fn reset_forgets_partial_state() {
        let mut f = Framer::new();
        assert_eq!(f.next(b"*2\r\n$5\r\nhel").unwrap(), None);
        f.reset();
        assert_eq!(f.next(b":1\r\n").unwrap(), Some((4, Reply::Ok)));
        let e = ProtocolError::new(3, "x");
        assert_eq!(e.to_string(), "RESP protocol error at byte 3: x");
    }
}
