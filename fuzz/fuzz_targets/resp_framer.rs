//! The RESP framer on any byte stream, split anywhere: it never panics, and the replies and
//! errors it finds are exactly those of a small reference parser written here (recursive,
//! over the whole stream, no state kept between calls), wherever the stream was split (the
//! first input byte picks the split points: every k bytes, chunks of 1 to 64 bytes drawn from
//! it, and byte by byte). Its bounds hold: a reply is never longer than
//! the bytes given; a bulk length over 512 MiB, an aggregate over 2^32 elements or nesting
//! deeper than 64 is a protocol error, never an allocation or a wait.
#![no_main]

use libfuzzer_sys::fuzz_target;
use respload::resp::{Framer, Reply};

/// The replies framed from `stream` fed in chunks ending at `cuts`: each reply's length and
/// class (error kinds as their text), then the error that stopped it, if any.
fn frame(stream: &[u8], cuts: &[usize]) -> (Vec<(usize, String)>, Option<&'static str>) {
    let mut framer = Framer::new();
    let mut buf: Vec<u8> = Vec::new();
    let mut out = Vec::new();
    let mut fed = 0;
    for &cut in cuts.iter().chain(std::iter::once(&stream.len())) {
        if cut <= fed {
            continue;
        }
        buf.extend_from_slice(&stream[fed..cut]);
        fed = cut;
        loop {
            match framer.next(&buf) {
                Ok(Some((n, reply))) => {
                    assert!(n > 0 && n <= buf.len(), "consumed {n} of {}", buf.len());
                    let class = match &reply {
                        Reply::Error { kind } => {
                            assert!(kind.end <= n, "error kind {kind:?} past the reply ({n})");
                            format!("Error({:?})", &buf[kind.clone()])
                        }
                        other => format!("{other:?}"),
                    };
                    out.push((n, class));
                    buf.drain(..n);
                }
                Ok(None) => break,
                Err(e) => return (out, Some(e.message)),
            }
        }
    }
    (out, None)
}

