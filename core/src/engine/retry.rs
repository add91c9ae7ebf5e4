//! `load.retry`: a connection's requests kept until their replies are in, so that one that
//! fails with a transient error (or is in flight on a lost connection) can be sent again,
//! byte for byte, after a wait.

use super::pending::Pending;
use crate::spec::Retry;
use std::collections::VecDeque;
use std::time::{Duration, Instant};

/// Error kinds never resent by default: the request itself is wrong, or the run ends.
const PERMANENT: &[&[u8]] = &[
    b"WRONGTYPE",
    b"NOAUTH",
    b"NOPERM",
    b"WRONGPASS",
    b"NOSCRIPT",
    b"PROTOCOL",
    b"ABORTED",
];

/// `ERR` replies that say the request itself is wrong.
const PERMANENT_ERR: &[&[u8]] = &[
    b"ERR syntax error",
    b"ERR wrong number of arguments",
    b"ERR unknown command",
    b"ERR unknown subcommand",
];

/// The longest wait before a resend, however often the request was resent.
const MAX_WAIT: Duration = Duration::from_secs(60);

/// A request waiting to be sent again.
struct Waiting {
    pending: Pending,
    bytes: Vec<u8>,
    due: Instant,
    /// The kind of its last failure (counted if it is never resent).
    kind: Box<[u8]>,
}

/// One connection's retry state.
pub(super) struct Retries {
    max: u32,
    on: Box<[Box<[u8]>]>,
    delay: Duration,
    backoff: f64,
    cap: usize,
    /// The bytes of each request in flight, in the order of the connection's `inflight`.
    copies: VecDeque<Vec<u8>>,
    waiting: VecDeque<Waiting>,
    /// Buffers of answered requests, reused for the next copies.
    spare: Vec<Vec<u8>>,
}

impl Retries {
    /// The state for `retry` on a connection with `pipeline` requests in flight.
    pub(super) fn new(retry: &Retry, pipeline: usize) -> Self {
        Retries {
            max: retry.attempts.unwrap_or(u32::MAX),
            on: retry.on.iter().map(|k| k.as_bytes().into()).collect(),
            delay: retry.delay.0,
            backoff: retry.backoff,
            cap: match retry.queue {
                0 => (pipeline * 4).max(64),
                n => n as usize,
            },
            copies: VecDeque::with_capacity(pipeline),
            waiting: VecDeque::new(),
            spare: Vec::new(),
        }
    }

    /// Keep a copy of the request just encoded (`bytes`), sent after those in flight.
    pub(super) fn keep(&mut self, bytes: &[u8]) {
        let mut copy = self.spare.pop().unwrap_or_default();
        copy.clear();
        copy.extend_from_slice(bytes);
        self.copies.push_back(copy);
    }

    /// The oldest request in flight got its reply (`error`: the error reply, or the kind
    /// of failure without one). Returns whether it will be sent again; when it failed for
    /// good instead, `failed` gets its bytes.
    pub(super) fn settle(
        &mut self,
        p: &Pending,
        error: Option<&[u8]>,
        now: Instant,
        failed: impl FnOnce(&[u8]),
    ) -> bool {
        let Some(copy) = self.copies.pop_front() else {
            return false;
        };
        let more = p.tries < u16::MAX && u32::from(p.tries) < self.max;
        let resend = error.filter(|e| more && self.retries(e));
        let Some(error) = resend else {
            if error.is_some() {
                failed(&copy);
            }
            self.spare.push(copy);
            return false;
        };
        let wait = self
            .delay
            .mul_f64(self.backoff.powi(p.tries.min(64) as i32))
            .min(MAX_WAIT);
        self.waiting.push_back(Waiting {
            pending: Pending {
                tries: p.tries + 1,
                // Resent, it is not late by the client's doing (the wait is the retry's).
                own_late_ns: 0,
                ..*p
            },
            bytes: copy,
            due: now + wait,
            kind: kind_of(error).into(),
        });
        true
    }

    /// Whether a failure (an error reply, `-KIND message`, or a kind) is resent.
    fn retries(&self, error: &[u8]) -> bool {
        let kind = kind_of(error);
        if !self.on.is_empty() {
            return self.on.iter().any(|k| **k == *kind);
        }
        let text = error.strip_prefix(b"-").unwrap_or(error);
        !PERMANENT.contains(&kind) && !PERMANENT_ERR.iter().any(|p| text.starts_with(p))
    }

