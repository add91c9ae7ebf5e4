//! The io_uring transport (`load.io = "uring"`, Linux): one ring per worker thread, shared
//! by all of that worker's TCP and Unix connections.
//!
//! A connection's reads and writes queue `RECV` and `SEND` entries into the ring without a
//! system call; the worker's driver task submits them all at once (one `io_uring_enter` per
//! pass of the worker's event loop, whatever the number of connections) and wakes each
//! connection when its completion arrives. The ring's eventfd is registered with tokio, so
//! the connection futures, timers and the housekeeping tick work as over epoll.
//!
//! The kernel writes into a buffer until its completion arrives, even after the stream that
//! asked for it is gone: each connection's buffers therefore live in the ring's slot, not in
//! the stream, and a slot (with its socket) is freed only once its last operation completed.
//! Freed slots keep their buffers for the next connection: nothing is allocated per request.
//!
//! A receive's bytes are not copied into the connection's buffer when they can be handed
//! over whole ([`UringStream::poll_read_vec`]): the connection's (empty) buffer and the slot's
//! are swapped, the connection frames its replies where the kernel put them, and the slot
//! receives into the connection's old buffer next. Buffers change hands, never get made.

use io_uring::{opcode, squeue, types, IoUring};
use std::cell::RefCell;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::rc::Rc;
use std::task::{Context, Poll, Waker};
use std::time::Instant;
use tokio::io::unix::AsyncFd;
use tokio::io::ReadBuf;

/// A connection's receive buffer at first: thousands of quiet connections stay small.
const FIRST_BUFFER: usize = 4 * 1024;
/// A busy connection's receive buffer (after a receive filled the first one): a whole
/// pipeline's replies in one completion.
const FULL_BUFFER: usize = 64 * 1024;
/// `IORING_RECVSEND_POLL_FIRST` (linux/io_uring.h, kernel 5.19): the io-uring crate keeps
/// its constants private.
const RECVSEND_POLL_FIRST: u16 = 1;
/// The fewest and the most submission entries of a ring.
const MIN_ENTRIES: u32 = 64;
const MAX_ENTRIES: u32 = 4096;

thread_local! {
    /// The ring of this worker thread, while it runs with `load.io = "uring"`: connections
    /// opened on the thread use it.
    static RING: RefCell<Option<Rc<Ring>>> = const { RefCell::new(None) };
}

/// One operation's state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    /// None queued.
    Idle,
    /// Queued or in the kernel: its buffer is the kernel's.
    InFlight,
    /// Completed with this result, not yet taken by the stream.
    Done(i32),
}

/// A connection's socket and buffers.
#[derive(Debug)]
struct Slot {
    /// `None` once freed.
    fd: Option<OwnedFd>,
    rbuf: Vec<u8>,
    /// Received bytes not yet handed out: `rbuf[rpos..rlen]`.
    rpos: usize,
    rlen: usize,
    read: Op,
    /// When the completion that delivered `rbuf`'s bytes was reaped.
    read_at: Instant,
    /// The last receive filled its buffer: the next one gets [`FULL_BUFFER`] bytes.
    grow: bool,
    reader: Option<Waker>,
    /// Bytes being sent; `wbuf[wpos..]` not yet acknowledged by a completion.
    wbuf: Vec<u8>,
    wpos: usize,
    write: Op,
    writer: Option<Waker>,
    /// Its stream was dropped: free it once its operations completed.
    closed: bool,
}

impl Slot {
    fn busy(&self) -> bool {
        self.read == Op::InFlight || self.write == Op::InFlight
    }
}

/// The ring and its slots (one per connection).
struct Inner {
    ring: IoUring,
    slots: Vec<Slot>,
    free: Vec<usize>,
    /// Entries queued since the last submission.
    queued: u32,
    /// Operations queued or in the kernel.
    in_flight: usize,
    /// Slots whose send completed short, to send the rest of (kept: no allocation per tick).
    again: Vec<usize>,
    /// The driver task, woken when the first entry of a pass is queued.
    driver: Option<Waker>,
}

/// A worker's io_uring: its submission and completion queues, and the eventfd the kernel
/// signals completions on, registered with the worker's tokio reactor.
pub struct Ring {
    inner: RefCell<Inner>,
    efd: AsyncFd<OwnedFd>,
}

impl std::fmt::Debug for Ring {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Ring").finish_non_exhaustive()
    }
}

