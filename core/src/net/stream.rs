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
    /// TCP or Unix socket through the worker's io_uring (`load.io = "uring"`, Linux).
    #[cfg(target_os = "linux")]
    Uring(super::uring::UringStream),
}

/// A TCP connection whose socket is Multipath TCP (`IPPROTO_MPTCP`): the kernel falls back
/// to plain TCP with a server that does not speak it. Each address of `host` is tried in turn.
#[cfg(target_os = "linux")]
async fn connect_mptcp(host: &str, port: u16, family: Family) -> io::Result<TcpStream> {
    use std::os::fd::FromRawFd;
    let mut last = None;
    for addr in tokio::net::lookup_host((host, port))
        .await?
        .filter(|a| family.admits(a))
    {
        let domain = if addr.is_ipv4() {
            libc::AF_INET
        } else {
            libc::AF_INET6
        };
        // SAFETY: socket(2) with constant arguments; the descriptor it returns is owned by
        // the TcpStream made from it right after, which closes it.
        let fd = unsafe {
            libc::socket(
                domain,
                libc::SOCK_STREAM | libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC,
                libc::IPPROTO_MPTCP,
            )
        };
        if fd < 0 {
            let e = io::Error::last_os_error();
            return Err(io::Error::new(
                e.kind(),
                format!("cannot open a Multipath TCP socket (is net.mptcp.enabled 1?): {e}"),
            ));
        }
        // SAFETY: `fd` is a new, open stream socket owned by nothing else.
        let socket =
            tokio::net::TcpSocket::from_std_stream(unsafe { std::net::TcpStream::from_raw_fd(fd) });
        match socket.connect(addr).await {
            Ok(s) => return Ok(s),
            Err(e) => last = Some(e),
        }
    }
    Err(last
        .unwrap_or_else(|| io::Error::new(io::ErrorKind::NotFound, format!("{host}: no address"))))
}

/// Multipath TCP is Linux's (the spec refuses `mptcp` elsewhere before connecting).
#[cfg(not(target_os = "linux"))]
async fn connect_mptcp(host: &str, _port: u16, _family: Family) -> io::Result<TcpStream> {
    Err(io::Error::new(
        io::ErrorKind::Unsupported,
        format!("{host}: Multipath TCP is not available on this platform"),
    ))
}

