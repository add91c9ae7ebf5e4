//! A small request/reply client for the control path: handshake, INFO, CONFIG GET.
//! Not used for load: it allocates a value per reply.

use super::Stream;
use crate::plan::{ConnectOptions, TlsConnect};
use crate::resp::{encode::encode_command, Framer, Reply};
use crate::{Error, Result};
use std::io::ErrorKind;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// A decoded reply (control path only).
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// Simple string, number, double, boolean or big number, as text.
    Text(String),
    /// Bulk or verbatim string.
    Bulk(Vec<u8>),
    /// Error reply, the whole message.
    Error(String),
    /// Null.
    Nil,
    /// Array, set, push; a map flattened into key, value, key, value.
    List(Vec<Value>),
}

impl Value {
    /// The value as text, if it is a string of some kind.
    pub fn as_text(&self) -> Option<String> {
        match self {
            Value::Text(t) => Some(t.clone()),
            Value::Bulk(b) => Some(String::from_utf8_lossy(b).into_owned()),
            _ => None,
        }
    }
}

/// Decode one complete reply at the start of `buf` (already framed); returns it and its length.
/// Attributes (`|`) before it are skipped in a loop, not by recursion: the framer does not
/// count empty ones (`|0`) towards its depth limit, so a server could chain any number.
fn decode(buf: &[u8]) -> Option<(Value, usize)> {
    let mut pos = 0;
    while buf.get(pos) == Some(&b'|') {
        let line_end = pos + buf[pos..].windows(2).position(|w| w == b"\r\n")?;
        // As the framer reads it: an integer (so `-0` too), and no count below zero.
        let n: i64 = std::str::from_utf8(&buf[pos + 1..line_end])
            .ok()?
            .parse()
            .ok()?;
        let n = u64::try_from(n).ok()?;
        pos = line_end + 2;
        for _ in 0..2 * n {
            pos += decode(&buf[pos..])?.1;
        }
    }
    let (v, used) = decode_value(&buf[pos..])?;
    Some((v, pos + used))
}

/// [`decode`] for a reply that is not an attribute.
fn decode_value(buf: &[u8]) -> Option<(Value, usize)> {
    let line_end = buf.windows(2).position(|w| w == b"\r\n")?;
    let line = std::str::from_utf8(&buf[1..line_end]).ok()?;
    let after = line_end + 2;
    match buf[0] {
        b'+' | b':' | b',' | b'#' | b'(' => Some((Value::Text(line.into()), after)),
        b'-' => Some((Value::Error(line.into()), after)),
        b'_' => Some((Value::Nil, after)),
        b'$' | b'=' | b'!' => {
            let n: i64 = line.parse().ok()?;
            if n < 0 {
                return Some((Value::Nil, after));
            }
            let data = buf.get(after..after + n as usize)?.to_vec();
            let end = after + n as usize + 2;
            let v = if buf[0] == b'!' {
                Value::Error(String::from_utf8_lossy(&data).into_owned())
            } else if buf[0] == b'=' {
                Value::Bulk(data.get(4..).unwrap_or_default().to_vec())
            } else {
                Value::Bulk(data)
            };
            Some((v, end))
        }
        b'*' | b'~' | b'>' | b'%' => {
            let n: i64 = line.parse().ok()?;
            if n < 0 {
                return Some((Value::Nil, after));
            }
            let count = if buf[0] == b'%' { 2 * n } else { n };
            let mut items = Vec::with_capacity(count.min(1024) as usize);
            let mut pos = after;
            for _ in 0..count {
                let (v, used) = decode(&buf[pos..])?;
                items.push(v);
                pos += used;
            }
            Some((Value::List(items), pos))
        }
        _ => None,
    }
}

/// The first read of a reply takes this much; later ones as much as has arrived.
const READ_CHUNK_MIN: usize = 512;
/// The largest read (a long INFO reply).
const READ_CHUNK_MAX: usize = 16 * 1024;
/// The longest reply to a control command (INFO, CLUSTER SLOTS of a large cluster are well
/// under a megabyte): a server that sends more without ending it fails the call.
const MAX_CONTROL_REPLY: usize = 64 << 20;

/// A connection for control commands.
pub struct Client {
    stream: Stream,
    framer: Framer,
    buf: Vec<u8>,
    addr: String,
    tls: Option<TlsConnect>,
}