/// The user data of an entry: its slot, and whether it is the send (1) or the receive (0).
fn tag(slot: usize, write: bool) -> u64 {
    ((slot as u64) << 1) | write as u64
}

impl Ring {
    /// A ring sized for `connections` (two operations each at most), its eventfd registered
    /// with the current tokio runtime (call within it).
    fn new(connections: usize) -> io::Result<Ring> {
        let entries = ((2 * connections) as u32)
            .clamp(MIN_ENTRIES, MAX_ENTRIES)
            .next_power_of_two();
        // DEFER_TASKRUN (kernel 6.1): completions wait as deferred work until the worker's
        // next enter runs them, instead of interrupting it whenever they arrive (a seventeenth
        // of the system calls in W2). The driver must then enter whenever the kernel holds
        // some (`poll_drive`): a ring so set up once stalled W2 by only reaping after a signal,
        // with nothing to submit, and the completions stayed deferred. Older kernels refuse
        // the flags: the default ring then.
        let ring = IoUring::builder()
            .setup_single_issuer()
            .setup_defer_taskrun()
            .setup_taskrun_flag()
            .build(entries)
            .or_else(|_| IoUring::builder().build(entries))?;
        // SAFETY: eventfd(2) with constant arguments; the descriptor is owned right after.
        let efd = unsafe { libc::eventfd(0, libc::EFD_NONBLOCK | libc::EFD_CLOEXEC) };
        if efd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: `efd` is a new, open descriptor owned by nothing else.
        let efd = unsafe { OwnedFd::from_raw_fd(efd) };
        ring.submitter().register_eventfd(efd.as_raw_fd())?;
        // SAFETY: `efd` is an open eventfd, owned by the AsyncFd for its whole life (an
        // OwnedFd's descriptor never changes).
        let efd = unsafe { AsyncFd::register_with_interest(efd, tokio::io::Interest::READABLE) }?;
        Ok(Ring {
            inner: RefCell::new(Inner {
                ring,
                slots: Vec::with_capacity(connections),
                free: Vec::new(),
                queued: 0,
                in_flight: 0,
                again: Vec::new(),
                driver: None,
            }),
            efd,
        })
    }

    /// Take a connected socket: its reads and writes go through the ring from now on.
    fn adopt(self: &Rc<Ring>, fd: OwnedFd) -> io::Result<UringStream> {
        // Blocking mode: the ring never blocks on it (it polls the socket when a receive
        // finds no data), and a non-blocking socket's receive may complete with EAGAIN.
        // SAFETY: fcntl(2) on a descriptor we own.
        let ok = unsafe {
            let flags = libc::fcntl(fd.as_raw_fd(), libc::F_GETFL);
            flags >= 0 && libc::fcntl(fd.as_raw_fd(), libc::F_SETFL, flags & !libc::O_NONBLOCK) >= 0
        };
        if !ok {
            return Err(io::Error::last_os_error());
        }
        let mut inner = self.inner.borrow_mut();
        let now = Instant::now();
        let slot = match inner.free.pop() {
            Some(i) => {
                // A freed slot keeps its buffers (their sizes too) for the next connection.
                let s = &mut inner.slots[i];
                s.fd = Some(fd);
                (s.rpos, s.rlen, s.wpos) = (0, 0, 0);
                s.wbuf.clear();
                (s.read, s.write, s.closed, s.grow) = (Op::Idle, Op::Idle, false, false);
                i
            }
            None => {
                inner.slots.push(Slot {
                    fd: Some(fd),
                    rbuf: vec![0; FIRST_BUFFER],
                    rpos: 0,
                    rlen: 0,
                    read: Op::Idle,
                    read_at: now,
                    grow: false,
                    reader: None,
                    wbuf: Vec::new(),
                    wpos: 0,
                    write: Op::Idle,
                    writer: None,
                    closed: false,
                });
                inner.slots.len() - 1
            }
        };
        Ok(UringStream {
            ring: Rc::clone(self),
            slot,
        })
    }