impl Stream {
    /// Connect as `c` says: to its endpoint, with the TLS handshake when `c.tls` is set, all
    /// within `c.connect_timeout`. Failing to reach the server is [`Error::Connect`]; a failed
    /// TLS handshake is [`Error::Tls`], saying what to change.
    pub async fn connect_with(c: &ConnectOptions) -> crate::Result<Stream> {
        let addr = || c.endpoint.to_string();
        let started = tokio::time::Instant::now();
        let stream = Self::connect(&c.endpoint, c.family, c.connect_timeout, c.mptcp)
            .await
            .map_err(|source| Error::Connect {
                address: addr(),
                source,
            })?;
        let (tls, tcp) = match (&c.tls, stream) {
            (Some(tls), Stream::Tcp(tcp)) => (tls, tcp),
            (_, stream) => {
                return stream.onto_ring().map_err(|source| Error::Connect {
                    address: addr(),
                    source,
                })
            }
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

    /// A plain TCP or Unix stream moved onto this worker thread's io_uring when it has one
    /// (`load.io = "uring"`); as it is otherwise.
    #[cfg(target_os = "linux")]
    fn onto_ring(self) -> io::Result<Stream> {
        use super::uring::adopt;
        // Back to tokio's socket when the thread has no ring (nothing changed on it).
        match self {
            Stream::Tcp(s) => Ok(match adopt(s.into_std()?)? {
                Ok(u) => Stream::Uring(u),
                Err(fd) => Stream::Tcp(TcpStream::from_std(std::net::TcpStream::from(fd))?),
            }),
            Stream::Unix(s) => Ok(match adopt(s.into_std()?)? {
                Ok(u) => Stream::Uring(u),
                Err(fd) => Stream::Unix(UnixStream::from_std(
                    std::os::unix::net::UnixStream::from(fd),
                )?),
            }),
            other => Ok(other),
        }
    }

    /// Without io_uring, streams stay as they are.
    #[cfg(not(target_os = "linux"))]
    fn onto_ring(self) -> io::Result<Stream> {
        Ok(self)
    }

    /// When the read that returned the last bytes completed, when the transport knows it
    /// better than a clock reading after the read (io_uring: when its completion was reaped).
    #[inline]
    pub fn read_at(&self) -> Option<std::time::Instant> {
        match self {
            #[cfg(target_os = "linux")]
            Stream::Uring(s) => Some(s.read_at()),
            _ => None,
        }
    }

    /// Whether this is a TLS stream.
    pub fn is_tls(&self) -> bool {
        matches!(self, Stream::Tls(_))
    }

    /// Connect to `endpoint`, a host name resolved to addresses of `family` only (each tried
    /// in the resolver's order), over Multipath TCP when `mptcp` (Linux), failing after
    /// `timeout`.
    pub async fn connect(
        endpoint: &Endpoint,
        family: Family,
        timeout: std::time::Duration,
        mptcp: bool,
    ) -> io::Result<Stream> {
        let fut = async {
            match endpoint {
                Endpoint::Tcp { host, port } => {
                    let s = match (mptcp, family) {
                        (true, _) => connect_mptcp(host, *port, family).await?,
                        (false, Family::Any) => TcpStream::connect((host.as_str(), *port)).await?,
                        (false, _) => connect_only(host, *port, family).await?,
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
            #[cfg(target_os = "linux")]
            Stream::Uring(s) => s.poll_read(cx, buf),
        }
    }

    /// Poll a read into `buf[end..]`: `Ready(Ok(n))` with the bytes at `buf[end..end + n]` (0:
    /// the server closed the connection). io_uring may hand its receive buffer over instead
    /// of copying from it (when `end` is 0): `buf` is then another `Vec`, of another length,
    /// holding the bytes at `buf[..n]`; an empty `buf` is never swapped.
    #[inline]
    // A `Vec`, not a slice: io_uring (Linux) swaps it for its own buffer; elsewhere the
    // body only reads into it.
    #[cfg_attr(not(target_os = "linux"), allow(clippy::ptr_arg))]
    pub fn poll_read_vec(
        &mut self,
        cx: &mut Context<'_>,
        buf: &mut Vec<u8>,
        end: usize,
    ) -> Poll<io::Result<usize>> {
        #[cfg(target_os = "linux")]
        if let Stream::Uring(s) = self {
            return s.poll_read_vec(cx, buf, end);
        }
        let mut rb = ReadBuf::new(&mut buf[end..]);
        match self.poll_read_buf(cx, &mut rb) {
            Poll::Ready(Ok(())) => Poll::Ready(Ok(rb.filled().len())),
            Poll::Ready(Err(e)) => Poll::Ready(Err(e)),
            Poll::Pending => Poll::Pending,
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
            #[cfg(target_os = "linux")]
            Stream::Uring(s) => s.poll_write(cx, buf),
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
            #[cfg(target_os = "linux")]
            Stream::Uring(s) => s.poll_flush(cx),
            _ => Poll::Ready(Ok(())),
        }
    }
    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Stream::Tcp(s) => Pin::new(s).poll_shutdown(cx),
            #[cfg(unix)]
            Stream::Unix(s) => Pin::new(s).poll_shutdown(cx),
            Stream::Tls(s) => s.poll_shutdown(cx),
            #[cfg(target_os = "linux")]
            Stream::Uring(s) => s.poll_shutdown(cx),
        }
    }
}

/// A TCP connection to the first address of `host` in `family` that accepts one.
async fn connect_only(host: &str, port: u16, family: Family) -> io::Result<TcpStream> {
    let mut last = None;
    for addr in tokio::net::lookup_host((host, port))
        .await?
        .filter(|a| family.admits(a))
    {
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
