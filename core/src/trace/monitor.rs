//! The `MONITOR` text format: one command a line, as the server sends it (a RESP simple
//! string, here without its leading `+`) and as `redis-cli MONITOR` prints it:
//!
//! ```text
//! 1339518083.107412 [0 127.0.0.1:60866] "keys" "*"
//! 1339518083.107412 [3 lua] "set" "k" "caf\xc3\xa9 \"au\" lait"
//! ```
//!
//! The time is the server's `seconds.microseconds`, the bracket holds the db and the client
//! (`ADDR:PORT`, `[IPV6]:PORT`, `unix:PATH` or `lua`), and every argument is double-quoted
//! with the server's escaping (`sdscatrepr`): `\\`, `\"`, `\n`, `\r`, `\t`, `\a`, `\b`,
//! `\xHH` for any other byte outside printable ASCII, everything else as is.
//!
//! Redis before 2.6 wrote no bracket (`1339518083.107412 (db 1) "keys" "*"`, and nothing at
//! all for db 0); those lines read too, with an empty client.

use super::record::Record;

/// Whether a line carries no command and is skipped without being malformed: an empty line,
/// or the `OK` that `redis-cli MONITOR` prints first.
pub fn is_preamble(line: &[u8]) -> bool {
    let line = line.trim_ascii();
    line.is_empty() || line == b"OK"
}

/// Read one MONITOR line into `rec` (cleared first); `Err` says what is wrong with it.
///
/// The line may end with `\n` or `\r\n`, and may keep the simple string's leading `+`.
pub fn parse_line(line: &[u8], rec: &mut Record) -> Result<(), String> {
    rec.clear();
    let mut line = line;
    while let [rest @ .., b'\n' | b'\r'] = line {
        line = rest;
    }
    if let [b'+', rest @ ..] = line {
        line = rest;
    }
    let mut p = Cursor { s: line, at: 0 };

    rec.t_us = timestamp(&mut p)?;
    if !p.eat(b' ') {
        return Err("expected a space after the time".into());
    }
    if p.eat(b'[') {
        rec.db = number_u32(&mut p).ok_or("expected the db number after `[`")?;
        if !p.eat(b' ') {
            return Err("expected a space after the db number".into());
        }
        // The client ends at the first `] "`: an argument always follows it, and an IPv6
        // address (`[::1]:6379`) holds a `]` of its own but never before a space.
        let rest = p.rest();
        let end = find(rest, b"] \"").ok_or("expected `] ` and the arguments after the client")?;
        rec.client.push_str(&String::from_utf8_lossy(&rest[..end]));
        p.at += end + 2;
    } else if p.rest().starts_with(b"(db ") {
        p.at += 4;
        rec.db = number_u32(&mut p).ok_or("expected the db number after `(db `")?;
        if !p.eat(b')') || !p.eat(b' ') {
            return Err("expected `) ` after the db number".into());
        }
    }

    loop {
        if !p.eat(b'"') {
            return Err(format!(
                "argument {}: expected a double-quoted string",
                rec.len()
            ));
        }
        let i = rec.len();
        let start = rec.open_arg();
        unquote(&mut p, rec.arg_buf()).map_err(|e| format!("argument {i}: {e}"))?;
        rec.close_arg(start);
        if p.done() {
            return Ok(());
        }
        if !p.eat(b' ') {
            return Err(format!(
                "argument {i}: expected a space or the end of the line after its closing quote"
            ));
        }
        // Tolerate several spaces, and trailing ones, though the server writes one.
        while p.eat(b' ') {}
        if p.done() {
            return Ok(());
        }
    }
}

/// Append `arg` double-quoted with MONITOR's escaping, the inverse of what [`parse_line`]
/// reads (the same bytes as the server's `sdscatrepr`).
pub fn write_quoted(out: &mut Vec<u8>, arg: &[u8]) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    out.push(b'"');
    for &b in arg {
        match b {
            b'\\' => out.extend_from_slice(b"\\\\"),
            b'"' => out.extend_from_slice(b"\\\""),
            b'\n' => out.extend_from_slice(b"\\n"),
            b'\r' => out.extend_from_slice(b"\\r"),
            b'\t' => out.extend_from_slice(b"\\t"),
            0x07 => out.extend_from_slice(b"\\a"),
            0x08 => out.extend_from_slice(b"\\b"),
            0x20..=0x7e => out.push(b),
            _ => out.extend_from_slice(&[
                b'\\',
                b'x',
                HEX[usize::from(b >> 4)],
                HEX[usize::from(b & 0xf)],
            ]),
        }
    }
    out.push(b'"');
}

struct Cursor<'a> {
    s: &'a [u8],
    at: usize,
}

impl<'a> Cursor<'a> {
    fn peek(&self) -> Option<u8> {
        self.s.get(self.at).copied()
    }

    fn eat(&mut self, b: u8) -> bool {
        if self.peek() == Some(b) {
            self.at += 1;
            true
        } else {
            false
        }
    }

