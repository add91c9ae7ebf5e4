//! Byte streams to a server: TCP or Unix socket (TLS joins here as a third variant).

use crate::spec::Endpoint;
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpStream, UnixStream};

/// A connected stream. An enum rather than a trait object: one predictable branch per
/// read or write, no allocation.
#[derive(Debug)]
pub enum Stream {
    /// TCP, with TCP_NODELAY.
    Tcp(TcpStream),
    /// Unix domain socket.
    Unix(UnixStream),
}

impl Stream {
    /// Connect to `endpoint` (host names resolved), failing after `timeout`.
    pub async fn connect(endpoint: &Endpoint, timeout: std::time::Duration) -> io::Result<Stream> {
        let fut = async {
            match endpoint {
                Endpoint::Tcp { host, port } => {
                    let s = TcpStream::connect((host.as_str(), *port)).await?;
                    s.set_nodelay(true)?;
                    Ok(Stream::Tcp(s))
                }
                Endpoint::Unix(path) => Ok(Stream::Unix(UnixStream::connect(path).await?)),
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
            Stream::Unix(s) => Pin::new(s).poll_read(cx, buf),
        }
    }

    /// Poll a write of `buf`.
    #[inline]
    pub fn poll_write_buf(&mut self, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        match self {
            Stream::Tcp(s) => Pin::new(s).poll_write(cx, buf),
            Stream::Unix(s) => Pin::new(s).poll_write(cx, buf),
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
    fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }
    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Stream::Tcp(s) => Pin::new(s).poll_shutdown(cx),
            Stream::Unix(s) => Pin::new(s).poll_shutdown(cx),
        }
    }
}
