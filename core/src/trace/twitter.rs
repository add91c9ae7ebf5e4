//! The Twitter cache traces (github.com/twitter/cache-trace; Yang, Yue and Vinayak, "A large
//! scale analysis of hundreds of in-memory cache clusters at Twitter", OSDI 2020): CSV lines
//!
//! ```text
//! timestamp,anonymized key,key size,value size,client id,operation,TTL
//! 0,nz:u:eeW511W3dcH3de3d15ec,24,1052,7,set,3600
//! ```
//!
//! with the time in whole seconds, the operation one of get, gets, set, add, replace, cas,
//! append, prepend, delete, incr, decr, and the TTL 0 for anything but a write. The traces
//! give value sizes, not values, so a write's value is a [`TraceArg::Size`] placeholder.
//!
//! Mapped to RESP: get, gets: `GET key`; set, cas: `SET key <size>` (`EX ttl` when the TTL is
//! positive); add: `SET key <size> NX`; replace: `SET key <size> XX`; append, prepend:
//! `APPEND key <size>`; delete: `DEL key`; incr: `INCRBY key 1`; decr: `DECRBY key 1`.
//!
//! [`TraceArg::Size`]: super::record::TraceArg::Size

use super::record::Record;

/// Read one trace line into `rec` (cleared first); `Err` names the bad field and value.
///
/// The key is taken as given (the key-size field, the original key's size, is checked to be
/// a number but not used); the client id becomes the record's client, the db is 0.
pub fn parse_line(line: &[u8], rec: &mut Record) -> Result<(), String> {
    rec.clear();
    let mut line = line;
    while let [rest @ .., b'\n' | b'\r'] = line {
        line = rest;
    }
    // The README does not promise that an anonymized key holds no comma (it keeps the
    // namespaces and their delimiters, whatever they are), and every other field is a
    // number or a word: so the timestamp is read from the left, the five last fields from
    // the right, and the key is whatever lies between, commas included.
    let Some(comma) = line.iter().position(|&b| b == b',') else {
        return Err(fields_error(1));
    };
    let (ts, rest) = (&line[..comma], &line[comma + 1..]);
    let mut right = rest.rsplitn(6, |&b| b == b',');
    let (Some(ttl), Some(op), Some(client), Some(vsize), Some(ksize), Some(key)) = (
        right.next(),
        right.next(),
        right.next(),
        right.next(),
        right.next(),
        right.next(),
    ) else {
        return Err(fields_error(1 + rest.split(|&b| b == b',').count()));
    };

    let ts = number::<u64>("timestamp", ts)?;
    number::<u64>("key size", ksize)?;
    let size = number::<u64>("value size", vsize)?;
    // Negative TTLs are read (a TTL is a signed number in memcached) and mean none.
    let ttl = number::<i64>("TTL", ttl)?;
    rec.t_us = ts
        .checked_mul(1_000_000)
        .ok_or_else(|| format!("timestamp: `{ts}` seconds is too large"))?;
    rec.client.push_str(&String::from_utf8_lossy(client));

    let write = |rec: &mut Record, flag: Option<&[u8]>| {
        rec.push_bytes(b"SET");
        rec.push_bytes(key);
        rec.push_size(size);
        if let Some(flag) = flag {
            rec.push_bytes(flag);
        }
        if ttl > 0 {
            rec.push_bytes(b"EX");
            rec.push_bytes(itoa::Buffer::new().format(ttl).as_bytes());
        }
    };
    let op_is = |name: &str| op.eq_ignore_ascii_case(name.as_bytes());
    if op_is("get") || op_is("gets") {
        rec.push_bytes(b"GET");
        rec.push_bytes(key);
    } else if op_is("set") || op_is("cas") {
        write(rec, None);
    } else if op_is("add") {
        write(rec, Some(b"NX"));
    } else if op_is("replace") {
        write(rec, Some(b"XX"));
    } else if op_is("append") || op_is("prepend") {
        rec.push_bytes(b"APPEND");
        rec.push_bytes(key);
        rec.push_size(size);
    } else if op_is("delete") {
        rec.push_bytes(b"DEL");
        rec.push_bytes(key);
    } else if op_is("incr") || op_is("decr") {
        rec.push_bytes(if op_is("incr") { b"INCRBY" } else { b"DECRBY" });
        rec.push_bytes(key);
        rec.push_bytes(b"1");
    } else {
        return Err(format!(
            "operation: `{}` is not one of get, gets, set, add, replace, cas, append, prepend, \
             delete, incr, decr",
            shown(op)
        ));
    }
    Ok(())
}

