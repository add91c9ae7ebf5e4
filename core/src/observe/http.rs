//! The little HTTP the endpoints speak (Prometheus's, the dashboard's): one request per
//! connection, GET only.

use crate::{Error, Result};
use std::io::Read;
use std::net::{TcpListener, TcpStream, ToSocketAddrs};
use std::time::Duration;

/// Listen on `address` (`HOST:PORT`; `field` names it in errors, `port` is an example),
/// non-blocking: an address that does not resolve or cannot be bound is an error.
pub(super) fn listen(address: &str, field: &str, port: u16) -> Result<TcpListener> {
    let resolved = address
        .to_socket_addrs()
        .ok()
        .and_then(|mut a| a.next())
        .ok_or_else(|| {
            Error::spec(
                field,
                format!(
                    "`{address}` is not an address to listen on: give HOST:PORT, e.g. \
                     127.0.0.1:{port}"
                ),
            )
        })?;
    TcpListener::bind(resolved)
        .and_then(|l| l.set_nonblocking(true).map(|()| l))
        .map_err(|e| Error::spec(field, format!("cannot listen on `{address}`: {e}")))
}

/// Read a request's head (at most 16 KB, 2 s) from `stream`, made blocking: the path of a
/// `GET`, or `None` for anything else.
pub(super) fn get_path(stream: &mut TcpStream) -> Option<String> {
    let _ = stream.set_nonblocking(false);
    let _ = stream.set_read_timeout(Some(Duration::from_secs(2)));
    let mut request = Vec::with_capacity(1024);
    let mut buf = [0u8; 1024];
    while !request.windows(4).any(|w| w == b"\r\n\r\n") && request.len() < 16 * 1024 {
        match stream.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => request.extend_from_slice(&buf[..n]),
        }
    }
    let line = String::from_utf8_lossy(&request);
    let path = line.split_whitespace().nth(1)?;
    line.starts_with("GET ").then(|| path.to_string())
}
