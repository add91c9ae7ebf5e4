//! A TCP stream with a read-ahead buffer, under TLS: rustls reads its records in chunks of
//! about 4 KiB, so a pipeline's 50 KiB of encrypted replies took a dozen `recv` calls.
//! Through this buffer they take one, and rustls is fed from memory.

use std::io::{self, IoSlice};
use std::pin::Pin;
use std::task::{ready, Context, Poll};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;

/// Largest read-ahead; a connection starts at [`FIRST_SIZE`] and grows here on the first
/// read that fills its buffer, so idle connections stay small.
const MAX_SIZE: usize = 64 * 1024;
/// First read-ahead: one full TLS record (16 KiB of data plus its header and tag).
const FIRST_SIZE: usize = 17 * 1024;

/// A [`TcpStream`] whose reads go through a buffer of up to 64 KiB.
#[derive(Debug)]
pub struct ReadAhead {
    tcp: TcpStream,
    buf: Vec<u8>,
    start: usize,
    end: usize,
}

impl ReadAhead {
    /// Wrap `tcp`; the buffer is allocated on the first read.
    pub fn new(tcp: TcpStream) -> Self {
        ReadAhead {
            tcp,
            buf: Vec::new(),
            start: 0,
            end: 0,
        }
    }
}

impl AsyncRead for ReadAhead {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        out: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let me = self.get_mut();
        if me.start == me.end {
            if me.buf.is_empty() {
                me.buf = vec![0; FIRST_SIZE];
            }
            if out.remaining() >= me.buf.len() {
                // The caller's buffer is the larger: no point copying through ours.
                return Pin::new(&mut me.tcp).poll_read(cx, out);
            }
            let mut rb = ReadBuf::new(&mut me.buf);
            ready!(Pin::new(&mut me.tcp).poll_read(cx, &mut rb))?;
            let n = rb.filled().len();
            if n == me.buf.len() && n < MAX_SIZE {
                me.buf.resize(MAX_SIZE, 0);
            }
            (me.start, me.end) = (0, n);
        }
        let n = out.remaining().min(me.end - me.start);
        out.put_slice(&me.buf[me.start..me.start + n]);
        me.start += n;
        Poll::Ready(Ok(()))
    }
}

impl AsyncWrite for ReadAhead {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().tcp).poll_write(cx, buf)
    }
    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().tcp).poll_write_vectored(cx, bufs)
    }
    fn is_write_vectored(&self) -> bool {
        self.tcp.is_write_vectored()
    }
    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().tcp).poll_flush(cx)
    }
    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().tcp).poll_shutdown(cx)
    }
}