fn fields_error(found: usize) -> String {
    format!(
        "expected 7 comma-separated fields (timestamp,key,key size,value size,client id,\
         operation,TTL), found {found}"
    )
}

fn number<T: std::str::FromStr>(field: &str, v: &[u8]) -> Result<T, String> {
    std::str::from_utf8(v)
        .ok()
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| format!("{field}: `{}` is not a number", shown(v)))
}

/// A field's value for a message: lossy, and cut short, since a bad line can be anything.
fn shown(v: &[u8]) -> String {
    let cut = v.get(..64).unwrap_or(v);
    let mut s = String::from_utf8_lossy(cut).escape_debug().to_string();
    if cut.len() < v.len() {
        s.push('…');
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::TraceArg;

    fn parse(line: &str) -> Record {
        let mut r = Record::default();
        parse_line(line.as_bytes(), &mut r).unwrap_or_else(|e| panic!("{e}: {line}"));
        r
    }

    /// Arguments as text, a size as `<n>`.
    fn cmd(r: &Record) -> String {
        r.args()
            .map(|a| match a {
                TraceArg::Bytes(b) => String::from_utf8_lossy(b).into_owned(),
                TraceArg::Size(n) => format!("<{n}>"),
            })
            .collect::<Vec<_>>()
            .join(" ")
    }

    #[test]
    fn every_operation_maps() {
        let cases = [
            ("get", 0, "GET k:1"),
            ("gets", 0, "GET k:1"),
            ("set", 0, "SET k:1 <100>"),
            ("set", 60, "SET k:1 <100> EX 60"),
            ("cas", 60, "SET k:1 <100> EX 60"),
            ("add", 0, "SET k:1 <100> NX"),
            ("add", 5, "SET k:1 <100> NX EX 5"),
            ("replace", 0, "SET k:1 <100> XX"),
            ("replace", 7, "SET k:1 <100> XX EX 7"),
            ("append", 0, "APPEND k:1 <100>"),
            ("prepend", 0, "APPEND k:1 <100>"),
            ("delete", 0, "DEL k:1"),
            ("incr", 0, "INCRBY k:1 1"),
            ("decr", 0, "DECRBY k:1 1"),
            ("SET", -1, "SET k:1 <100>"),
        ];
        for (op, ttl, want) in cases {
            let r = parse(&format!("42,k:1,3,100,client7,{op},{ttl}\r\n"));
            assert_eq!(cmd(&r), want, "{op}");
            assert_eq!(
                (r.t_us, r.db, r.client.as_str()),
                (42_000_000, 0, "client7")
            );
        }
    }

    #[test]
    fn a_key_may_hold_commas() {
        let r = parse("1,a,b,,c,5,10,1,get,0");
        assert_eq!(cmd(&r), "GET a,b,,c");
        let r = parse("1,,0,10,1,get,0");
        assert_eq!(cmd(&r), "GET ");
    }

    #[test]
    fn malformed_lines_name_the_field() {
        let mut r = Record::default();
        let cases = [
            ("", "found 1"),
            ("1,k,3,100,1,get", "found 6"),
            ("x,k,3,100,1,get,0", "timestamp: `x`"),
            ("1,k,x,100,1,get,0", "key size: `x`"),
            ("1,k,3,-5,1,get,0", "value size: `-5`"),
            ("1,k,3,100,1,get,1.5", "TTL: `1.5`"),
            ("1,k,3,100,1,flush,0", "operation: `flush`"),
            ("99999999999999999,k,3,100,1,get,0", "too large"),
        ];
        for (line, want) in cases {
            let e = parse_line(line.as_bytes(), &mut r).expect_err(line);
            assert!(e.contains(want), "{line}: {e}");
        }
        let e = parse_line(b"\xff,k,3,100,1,get,0", &mut r).unwrap_err();
        assert!(e.starts_with("timestamp: "), "{e}");
    }
}