    /// The driver: submit what the connections queued, reap completions and wake their
    /// connections; never ends (the worker's runtime drops it).
    fn poll_drive(&self, cx: &mut Context<'_>) -> Poll<()> {
        loop {
            // The eventfd is edge-triggered in tokio's epoll, and the kernel signals it
            // anew for each completion: its counter need not be read.
            let signalled = match self.efd.poll_read_ready(cx) {
                Poll::Ready(Ok(mut guard)) => {
                    guard.clear_ready();
                    true
                }
                Poll::Ready(Err(_)) => return Poll::Pending,
                Poll::Pending => false,
            };
            let mut inner = self.inner.borrow_mut();
            // Completions the kernel holds as deferred work (DEFER_TASKRUN): they become
            // completion entries only in an enter, which must come even when no connection
            // queued anything (all waiting for replies), and again while one enter left some
            // (it runs 20 at a time). The kernel raises this flag for both (TASKRUN_FLAG).
            let deferred = inner.ring.submission().taskrun();
            if inner.queued == 0 && !signalled && !deferred {
                match &inner.driver {
                    Some(w) if w.will_wake(cx.waker()) => {}
                    _ => inner.driver = Some(cx.waker().clone()),
                }
                return Poll::Pending;
            }
            // Only the kernel's flag asks for this pass.
            let flag_only = inner.queued == 0 && !signalled;
            if inner.queued > 0 || deferred {
                // Every connection woken by the last pass has run and queued its entries by
                // now (the driver was woken after them): one system call submits them all,
                // and runs the deferred completions (`submit` enters with GETEVENTS while the
                // kernel's TASKRUN flag is up).
                if inner.ring.submit().is_err() {
                    inner.fail_queued();
                }
                inner.queued = 0;
            }
            if inner.reap() == 0 && flag_only {
                // The flag stayed up and the enter completed nothing (seen under io_uring in
                // a cluster failover, the flag never coming down): looping here would starve
                // every connection of this thread for good. Let them run, then look again.
                cx.waker().wake_by_ref();
                return Poll::Pending;
            }
        }
    }
}

impl Inner {
    /// Queue `sqe` for the driver's next submission.
    fn push(&mut self, sqe: &squeue::Entry) -> io::Result<()> {
        loop {
            // SAFETY: the entry's buffer is a slot's, which stays allocated and unmoved until
            // the entry's completion is reaped (slots are freed, and their buffers resized,
            // only with no operation in flight; `Inner`'s drop waits for the kernel).
            if unsafe { self.ring.submission().push(sqe) }.is_ok() {
                break;
            }
            // More entries in one pass than the ring holds: submit early to make room.
            self.ring.submit()?;
            self.queued = 0;
        }
        self.queued += 1;
        self.in_flight += 1;
        if self.queued == 1 {
            if let Some(w) = &self.driver {
                w.wake_by_ref();
            }
        }
        Ok(())
    }

    /// A failed submission (the ring itself broken): fail every operation in flight.
    fn fail_queued(&mut self) {
        for s in &mut self.slots {
            for (op, w) in [(&mut s.read, &mut s.reader), (&mut s.write, &mut s.writer)] {
                if *op == Op::InFlight {
                    *op = Op::Done(-libc::EIO);
                    if let Some(w) = w.take() {
                        w.wake();
                    }
                }
            }
        }
    }

    /// Take every completion: record its result in its slot and wake its connection.
    /// Returns how many there were.
    fn reap(&mut self) -> usize {
        let mut reaped = 0;
        let Inner {
            ring,
            slots,
            in_flight,
            again,
            free,
            ..
        } = self;
        for cqe in ring.completion() {
            let (i, write) = ((cqe.user_data() >> 1) as usize, cqe.user_data() & 1 == 1);
            let res = cqe.result();
            *in_flight -= 1;
            reaped += 1;
            let Some(s) = slots.get_mut(i) else { continue };
            if write {
                if res > 0 && s.wpos + (res as usize) < s.wbuf.len() && !s.closed {
                    // A short send: the rest goes in the next submission.
                    s.wpos += res as usize;
                    again.push(i);
                    continue;
                }
                s.write = match res {
                    1.. => Op::Idle,
                    0 => Op::Done(-libc::EPIPE),
                    e => Op::Done(e),
                };
                if let Some(w) = s.writer.take() {
                    w.wake();
                }
                if res <= 0 {
                    // A reader waiting on a broken connection learns of it too.
                    if let Some(w) = s.reader.take() {
                        w.wake();
                    }
                }
            } else {
                s.read = Op::Done(res);
                // The reply's end: when the completion that delivered its bytes was reaped.
                s.read_at = Instant::now();
                if let Some(w) = s.reader.take() {
                    w.wake();
                }
            }
            if s.closed && !s.busy() {
                s.fd = None; // closes the socket
                free.push(i);
            }
        }
        while let Some(i) = self.again.pop() {
            let s = &self.slots[i];
            let rest = &s.wbuf[s.wpos..];
            let fd = s.fd.as_ref().map_or(-1, |f| f.as_raw_fd());
            let sqe = opcode::Send::new(types::Fd(fd), rest.as_ptr(), rest.len() as u32)
                .build()
                .user_data(tag(i, true));
            if self.push(&sqe).is_err() {
                let s = &mut self.slots[i];
                s.write = Op::Done(-libc::EIO);
                if let Some(w) = s.writer.take() {
                    w.wake();
                }
            }
        }
        reaped
    }
}