    fn rest(&self) -> &'a [u8] {
        self.s.get(self.at..).unwrap_or_default()
    }

    fn done(&self) -> bool {
        self.at >= self.s.len()
    }

    fn digits(&mut self) -> &'a [u8] {
        let rest = self.rest();
        let n = rest.iter().take_while(|b| b.is_ascii_digit()).count();
        self.at += n;
        &rest[..n]
    }
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

fn number_u32(p: &mut Cursor<'_>) -> Option<u32> {
    let d = p.digits();
    if d.is_empty() {
        return None;
    }
    d.iter().try_fold(0u32, |n, &b| {
        n.checked_mul(10)?.checked_add(u32::from(b - b'0'))
    })
}

/// `SECONDS.MICROS` in microseconds, in integers: a float would lose the last digits of
/// today's times.
fn timestamp(p: &mut Cursor<'_>) -> Result<u64, String> {
    let bad = || "expected the time as `seconds.microseconds` at the start of the line";
    let secs = p.digits();
    if secs.is_empty() || !p.eat(b'.') {
        return Err(bad().into());
    }
    let frac = p.digits();
    // The server writes six digits (`%06ld`); fewer are read as a decimal fraction.
    if frac.is_empty() || frac.len() > 6 {
        return Err(bad().into());
    }
    let too_big = || "the time is too large".to_string();
    let mut t: u64 = 0;
    for &b in secs {
        t = t
            .checked_mul(10)
            .and_then(|t| t.checked_add(u64::from(b - b'0')))
            .ok_or_else(too_big)?;
    }
    let mut us: u64 = 0;
    for i in 0..6 {
        us = us * 10 + frac.get(i).map_or(0, |&b| u64::from(b - b'0'));
    }
    t.checked_mul(1_000_000)
        .and_then(|t| t.checked_add(us))
        .ok_or_else(too_big)
}

fn hex(b: u8) -> Option<u8> {
    match b {
        b'0'..=b'9' => Some(b - b'0'),
        b'a'..=b'f' => Some(b - b'a' + 10),
        b'A'..=b'F' => Some(b - b'A' + 10),
        _ => None,
    }
}

