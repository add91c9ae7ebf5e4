//! Which slot a request goes to: its key's, read from the RESP-encoded request itself.

use crate::resp::request::request_arg;
use crate::resp::slot::key_slot;

/// The slot of a RESP-encoded request's key, its argument `key_index` (slot 0 without one).
#[inline]
pub fn request_slot(req: &[u8], key_index: Option<usize>) -> u16 {
    key_index
        .and_then(|k| request_arg(req, k))
        .map_or(0, key_slot)
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
