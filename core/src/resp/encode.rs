//! Binary-safe RESP command encoder that appends to a reused `Vec<u8>`.

/// Appends an array header `*<n>\r\n`.
pub fn write_array_header(buf: &mut Vec<u8>, n: usize) {
    write_line(buf, b'*', itoa::Buffer::new().format(n).as_bytes());
}

/// Appends a bulk string `$<len>\r\n<data>\r\n`; `data` may contain any bytes.
pub fn write_bulk(buf: &mut Vec<u8>, data: &[u8]) {
    write_bulk_header(buf, data.len());
    buf.extend_from_slice(data);
    buf.extend_from_slice(b"\r\n");
}

/// Appends a bulk whose content is `prefix` followed by `n` in decimal,
/// left-padded with `'0'` to at least `pad` digits, written straight into
/// `buf` (no temporary `String`).
///
/// e.g. prefix `b"key:"`, n `12345`, pad `12` -> `"$16\r\nkey:000000012345\r\n"`.
pub fn write_bulk_prefixed_u64(buf: &mut Vec<u8>, prefix: &[u8], n: u64, pad: usize) {
    let mut digits = itoa::Buffer::new();
    let digits = digits.format(n).as_bytes();
    let zeros = pad.saturating_sub(digits.len());
    write_bulk_header(buf, prefix.len() + zeros + digits.len());
    buf.extend_from_slice(prefix);
    buf.resize(buf.len() + zeros, b'0');
    buf.extend_from_slice(digits);
    buf.extend_from_slice(b"\r\n");
}

/// Appends a bulk containing the decimal representation of `n`.
pub fn write_bulk_i64(buf: &mut Vec<u8>, n: i64) {
    write_bulk(buf, itoa::Buffer::new().format(n).as_bytes());
}

/// Appends a full command: an array header followed by one bulk per argument.
pub fn encode_command(buf: &mut Vec<u8>, args: &[&[u8]]) {
    write_array_header(buf, args.len());
    for arg in args {
        write_bulk(buf, arg);
    }
}

/// Number of decimal digits of `n` (1 for 0).
pub fn decimal_len(n: u64) -> usize {
    n.checked_ilog10().map_or(1, |l| l as usize + 1)
}

/// Appends a bulk string header `$<len>\r\n`; the caller writes `len` bytes and `\r\n`.
pub fn write_bulk_header(buf: &mut Vec<u8>, len: usize) {
    write_line(buf, b'$', itoa::Buffer::new().format(len).as_bytes());
}

fn write_line(buf: &mut Vec<u8>, ty: u8, body: &[u8]) {
    buf.push(ty);
    buf.extend_from_slice(body);
    buf.extend_from_slice(b"\r\n");
}

#[cfg(test)]
mod tests {
    use super::*;

    fn enc(f: impl FnOnce(&mut Vec<u8>)) -> Vec<u8> {
        let mut buf = b"pre".to_vec();
        f(&mut buf);
        // Appending must never touch what the buffer already held.
        assert_eq!(&buf[..3], b"pre");
        buf.split_off(3)
    }

    #[test]
    fn command_empty_and_basic() {
        assert_eq!(enc(|b| encode_command(b, &[])), b"*0\r\n");
        assert_eq!(
            enc(|b| encode_command(b, &[b"SET", b"k", b""])),
            b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$0\r\n\r\n"
        );
        assert_eq!(enc(|b| write_array_header(b, 12)), b"*12\r\n");
    }

    #[test]
    fn bulk_is_binary_safe() {
        assert_eq!(enc(|b| write_bulk(b, b"a\r\n\0b")), b"$5\r\na\r\n\0b\r\n");
    }

    #[test]
    fn prefixed_padding() {
        assert_eq!(
            enc(|b| write_bulk_prefixed_u64(b, b"key:", 12345, 12)),
            b"$16\r\nkey:000000012345\r\n"
        );
        // Pad shorter than the number: no truncation, no padding.
        assert_eq!(
            enc(|b| write_bulk_prefixed_u64(b, b"k", 12345, 3)),
            b"$6\r\nk12345\r\n"
        );
        assert_eq!(
            enc(|b| write_bulk_prefixed_u64(b, b"", 0, 0)),
            b"$1\r\n0\r\n"
        );
        assert_eq!(
            enc(|b| write_bulk_prefixed_u64(b, b"k:", 0, 4)),
            b"$6\r\nk:0000\r\n"
        );
        assert_eq!(
            enc(|b| write_bulk_prefixed_u64(b, b"\r\n", u64::MAX, 0)),
            b"$22\r\n\r\n18446744073709551615\r\n"
        );
    }

    #[test]
    fn bulk_i64() {
        assert_eq!(enc(|b| write_bulk_i64(b, 0)), b"$1\r\n0\r\n");
        assert_eq!(enc(|b| write_bulk_i64(b, -42)), b"$3\r\n-42\r\n");
        assert_eq!(
            enc(|b| write_bulk_i64(b, i64::MIN)),
            b"$20\r\n-9223372036854775808\r\n"
        );
    }

    #[test]
    fn decimal_lengths() {
        assert_eq!(decimal_len(0), 1);
        assert_eq!(decimal_len(9), 1);
        assert_eq!(decimal_len(10), 2);
        assert_eq!(decimal_len(999_999), 6);
        assert_eq!(decimal_len(1_000_000), 7);
        assert_eq!(decimal_len(u64::MAX), 20);
    }
}
