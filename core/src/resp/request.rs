//! Reading back a request the encoder wrote: its arguments, without decoding the whole of it
//! (the cluster client routes by the key's slot; the failed-keys log names the key).

/// Argument `index` (0: the command name) of a RESP-encoded request, if it has one.
#[inline]
pub fn request_arg(req: &[u8], index: usize) -> Option<&[u8]> {
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
    let mut i = 0;
    if header(req, &mut i)? <= index {
        return None;
    }
    for _ in 0..index {
        let len = header(req, &mut i)?;
        i += len + 2;
    }
    let len = header(req, &mut i)?;
    req.get(i..i + len)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resp::encode::encode_command;

    #[test]
    fn each_argument_is_found_and_none_past_the_last() {
        let mut buf = Vec::new();
        encode_command(&mut buf, &[b"SET", b"foo", b"", b"a\r\nb"]);
        assert_eq!(request_arg(&buf, 0), Some(&b"SET"[..]));
        assert_eq!(request_arg(&buf, 1), Some(&b"foo"[..]));
        assert_eq!(request_arg(&buf, 2), Some(&b""[..]));
        assert_eq!(request_arg(&buf, 3), Some(&b"a\r\nb"[..]));
        assert_eq!(request_arg(&buf, 4), None);
        // Cut short: nothing past what the bytes hold.
        assert_eq!(request_arg(b"*2\r\n$3\r\nGET", 1), None);
        assert_eq!(request_arg(b"*2\r\n$3\r\nGE", 0), None);
    }
}