/// Read a quoted argument's bytes up to and including its closing quote (the opening one is
/// already read). Escapes the server never writes are errors rather than guesses: they mean
/// the line is not what MONITOR printed.
fn unquote(p: &mut Cursor<'_>, out: &mut Vec<u8>) -> Result<(), String> {
    let s = p.rest();
    let mut i = 0;
    loop {
        let Some(n) = s
            .get(i..)
            .and_then(|r| r.iter().position(|&b| b == b'"' || b == b'\\'))
        else {
            return Err("no closing quote".into());
        };
        out.extend_from_slice(&s[i..i + n]);
        i += n;
        if s[i] == b'"' {
            p.at += i + 1;
            return Ok(());
        }
        let Some(&e) = s.get(i + 1) else {
            return Err("no closing quote".into());
        };
        i += 2;
        let b = match e {
            b'\\' => b'\\',
            b'"' => b'"',
            b'n' => b'\n',
            b'r' => b'\r',
            b't' => b'\t',
            b'a' => 0x07,
            b'b' => 0x08,
            b'x' => {
                let hi = s.get(i).copied().and_then(hex);
                let lo = s.get(i + 1).copied().and_then(hex);
                let (Some(hi), Some(lo)) = (hi, lo) else {
                    return Err("`\\x` not followed by two hex digits".into());
                };
                i += 2;
                (hi << 4) | lo
            }
            other => {
                return Err(format!(
                    "unknown escape `\\{}`",
                    char::from(other).escape_default()
                ))
            }
        };
        out.push(b);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::TraceArg;

    fn parse(line: &[u8]) -> Record {
        let mut r = Record::default();
        parse_line(line, &mut r).unwrap_or_else(|e| panic!("{e}: {line:?}"));
        r
    }

    fn args(r: &Record) -> Vec<Vec<u8>> {
        r.args()
            .map(|a| match a {
                TraceArg::Bytes(b) => b.to_vec(),
                TraceArg::Size(n) => panic!("size {n}"),
            })
            .collect()
    }

    fn quoted(arg: &[u8]) -> Vec<u8> {
        let mut v = Vec::new();
        write_quoted(&mut v, arg);
        v
    }

    #[test]
    fn a_plain_line() {
        let r = parse(b"1339518083.107412 [0 127.0.0.1:60866] \"keys\" \"*\"\n");
        assert_eq!(r.t_us, 1_339_518_083_107_412);
        assert_eq!(r.db, 0);
        assert_eq!(r.client, "127.0.0.1:60866");
        assert_eq!(args(&r), [b"keys".to_vec(), b"*".to_vec()]);
    }

    #[test]
    fn clients_lua_unix_ipv6() {
        let r = parse(b"1.000001 [2 lua] \"get\" \"k\"");
        assert_eq!((r.t_us, r.db, r.client.as_str()), (1_000_001, 2, "lua"));
        let r = parse(b"1.5 [0 unix:/tmp/redis.sock] \"ping\"\r\n");
        assert_eq!(r.client, "unix:/tmp/redis.sock");
        assert_eq!(r.t_us, 1_500_000);
        let r = parse(b"1700000000.000000 [3 [::1]:6379] \"set\" \"a b\" \"c\"");
        assert_eq!((r.db, r.client.as_str()), (3, "[::1]:6379"));
        assert_eq!(args(&r), [b"set".to_vec(), b"a b".to_vec(), b"c".to_vec()]);
        let r = parse(b"+1.000000 [0 [2001:db8::1]:1] \"x\"");
        assert_eq!(r.client, "[2001:db8::1]:1");
    }

    #[test]
    fn the_old_format_without_a_bracket() {
        let r = parse(b"1339518083.107412 \"keys\" \"*\"");
        assert_eq!((r.db, r.client.as_str(), r.len()), (0, "", 2));
        let r = parse(b"1339518083.107412 (db 1) \"keys\" \"*\"");
        assert_eq!(r.db, 1);
    }

    #[test]
    fn quoting_cases() {
        let r =
            parse(br#"1.000000 [0 lua] "set" "a\"b" "c\\d" "" "sp ace" "\x00\xff\xAB\n\r\t\a\b""#);
        assert_eq!(
            args(&r),
            [
                b"set".to_vec(),
                b"a\"b".to_vec(),
                b"c\\d".to_vec(),
                b"".to_vec(),
                b"sp ace".to_vec(),
                vec![0, 0xff, 0xab, b'\n', b'\r', b'\t', 7, 8],
            ]
        );
        assert_eq!(quoted(b"a\"b\\c"), br#""a\"b\\c""#);
        assert_eq!(
            quoted(&[0, 0x80, 0xff, 0x7f, b' ']),
            br#""\x00\x80\xff\x7f ""#
        );
        assert_eq!(quoted(b"\n\r\t\x07\x08"), br#""\n\r\t\a\b""#);
        assert_eq!(quoted(b""), b"\"\"");
        // Raw bytes the server would have escaped are still read as they are.
        assert_eq!(
            args(&parse(b"1.0 [0 lua] \"\xc3\xa9\"")),
            [b"\xc3\xa9".to_vec()]
        );
    }

    #[test]
    fn preambles() {
        assert!(is_preamble(b"OK"));
        assert!(is_preamble(b"OK\r\n"));
        assert!(is_preamble(b""));
        assert!(is_preamble(b"  \r\n"));
        assert!(!is_preamble(b"1.0 [0 lua] \"ping\""));
    }

    #[test]
    fn malformed_lines_say_why() {
        let mut r = Record::default();
        let cases: &[(&[u8], &str)] = &[
            (b"OK", "time"),
            (b"abc [0 lua] \"x\"", "time"),
            (b"1.1234567 [0 lua] \"x\"", "time"),
            (b"99999999999999999999.0 [0 lua] \"x\"", "too large"),
            (b"1.0 [x lua] \"x\"", "db"),
            (b"1.0 [0 lua \"x\"", "client"),
            (b"1.0 [0 lua] x", "client"),
            (b"1.0 [0 lua] \"x", "closing quote"),
            (b"1.0 [0 lua] \"x\\", "closing quote"),
            (b"1.0 [0 lua] \"x\"y", "argument 0"),
            (b"1.0 [0 lua] \"a\" \"\\xg0\"", "argument 1: `\\x`"),
            (b"1.0 [0 lua] \"\\q\"", "unknown escape"),
            (b"1.0 [0 lua] ", "client"),
            (b"1.0 [0 lua]", "client"),
            (b"1.0", "space"),
        ];
        for (line, want) in cases {
            let e = parse_line(line, &mut r).expect_err(&String::from_utf8_lossy(line));
            assert!(e.contains(want), "{line:?}: {e}");
        }
    }

    #[test]
    fn write_quoted_then_parse_round_trips() {
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let mut r = Record::default();
        let mut line = Vec::new();
        for _ in 0..2000 {
            let argc = 1 + (next() % 5) as usize;
            let want: Vec<Vec<u8>> = (0..argc)
                .map(|_| {
                    let n = (next() % 24) as usize;
                    // Biased towards the bytes that need escaping.
                    (0..n)
                        .map(|_| match next() % 4 {
                            0 => b"\\\"\n\r\t\x07\x08 x"[(next() % 9) as usize],
                            _ => next() as u8,
                        })
                        .collect()
                })
                .collect();
            line.clear();
            line.extend_from_slice(b"1732852800.123456 [5 10.0.0.1:1234] ");
            for (i, a) in want.iter().enumerate() {
                if i > 0 {
                    line.push(b' ');
                }
                write_quoted(&mut line, a);
            }
            assert!(!line.contains(&b'\n'));
            parse_line(&line, &mut r).unwrap();
            assert_eq!(args(&r), want);
            assert_eq!((r.t_us, r.db), (1_732_852_800_123_456, 5));
        }
    }
}