/// Why the reference stopped: the stream ended inside a reply, or it is malformed.
enum Stop {
    Incomplete,
    Error(&'static str),
}

type Step<T> = Result<T, Stop>;

#[derive(Clone, Copy, PartialEq)]
enum Line {
    Text,
    Int,
    Bool,
    Null,
}

/// The reference: every complete reply of `stream` (length and class, as [`frame`] writes
/// them), then the error that stopped it, if any. The protocol's rules and respload's
/// bounds, written as directly as they read.
fn reference(stream: &[u8]) -> (Vec<(usize, String)>, Option<&'static str>) {
    let mut out = Vec::new();
    let mut at = 0;
    while at < stream.len() {
        match value(stream, at, 0) {
            Ok((next, class)) => {
                out.push((next - at, class));
                at = next;
            }
            Err(Stop::Incomplete) => break,
            Err(Stop::Error(message)) => return (out, Some(message)),
        }
    }
    (out, None)
}

/// The value starting at `at`, inside `depth` open aggregates (attributes included): where
/// it ends and its class (meaningful at depth 0 only). Attributes before it are skipped.
fn value(b: &[u8], mut at: usize, depth: usize) -> Step<(usize, String)> {
    loop {
        let ty = *b.get(at).ok_or(Stop::Incomplete)?;
        let kind = match ty {
            b'+' | b'-' | b',' | b'(' => Line::Text,
            b':' | b'$' | b'=' | b'!' | b'*' | b'%' | b'~' | b'>' | b'|' => Line::Int,
            b'#' => Line::Bool,
            b'_' => Line::Null,
            _ => return Err(Stop::Error("unknown type byte")),
        };
        let (body, next) = line(b, at + 1, kind)?;
        let class = match ty {
            b'+' | b',' | b'(' => "Ok".to_string(),
            b'-' if depth == 0 => error_class(body),
            b'-' => "Ok".to_string(),
            b':' => {
                int(body)?;
                "Ok".to_string()
            }
            b'#' if body == b"t" || body == b"f" => "Ok".to_string(),
            b'#' => return Err(Stop::Error("invalid boolean")),
            b'_' => "Nil".to_string(),
            b'$' | b'=' | b'!' => {
                let n = int(body)?;
                if n == -1 && ty == b'$' {
                    return Ok((next, "Nil".to_string()));
                }
                if !(0..=512 * 1024 * 1024).contains(&n) {
                    return Err(Stop::Error("bulk length out of range"));
                }
                let end = next + n as usize;
                match b.get(end..end + 2) {
                    None => return Err(Stop::Incomplete),
                    Some(b"\r\n") => {}
                    Some(_) => return Err(Stop::Error("bulk data not followed by CRLF")),
                }
                let class = match ty {
                    b'!' if depth == 0 => error_class(&b[next..end]),
                    _ => "Value".to_string(),
                };
                return Ok((end + 2, class));
            }
            _ => {
                let n = int(body)?;
                if n == -1 && ty == b'*' {
                    return Ok((next, "Nil".to_string()));
                }
                if !(0..=1i64 << 32).contains(&n) {
                    return Err(Stop::Error("aggregate count out of range"));
                }
                let items = n as u64 * if ty == b'%' || ty == b'|' { 2 } else { 1 };
                if items > 0 && depth >= 64 {
                    return Err(Stop::Error("nesting too deep"));
                }
                let mut end = next;
                for _ in 0..items {
                    end = value(b, end, depth + 1)?.0;
                }
                if ty == b'|' {
                    // An attribute: the value after it is the reply.
                    at = end;
                    continue;
                }
                let class = match (ty, items) {
                    (b'>', _) => "Push",
                    (_, 0) => "Empty",
                    _ => "Value",
                };
                return Ok((end, class.to_string()));
            }
        };
        return Ok((next, class));
    }
}

/// The line after a type byte at `start - 1`: its body and where the next item starts.
/// Malformed bytes are errors as soon as they are seen, complete line or not.
fn line(b: &[u8], start: usize, kind: Line) -> Step<(&[u8], usize)> {
    let max = match kind {
        Line::Text => 1 << 20,
        Line::Int => 20,
        Line::Bool => 1,
        Line::Null => 0,
    };
    let mut i = start;
    loop {
        let c = *b.get(i).ok_or(Stop::Incomplete)?;
        match c {
            b'\r' => {
                return match b.get(i + 1) {
                    None => Err(Stop::Incomplete),
                    Some(b'\n') => Ok((&b[start..i], i + 2)),
                    Some(_) => Err(Stop::Error("expected LF after CR")),
                }
            }
            b'\n' => return Err(Stop::Error("LF without CR")),
            _ => {}
        }
        if i - start >= max {
            return Err(Stop::Error("line too long"));
        }
        if kind == Line::Int && !(c.is_ascii_digit() || (c == b'-' && i == start)) {
            return Err(Stop::Error("invalid integer"));
        }
        i += 1;
    }
}

/// A signed 64-bit decimal, as RESP writes integers and lengths.
fn int(body: &[u8]) -> Step<i64> {
    std::str::from_utf8(body)
        .ok()
        .filter(|t| !t.starts_with('+'))
        .and_then(|t| t.parse::<i64>().ok())
        .ok_or(Stop::Error("invalid integer"))
}

/// A top-level error's class: its message's first word (all of it without a space).
fn error_class(message: &[u8]) -> String {
    let word = message.split(|&c| c == b' ').next().unwrap_or_default();
    format!("Error({word:?})")
}

fuzz_target!(|data: &[u8]| {
    let Some((&seed, stream)) = data.split_first() else {
        return;
    };
    let whole = frame(stream, &[]);
    assert_eq!(whole, reference(stream), "against the reference parser");
    // Split every `step` bytes, and byte by byte.
    let step = usize::from(seed % 16) + 1;
    let cuts: Vec<usize> = (step..stream.len()).step_by(step).collect();
    assert_eq!(frame(stream, &cuts), whole, "split every {step} bytes");
    // Irregular chunks of 1 to 64 bytes, drawn from the seed.
    let (mut x, mut at, mut irregular) = (u64::from(seed) | 1, 0, Vec::new());
    while at < stream.len() {
        x = x
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        at += (x >> 58) as usize + 1;
        irregular.push(at.min(stream.len()));
    }
    assert_eq!(frame(stream, &irregular), whole, "split at {irregular:?}");
    if stream.len() <= 4096 {
        let bytes: Vec<usize> = (1..stream.len()).collect();
        assert_eq!(frame(stream, &bytes), whole, "split byte by byte");
    }
});