impl Drop for Inner {
    fn drop(&mut self) {
        // The kernel may still write into buffers of operations in flight: end them (a shut
        // down socket completes its receive at once) and wait for their completions.
        for s in self.slots.iter().filter(|s| s.busy()) {
            if let Some(fd) = &s.fd {
                // SAFETY: shutdown(2) on a descriptor this slot owns.
                unsafe { libc::shutdown(fd.as_raw_fd(), libc::SHUT_RDWR) };
            }
        }
        let mut rounds = 0;
        while self.in_flight > 0 && rounds < 1000 {
            if self.ring.submit_and_wait(1).is_err() {
                break;
            }
            self.in_flight -= self.ring.completion().count();
            rounds += 1;
        }
        if self.in_flight > 0 {
            // Never seen: rather leak the buffers than free memory the kernel may write to.
            for s in self.slots.drain(..) {
                std::mem::forget(s.rbuf);
                std::mem::forget(s.wbuf);
            }
        }
    }
}

/// A TCP or Unix connection whose reads and writes go through its worker's ring.
#[derive(Debug)]
pub struct UringStream {
    ring: Rc<Ring>,
    slot: usize,
}

impl UringStream {
    /// When the completion that delivered the bytes of the last read was reaped.
    pub fn read_at(&self) -> Instant {
        self.ring.inner.borrow().slots[self.slot].read_at
    }

    /// Poll a read into `buf`: what an earlier receive brought, or a new receive queued.
    pub fn poll_read(
        &mut self,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let mut inner = self.ring.inner.borrow_mut();
        let i = self.slot;
        let s = &mut inner.slots[i];
        loop {
            if s.rpos < s.rlen {
                let n = buf.remaining().min(s.rlen - s.rpos);
                buf.put_slice(&s.rbuf[s.rpos..s.rpos + n]);
                s.rpos += n;
                return Poll::Ready(Ok(()));
            }
            match s.read {
                Op::Done(r) if r < 0 => {
                    s.read = Op::Idle;
                    return Poll::Ready(Err(io::Error::from_raw_os_error(-r)));
                }
                Op::Done(0) => {
                    s.read = Op::Idle;
                    return Poll::Ready(Ok(())); // the server closed the connection
                }
                Op::Done(r) => {
                    s.read = Op::Idle;
                    s.grow = r as usize == s.rbuf.len();
                    (s.rpos, s.rlen) = (0, r as usize);
                }
                Op::InFlight => {
                    set_waker(&mut s.reader, cx);
                    return Poll::Pending;
                }
                Op::Idle => break,
            }
        }
        if let Op::Done(e) = s.write {
            return Poll::Ready(Err(io::Error::from_raw_os_error(-e)));
        }
        // A receive that filled a smaller buffer: the connection is busy, give it the full
        // one (its data was handed out: nothing to keep). Buffers only grow, and there are as
        // many as slots (and the worker's scratch buffer): this settles.
        if s.grow && s.rbuf.len() < FULL_BUFFER {
            s.rbuf.resize(FULL_BUFFER, 0);
        }
        s.grow = false;
        (s.rpos, s.rlen) = (0, 0);
        let fd = s.fd.as_ref().map_or(-1, |f| f.as_raw_fd());
        // Poll first: a receive is queued right after the requests it waits for, before
        // their replies can have come, so trying it at once would only fail with EAGAIN.
        let sqe = opcode::Recv::new(types::Fd(fd), s.rbuf.as_mut_ptr(), s.rbuf.len() as u32)
            .ioprio(RECVSEND_POLL_FIRST)
            .build()
            .user_data(tag(i, false));
        s.read = Op::InFlight;
        set_waker(&mut s.reader, cx);
        if let Err(e) = inner.push(&sqe) {
            inner.slots[i].read = Op::Idle;
            return Poll::Ready(Err(e));
        }
        Poll::Pending
    }