    /// A request due to be sent again by `now`, its bytes appended to `buf`.
    pub(super) fn take_due(&mut self, now: Instant, buf: &mut Vec<u8>) -> Option<Pending> {
        if self.waiting.front()?.due > now {
            return None;
        }
        let w = self.waiting.pop_front()?;
        buf.extend_from_slice(&w.bytes);
        self.copies.push_back(w.bytes);
        Some(w.pending)
    }

    /// When the next resend is due, if one waits.
    pub(super) fn next_due(&self) -> Option<Instant> {
        self.waiting.front().map(|w| w.due)
    }

    /// Whether so many wait that no new request may start.
    pub(super) fn full(&self) -> bool {
        self.waiting.len() >= self.cap
    }

    /// The requests still waiting when the connection ends, with the kind of their last
    /// failure and their bytes: they failed for good.
    pub(super) fn abandon(&mut self) -> impl Iterator<Item = (Pending, Box<[u8]>, Vec<u8>)> + '_ {
        self.copies.clear();
        self.waiting.drain(..).map(|w| (w.pending, w.kind, w.bytes))
    }
}

/// The kind of a failure: an error reply's first word (without its `-`), or the kind given.
fn kind_of(error: &[u8]) -> &[u8] {
    let text = error.strip_prefix(b"-").unwrap_or(error);
    let end = text
        .iter()
        .position(|&b| b == b' ' || b == b'\r')
        .unwrap_or(text.len());
    &text[..end]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pending(tries: u16) -> Pending {
        let now = Instant::now();
        Pending {
            cmd: 0,
            measured: true,
            sent: 10,
            start: now,
            intended: now,
            tries,
            own_late_ns: 0,
        }
    }

    #[test]
    fn transient_errors_are_resent_permanent_ones_are_not() {
        let retry = Retry {
            attempts: Some(2),
            on: Vec::new(),
            delay: crate::spec::SpecDuration(Duration::from_millis(10)),
            backoff: 2.0,
            queue: 0,
        };
        let mut r = Retries::new(&retry, 1);
        let now = Instant::now();
        for (reply, resent) in [
            (&b"-LOADING Redis is loading\r\n"[..], true),
            (b"-WRONGTYPE Operation against a key\r\n", false),
            (b"-ERR syntax error\r\n", false),
            (b"-ERR max number of clients reached\r\n", true),
            (b"CONNECTION", true),
            (b"ABORTED", false),
        ] {
            r.keep(b"*1\r\n$4\r\nPING\r\n");
            assert_eq!(
                r.settle(&pending(0), Some(reply), now, |_| {}),
                resent,
                "{reply:?}"
            );
            r.waiting.clear();
        }
        // A success is never resent; nor a request resent `attempts` times already.
        r.keep(b"x");
        assert!(!r.settle(&pending(0), None, now, |_| panic!("not failed")));
        r.keep(b"x");
        let mut gone = Vec::new();
        assert!(!r.settle(&pending(2), Some(b"-BUSY x\r\n"), now, |b| gone
            .extend_from_slice(b)));
        assert_eq!(gone, b"x", "failed for good: its bytes handed over");
        // Waits of 10 ms, then 20 ms: the bytes come back as they were sent.
        r.keep(b"*1\r\n$4\r\nPING\r\n");
        assert!(r.settle(&pending(1), Some(b"-BUSY x\r\n"), now, |_| {}));
        let mut buf = Vec::new();
        assert!(r
            .take_due(now + Duration::from_millis(19), &mut buf)
            .is_none());
        let p = r
            .take_due(now + Duration::from_millis(20), &mut buf)
            .unwrap();
        assert_eq!((p.tries, buf.as_slice()), (2, &b"*1\r\n$4\r\nPING\r\n"[..]));
        // Only the kinds listed, with `on`.
        let mut only = Retries::new(
            &Retry {
                on: vec!["BUSY".into()],
                ..retry
            },
            1,
        );
        only.keep(b"x");
        assert!(!only.settle(&pending(0), Some(b"-LOADING x\r\n"), now, |_| {}));
        only.keep(b"x");
        assert!(only.settle(&pending(0), Some(b"-BUSY x\r\n"), now, |_| {}));
        assert_eq!(
            only.abandon().map(|(_, k, _)| k).collect::<Vec<_>>(),
            [b"BUSY"[..].into()]
        );
    }
}