impl Client {
    /// Connect and run the handshake (AUTH / HELLO, SELECT, CLIENT SETNAME).
    ///
    /// With TLS the handshake always includes a round trip (a PING when nothing else is
    /// sent): with TLS 1.3 a server that refuses the client certificate says so only after
    /// the TLS handshake, and this must fail here, as [`Error::Tls`], before any traffic.
    pub async fn connect(c: &ConnectOptions) -> Result<Client> {
        let stream = Stream::connect_with(c).await?;
        let mut client = Client {
            stream,
            framer: Framer::new(),
            buf: Vec::new(),
            addr: c.endpoint.to_string(),
            tls: c.tls.clone(),
        };
        let mut handshake = super::handshake_commands(c);
        if handshake.is_empty() && c.tls.is_some() {
            handshake.push(vec![b"PING".to_vec()]);
        }
        let refs: Vec<Vec<&[u8]>> = handshake
            .iter()
            .map(|cmd| cmd.iter().map(|a| a.as_slice()).collect())
            .collect();
        let replies = client
            .pipeline(&refs, c.connect_timeout)
            .await
            .map_err(|e| match e {
                // A TLS port closes on the plain-text set-up: say what may be wrong.
                Error::Connect {
                    address: addr,
                    source,
                } if c.tls.is_none()
                    && matches!(
                        source.kind(),
                        ErrorKind::ConnectionReset
                            | ErrorKind::UnexpectedEof
                            | ErrorKind::BrokenPipe
                    ) =>
                {
                    Error::Connect {
                        address: addr,
                        source: std::io::Error::new(
                            source.kind(),
                            format!(
                                "{source}, during the connection set-up: if this port expects \
                                 TLS, use a rediss:// URL or tls.enabled = true (--tls)"
                            ),
                        ),
                    }
                }
                other => other,
            })?;
        for (cmd, reply) in handshake.iter().zip(replies) {
            if let Value::Error(msg) = reply {
                let what = String::from_utf8_lossy(&cmd[0]).to_string();
                // Which field asked for the command (an ACL user may not be allowed it);
                // not when the server refuses every command, whichever came first.
                let field = match cmd[0].as_slice() {
                    _ if msg.starts_with("NOAUTH") => {
                        " (the server requires a password: target.password, --password/-a, or \
                         the URL's user info)"
                    }
                    _ if msg.contains("max number of clients") => {
                        " (the server's maxclients is reached: fewer connections, or raise it)"
                    }
                    b"SELECT" => " (target.db, or the URL's /N: database 0 needs no SELECT)",
                    b"CLIENT" if cmd[1] == b"TRACKING" => {
                        " (target.tracking: false sends no CLIENT TRACKING)"
                    }
                    b"CLIENT" => " (target.client_name: \"\" sends no CLIENT SETNAME)",
                    b"READONLY" => " (target.read_from: \"primary\" sends no READONLY)",
                    _ => "",
                };
                return Err(Error::Auth {
                    address: client.addr.clone(),
                    reason: format!("{what} failed: {msg}{field}"),
                });
            }
        }
        Ok(client)
    }

    /// The wrapped stream, for a load connection after its handshake.
    pub fn into_stream(self) -> Stream {
        self.stream
    }

    /// Send one command, read its reply.
    pub async fn call(&mut self, args: &[&[u8]], timeout: std::time::Duration) -> Result<Value> {
        let mut replies = self.pipeline(&[args.to_vec()], timeout).await?;
        Ok(replies.pop().unwrap_or(Value::Nil))
    }

