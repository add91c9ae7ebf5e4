//! One traced command: when the server ran it, on which db, for which client, with which
//! arguments. Held flat (one byte buffer, argument slots into it) so that a reader refills
//! the same record line after line without allocating.

use std::ops::Range;

/// One argument of a traced command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TraceArg<'a> {
    /// The argument's bytes as recorded.
    Bytes(&'a [u8]),
    /// A value of this many bytes whose content the trace does not hold (the Twitter cache
    /// traces give sizes only); replay writes that many bytes of filler.
    Size(u64),
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Slot {
    Bytes(Range<usize>),
    Size(u64),
}

/// One command of a trace.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Record {
    /// When the server ran it: microseconds since the UNIX epoch (MONITOR's clock), or on the
    /// trace's own clock (a Twitter trace's seconds).
    pub t_us: u64,
    /// The database it ran on.
    pub db: u32,
    /// Who sent it: `ADDR:PORT`, `unix:PATH`, `lua`, or a trace's own client id.
    pub client: String,
    buf: Vec<u8>,
    slots: Vec<Slot>,
}

impl Record {
    /// Empty the record for reuse, keeping its buffers.
    pub fn clear(&mut self) {
        self.t_us = 0;
        self.db = 0;
        self.client.clear();
        self.buf.clear();
        self.slots.clear();
    }

    /// Append an argument given as bytes.
    pub fn push_bytes(&mut self, bytes: &[u8]) {
        let at = self.buf.len();
        self.buf.extend_from_slice(bytes);
        self.slots.push(Slot::Bytes(at..self.buf.len()));
    }

    /// Append an argument built byte by byte: call with the bytes' start
    /// ([`Record::open_arg`]) once they are written with [`Record::arg_buf`].
    pub fn open_arg(&self) -> usize {
        self.buf.len()
    }

    /// The buffer an argument is being written into (see [`Record::open_arg`]).
    pub fn arg_buf(&mut self) -> &mut Vec<u8> {
        &mut self.buf
    }

    /// Close the argument opened at `start`.
    pub fn close_arg(&mut self, start: usize) {
        self.slots.push(Slot::Bytes(start..self.buf.len()));
    }

    /// Append a value of `n` bytes whose content is not recorded.
    pub fn push_size(&mut self, n: u64) {
        self.slots.push(Slot::Size(n));
    }

    /// How many arguments (the command name included).
    pub fn len(&self) -> usize {
        self.slots.len()
    }

    /// Whether it holds no argument at all.
    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }

    /// Argument `i` (0 is the command name).
    pub fn arg(&self, i: usize) -> Option<TraceArg<'_>> {
        self.slots.get(i).map(|s| match s {
            Slot::Bytes(r) => TraceArg::Bytes(&self.buf[r.clone()]),
            Slot::Size(n) => TraceArg::Size(*n),
        })
    }

    /// Every argument in order.
    pub fn args(&self) -> impl Iterator<Item = TraceArg<'_>> + '_ {
        (0..self.slots.len()).filter_map(|i| self.arg(i))
    }

    /// The command name's bytes as recorded (any case); `None` when empty or a size.
    pub fn name(&self) -> Option<&[u8]> {
        match self.arg(0)? {
            TraceArg::Bytes(b) => Some(b),
            TraceArg::Size(_) => None,
        }
    }

    /// Replace argument `i` (bytes only), e.g. to redact it; out of range does nothing.
    pub fn set_bytes(&mut self, i: usize, bytes: &[u8]) {
        if i >= self.slots.len() {
            return;
        }
        let at = self.buf.len();
        self.buf.extend_from_slice(bytes);
        self.slots[i] = Slot::Bytes(at..self.buf.len());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_is_refilled_in_place() {
        let mut r = Record::default();
        r.push_bytes(b"SET");
        r.push_bytes(b"k");
        r.push_size(3);
        assert_eq!(r.len(), 3);
        assert_eq!(r.arg(2), Some(TraceArg::Size(3)));
        r.set_bytes(1, b"other");
        assert_eq!(r.arg(1), Some(TraceArg::Bytes(b"other")));
        r.clear();
        assert!(r.is_empty());
        assert_eq!(r.name(), None);
    }
}
