//! Byte streams to a server: TCP, Unix socket, or TLS over TCP (rustls).

use super::tls_stream::TlsStream;
use crate::plan::{ConnectOptions, Endpoint};
use crate::spec::Family;
use crate::Error;
use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
#[cfg(unix)]
use tokio::net::UnixStream;

/// A connected stream. An enum rather than a trait object: one predictable branch per
/// read or write, no allocation.
#[derive(Debug)]
pub enum Stream {
    /// TCP, with TCP_NODELAY.
    Tcp(TcpStream),
    /// Unix domain socket (not on Windows, where connecting to one fails).
    #[cfg(unix)]
    Unix(UnixStream),
    /// TLS over TCP (with TCP_NODELAY; records decrypted in place in the stream's own read
    /// buffer); boxed, as its state would make every stream large.
    Tls(Box<TlsStream>),
}

impl Stream {
    /// Connect as `c` says: to its endpoint, with the TLS handshake when `c.tls` is set, all
    /// within `c.connect_timeout`. Failing to reach the server is [`Error::Connect`]; a failed
    /// TLS handshake is [`Error::Tls`], saying what to change.
    pub async fn connect_with(c: &ConnectOptions) -> crate::Result<Stream> {
        let addr = || c.endpoint.to_string();
        let started = tokio::time::Instant::now();
        let stream = Self::connect_family(&c.endpoint, c.family, c.connect_timeout)
            .await
            .map_err(|source| Error::Connect {
                address: addr(),
                source,
            })?;
        let (tls, tcp) = match (&c.tls, stream) {
            (Some(tls), Stream::Tcp(tcp)) => (tls, tcp),
            (_, stream) => return Ok(stream),
        };
        let left = c.connect_timeout.saturating_sub(started.elapsed());
        // Boxed: the handshake's state (rustls's connection) would sit in every connect
        // future, TLS or not, and thousands of connections open at once.
        let handshake = Box::pin(tokio::time::timeout(
            left,
            TlsStream::connect(tcp, Arc::clone(&tls.config), tls.server_name.clone()),
        ));
        match handshake.await {
            Ok(Ok(s)) => Ok(Stream::Tls(Box::new(s))),
            Ok(Err(e)) => Err(
                super::tls::tls_error(&addr(), tls, &e, true).unwrap_or_else(|| Error::Connect {
                    address: addr(),
                    source: e,
                }),
            ),
            Err(_) => Err(Error::Tls {
                address: addr(),
                reason: format!(
                    "no TLS handshake within {:?}: is this the server's TLS port? A plain-text \
                     port (redis://, no TLS) does not answer a TLS hello",
                    c.connect_timeout
                ),
            }),
        }
    }

    /// Whether this is a TLS stream.
    pub fn is_tls(&self) -> bool {
        matches!(self, Stream::Tls(_))
    }

    /// Connect to `endpoint` (host names resolved), failing after `timeout`.
    pub async fn connect(endpoint: &Endpoint, timeout: std::time::Duration) -> io::Result<Stream> {
        Self::connect_family(endpoint, Family::Any, timeout).await
    }

    /// Connect to `endpoint`, a host name resolved to addresses of `family` only (each tried
    /// in the resolver's order, as for any family), failing after `timeout`.
    pub async fn connect_family(
        endpoint: &Endpoint,
        family: Family,
        timeout: std::time::Duration,
    ) -> io::Result<Stream> {
        let fut = async {
            match endpoint {
                Endpoint::Tcp { host, port } => {
                    let s = match family {
                        Family::Any => TcpStream::connect((host.as_str(), *port)).await?,
                        _ => connect_only(host, *port, family).await?,
                    };
                    s.set_nodelay(true)?;
                    Ok(Stream::Tcp(s))
                }
                #[cfg(unix)]
                Endpoint::Unix(path) => Ok(Stream::Unix(UnixStream::connect(path).await?)),
                #[cfg(not(unix))]
                Endpoint::Unix(path) => Err(io::Error::new(
                    io::ErrorKind::Unsupported,
                    format!("{path}: Unix sockets are not supported on this platform"),
                )),
            }
        };
        match tokio::time::timeout(timeout, fut).await {
            Ok(r) => r,
            Err(_) => Err(io::Error::new(
                io::ErrorKind::TimedOut,
                format!("no connection within {timeout:?}"),
            )),
        }
    }

    /// Poll a read into `buf`.
    #[inline]
    pub fn poll_read_buf(
        &mut self,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        match self {
            Stream::Tcp(s) => Pin::new(s).poll_read(cx, buf),
            #[cfg(unix)]
            Stream::Unix(s) => Pin::new(s).poll_read(cx, buf),
            // Sends any records a write left unsent first.
            Stream::Tls(s) => s.poll_read(cx, buf),
        }
    }

    /// Poll a write of `buf`.
    #[inline]
    pub fn poll_write_buf(&mut self, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        match self {
            Stream::Tcp(s) => Pin::new(s).poll_write(cx, buf),
            #[cfg(unix)]
            Stream::Unix(s) => Pin::new(s).poll_write(cx, buf),
            Stream::Tls(s) => s.poll_write(cx, buf),
        }
    }
}

impl AsyncRead for Stream {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        self.get_mut().poll_read_buf(cx, buf)
    }
}

impl AsyncWrite for Stream {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        self.get_mut().poll_write_buf(cx, buf)
    }
    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Stream::Tls(s) => s.poll_flush_tx(cx),
            _ => Poll::Ready(Ok(())),
        }
    }
    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Stream::Tcp(s) => Pin::new(s).poll_shutdown(cx),
            #[cfg(unix)]
            Stream::Unix(s) => Pin::new(s).poll_shutdown(cx),
            Stream::Tls(s) => s.poll_shutdown(cx),
        }
    }
}

/// A TCP connection to the first address of `host` in `family` that accepts one.
async fn connect_only(host: &str, port: u16, family: Family) -> io::Result<TcpStream> {
    let wanted = |a: &std::net::SocketAddr| match family {
        Family::Ipv4 => a.is_ipv4(),
        Family::Ipv6 => a.is_ipv6(),
        Family::Any => true,
    };
    let mut last = None;
    for addr in tokio::net::lookup_host((host, port)).await?.filter(wanted) {
        match TcpStream::connect(addr).await {
            Ok(s) => return Ok(s),
            Err(e) => last = Some(e),
        }
    }
    Err(last.unwrap_or_else(|| {
        let (name, flag) = match family {
            Family::Ipv6 => ("IPv6", "ipv6"),
            _ => ("IPv4", "ipv4"),
        };
        io::Error::new(
            io::ErrorKind::NotFound,
            format!("`{host}` has no {name} address (target.family = \"{flag}\")"),
        )
    }))
}