    /// Poll a read into `buf[end..]`: `Ready(Ok(n))` with the bytes at `buf[end..end + n]` (0:
    /// the server closed the connection). When nothing precedes them (`end` 0) and a whole
    /// receive is waiting, `buf` (not empty, at most 64 KiB) is swapped with the slot's buffer rather than
    /// copied into: the bytes stay where the kernel put them, and the slot's next receive goes
    /// into `buf`'s old memory. `buf`'s length is then the slot buffer's.
    pub fn poll_read_vec(
        &mut self,
        cx: &mut Context<'_>,
        buf: &mut Vec<u8>,
        end: usize,
    ) -> Poll<io::Result<usize>> {
        // A buffer grown past the full size (for a long reply) stays the connection's: slots
        // keep theirs for good.
        if end == 0 && !buf.is_empty() && buf.len() <= FULL_BUFFER {
            let mut inner = self.ring.inner.borrow_mut();
            let s = &mut inner.slots[self.slot];
            if let (Op::Done(r @ 1..), 0, 0) = (s.read, s.rpos, s.rlen) {
                s.read = Op::Idle;
                s.grow = r as usize == s.rbuf.len();
                std::mem::swap(buf, &mut s.rbuf);
                return Poll::Ready(Ok(r as usize));
            }
        }
        let mut rb = ReadBuf::new(&mut buf[end..]);
        match self.poll_read(cx, &mut rb) {
            Poll::Ready(Ok(())) => Poll::Ready(Ok(rb.filled().len())),
            Poll::Ready(Err(e)) => Poll::Ready(Err(e)),
            Poll::Pending => Poll::Pending,
        }
    }

    /// Poll a write of `buf`: copied into the slot's buffer and queued, `Ready` at once; the
    /// next write (or flush) waits for its completion, and reports its failure.
    pub fn poll_write(&mut self, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        let mut inner = self.ring.inner.borrow_mut();
        let i = self.slot;
        let s = &mut inner.slots[i];
        match s.write {
            Op::Done(e) => return Poll::Ready(Err(io::Error::from_raw_os_error(-e))),
            Op::InFlight => {
                set_waker(&mut s.writer, cx);
                return Poll::Pending;
            }
            Op::Idle => {}
        }
        if buf.is_empty() {
            return Poll::Ready(Ok(0));
        }
        // Grows to the largest batch once, then stays.
        s.wbuf.clear();
        s.wbuf.extend_from_slice(buf);
        s.wpos = 0;
        let fd = s.fd.as_ref().map_or(-1, |f| f.as_raw_fd());
        let sqe = opcode::Send::new(types::Fd(fd), s.wbuf.as_ptr(), s.wbuf.len() as u32)
            .build()
            .user_data(tag(i, true));
        s.write = Op::InFlight;
        if let Err(e) = inner.push(&sqe) {
            inner.slots[i].write = Op::Idle;
            return Poll::Ready(Err(e));
        }
        Poll::Ready(Ok(buf.len()))
    }

    /// Poll until the last write completed.
    pub fn poll_flush(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let mut inner = self.ring.inner.borrow_mut();
        let s = &mut inner.slots[self.slot];
        match s.write {
            Op::Done(e) => Poll::Ready(Err(io::Error::from_raw_os_error(-e))),
            Op::InFlight => {
                set_waker(&mut s.writer, cx);
                Poll::Pending
            }
            Op::Idle => Poll::Ready(Ok(())),
        }
    }

    /// Poll a flush, then shut the sending side down.
    pub fn poll_shutdown(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        if let Poll::Ready(r) = self.poll_flush(cx) {
            r?;
        } else {
            return Poll::Pending;
        }
        let inner = self.ring.inner.borrow();
        if let Some(fd) = &inner.slots[self.slot].fd {
            // SAFETY: shutdown(2) on a descriptor the slot owns.
            if unsafe { libc::shutdown(fd.as_raw_fd(), libc::SHUT_WR) } < 0 {
                return Poll::Ready(Err(io::Error::last_os_error()));
            }
        }
        Poll::Ready(Ok(()))
    }
}

