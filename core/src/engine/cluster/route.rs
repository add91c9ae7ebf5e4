//! Which slot a request goes to: its key's, read from the RESP-encoded request itself.

use crate::net::cluster::key_slot;

/// The slot of a RESP-encoded request's key, its argument `key_index` (slot 0 without one).
#[inline]
pub fn request_slot(req: &[u8], key_index: Option<usize>) -> u16 {
    fn header(req: &[u8], i: &mut usize) -> Option<usize> {
        let mut n = 0usize;
        let mut j = *i + 1;
        while let Some(&b) = req.get(j) {
            if b == b'\r' {
                *i = j + 2;
                return Some(n);
            }
            n = n * 10 + b.wrapping_sub(b'0') as usize;
            j += 1;
        }
        None
    }
    let Some(k) = key_index else {
        return 0;
    };
    let mut i = 0;
    let Some(count) = header(req, &mut i) else {
        return 0;
    };
    if count <= k {
        return 0;
    }
    for _ in 0..k {
        let Some(len) = header(req, &mut i) else {
            return 0;
        };
        i += len + 2;
    }
    let Some(key_len) = header(req, &mut i) else {
        return 0;
    };
    match req.get(i..i + key_len) {
        Some(key) => key_slot(key),
        None => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resp::encode::encode_command;

    #[test]
    fn request_slot_reads_the_key_argument() {
        let mut buf = Vec::new();
        encode_command(&mut buf, &[b"SET", b"foo", b"bar"]);
        assert_eq!(request_slot(&buf, Some(1)), 12182);
        buf.clear();
        encode_command(&mut buf, &[b"HSET", b"{user1000}.x", b"f", b"v"]);
        assert_eq!(request_slot(&buf, Some(1)), key_slot(b"user1000"));
        buf.clear();
        encode_command(&mut buf, &[b"EVAL", b"return 1", b"1", b"foo"]);
        assert_eq!(request_slot(&buf, Some(3)), 12182);
        assert_eq!(request_slot(&buf, Some(4)), 0, "past the last argument");
        buf.clear();
        encode_command(&mut buf, &[b"PING"]);
        assert_eq!(request_slot(&buf, None), 0);
        assert_eq!(request_slot(&buf, Some(1)), 0);
        assert_eq!(request_slot(b"*2\r\n$3\r\nGET", Some(1)), 0);
    }
}