    /// Send commands in one write, read their replies in order (push messages skipped).
    pub async fn pipeline(
        &mut self,
        cmds: &[Vec<&[u8]>],
        timeout: std::time::Duration,
    ) -> Result<Vec<Value>> {
        let mut out = Vec::new();
        for cmd in cmds {
            encode_command(&mut out, cmd);
        }
        let addr = self.addr.clone();
        let tls = self.tls.clone();
        let io_err = |e: std::io::Error| {
            let tls_failure = tls
                .as_ref()
                .and_then(|t| super::tls::tls_error(&addr, t, &e, false));
            tls_failure.unwrap_or_else(|| Error::Connect {
                address: addr.clone(),
                source: e,
            })
        };
        let work = async {
            self.stream.write_all(&out).await.map_err(io_err)?;
            let mut replies = Vec::with_capacity(cmds.len());
            while replies.len() < cmds.len() {
                loop {
                    let framed = self.framer.next(&self.buf).map_err(|e| Error::Protocol {
                        address: self.addr.clone(),
                        reason: e.to_string(),
                    })?;
                    let Some((len, kind)) = framed else { break };
                    let value = decode(&self.buf[..len]).ok_or_else(|| Error::Protocol {
                        address: self.addr.clone(),
                        reason: "undecodable reply".into(),
                    })?;
                    self.buf.drain(..len);
                    if kind != Reply::Push {
                        replies.push(value.0);
                    }
                    if replies.len() == cmds.len() {
                        break;
                    }
                }
                if replies.len() == cmds.len() {
                    break;
                }
                // Read into the heap buffer (an array here would sit in every connecting task's
                // future), a little at a time: handshake replies are a few bytes, and 10,000
                // connections open at once (docs/performance.md, W5). Long replies (INFO)
                // read in chunks that double with what has arrived.
                let start = self.buf.len();
                if start >= MAX_CONTROL_REPLY {
                    return Err(Error::Protocol {
                        address: self.addr.clone(),
                        reason: format!(
                            "a reply longer than {} MiB, not ended",
                            MAX_CONTROL_REPLY >> 20
                        ),
                    });
                }
                self.buf
                    .resize(start + start.clamp(READ_CHUNK_MIN, READ_CHUNK_MAX), 0);
                let n = self.stream.read(&mut self.buf[start..]).await;
                self.buf.truncate(start + *n.as_ref().unwrap_or(&0));
                let n = n.map_err(io_err)?;
                if n == 0 {
                    return Err(io_err(std::io::Error::new(
                        std::io::ErrorKind::UnexpectedEof,
                        "the server closed the connection",
                    )));
                }
            }
            Ok(replies)
        };
        match tokio::time::timeout(timeout, work).await {
            Ok(r) => r,
            Err(_) => Err(Error::Connect {
                address: self.addr.clone(),
                source: std::io::Error::new(
                    std::io::ErrorKind::TimedOut,
                    format!("no reply within {timeout:?}"),
                ),
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_nested_and_resp3() {
        let (v, n) = decode(b"*2\r\n$3\r\nfoo\r\n%1\r\n+a\r\n:1\r\nrest").unwrap();
        assert_eq!(n, 25);
        assert_eq!(
            v,
            Value::List(vec![
                Value::Bulk(b"foo".to_vec()),
                Value::List(vec![Value::Text("a".into()), Value::Text("1".into())])
            ])
        );
        assert_eq!(
            decode(b"-ERR bad\r\n").unwrap().0,
            Value::Error("ERR bad".into())
        );
        assert_eq!(
            decode(b"=7\r\ntxt:abc\r\n").unwrap().0,
            Value::Bulk(b"abc".to_vec())
        );
    }

    #[test]
    fn attributes_are_skipped_however_many_precede_the_reply() {
        let (v, n) = decode(b"|1\r\n+key\r\n*1\r\n|0\r\n:7\r\n:5\r\nrest").unwrap();
        assert_eq!((v, n), (Value::Text("5".into()), 26));
        let (v, n) = decode(b"*2\r\n|1\r\n+a\r\n+b\r\n:1\r\n:2\r\n").unwrap();
        assert_eq!(
            (v, n),
            (
                Value::List(vec![Value::Text("1".into()), Value::Text("2".into())]),
                24
            )
        );
        // A chain of 300,000 empty attributes is one reply to the framer (they do not nest),
        // and decoding it took a stack frame each: 1.2 MB overflowed the stack.
        let mut reply = b"|0\r\n".repeat(300_000);
        reply.extend_from_slice(b"+OK\r\n");
        let framed = crate::resp::Framer::new().next(&reply).unwrap().unwrap();
        assert_eq!(framed.0, reply.len());
        assert_eq!(
            decode(&reply).unwrap(),
            (Value::Text("OK".into()), reply.len())
        );
    }

    #[test]
    fn what_the_framer_lets_through_decodes() {
        // `-0` is an integer to the framer; decoding refused it as an attribute's count.
        for reply in [&b"|-0\r\n+OK\r\n"[..], b"*1\r\n|-0\r\n+OK\r\n"] {
            let framed = crate::resp::Framer::new().next(reply).unwrap().unwrap();
            assert_eq!(framed.0, reply.len());
            assert_eq!(decode(reply).unwrap().1, reply.len(), "{reply:?}");
        }
    }
}