impl Drop for UringStream {
    fn drop(&mut self) {
        let mut inner = self.ring.inner.borrow_mut();
        let Inner { slots, free, .. } = &mut *inner;
        let s = &mut slots[self.slot];
        s.closed = true;
        (s.reader, s.writer) = (None, None);
        if !s.busy() {
            s.fd = None; // closes the socket
            free.push(self.slot);
        } else if let Some(fd) = &s.fd {
            // A pending receive would wait for the server: end it now; the slot is freed
            // (and the socket closed) when its last completion arrives.
            // SAFETY: shutdown(2) on a descriptor the slot owns.
            unsafe { libc::shutdown(fd.as_raw_fd(), libc::SHUT_RDWR) };
        }
    }
}

/// Keep `cx`'s waker in `slot` (not cloned again when it is the same task's).
fn set_waker(slot: &mut Option<Waker>, cx: &Context<'_>) {
    match slot {
        Some(w) if w.will_wake(cx.waker()) => {}
        _ => *slot = Some(cx.waker().clone()),
    }
}

/// The ring of the current worker thread, while [`install`]ed.
pub struct Installed(());

impl Drop for Installed {
    fn drop(&mut self) {
        RING.with(|r| r.borrow_mut().take());
    }
}

/// Give the current worker thread a ring for `connections` connections, and spawn its
/// driver on the current `LocalSet`; connections opened on this thread use it until the
/// returned guard is dropped.
pub fn install(connections: usize) -> io::Result<Installed> {
    let ring = Rc::new(Ring::new(connections)?);
    RING.with(|r| *r.borrow_mut() = Some(Rc::clone(&ring)));
    let driver = Rc::clone(&ring);
    tokio::task::spawn_local(async move {
        std::future::poll_fn(|cx| driver.poll_drive(cx)).await;
    });
    Ok(Installed(()))
}

/// A connected socket moved onto this thread's ring, if it has one; `Ok(Err(fd))` gives it
/// back otherwise.
pub fn adopt<F: Into<OwnedFd>>(socket: F) -> io::Result<Result<UringStream, OwnedFd>> {
    let fd: OwnedFd = socket.into();
    match RING.with(|r| r.borrow().clone()) {
        Some(ring) => ring.adopt(fd).map(Ok),
        None => Ok(Err(fd)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use respload_testing::Server;
    use std::future::poll_fn;

    /// PING on `s`, its reply read into `buf[end..]`: the reply's length.
    async fn ping(s: &mut UringStream, buf: &mut Vec<u8>, end: usize) -> usize {
        let sent = poll_fn(|cx| s.poll_write(cx, b"PING\r\n")).await.unwrap();
        assert_eq!(sent, 6);
        poll_fn(|cx| s.poll_read_vec(cx, buf, end)).await.unwrap()
    }

    #[test]
    fn a_whole_receive_is_handed_over_by_swapping_buffers_and_one_after_kept_bytes_is_copied() {
        let server = Server::start(&[]);
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        tokio::task::LocalSet::new().block_on(&rt, async {
            let _ring = install(1).unwrap();
            let tcp = std::net::TcpStream::connect(("127.0.0.1", server.port)).unwrap();
            let mut s = adopt(tcp).unwrap().unwrap();
            let slot_buffer = |s: &UringStream| s.ring.inner.borrow().slots[s.slot].rbuf.as_ptr();
            // Nothing before the bytes: the reply is read where the kernel put it (the slot's
            // buffer, now the caller's), and the slot receives into the caller's old one.
            let mut buf = vec![0u8; 8192];
            let (mine, ring) = (buf.as_ptr(), slot_buffer(&s));
            let n = ping(&mut s, &mut buf, 0).await;
            assert_eq!(&buf[..n], b"+PONG\r\n");
            assert_eq!((buf.as_ptr(), slot_buffer(&s)), (ring, mine));
            assert_eq!(buf.len(), FIRST_BUFFER);
            // Bytes kept before them (a partial reply): copied after those, nothing swapped.
            let m = ping(&mut s, &mut buf, n).await;
            assert_eq!(&buf[..n + m], b"+PONG\r\n+PONG\r\n");
            assert_eq!((buf.as_ptr(), slot_buffer(&s)), (ring, mine));
        });
    }
}
