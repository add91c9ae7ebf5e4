//! Request generation: pick a command by weight, draw its key and value, encode it straight
//! into the connection's write buffer. Nothing here allocates per request.

use super::rng::Rng;
use crate::resp::encode::{
    write_array_header, write_bulk, write_bulk_i64, write_bulk_prefixed_u64,
};
use crate::spec::{Arg, Compiled, Distribution, Phase};
use std::cell::Cell;
use std::rc::Rc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// Sequential keys handed out in chunks from one run-wide counter, so that threads share one
/// sequence with one atomic operation per chunk instead of per request.
#[derive(Debug)]
pub struct Sequence {
    global: Arc<AtomicU64>,
    next: Cell<u64>,
    end: Cell<u64>,
}

const SEQUENCE_CHUNK: u64 = 64;

impl Sequence {
    /// A thread's view of the run-wide counter.
    pub fn new(global: Arc<AtomicU64>) -> Self {
        Sequence {
            global,
            next: Cell::new(0),
            end: Cell::new(0),
        }
    }

    /// The next sequence number. `want` bounds the chunk taken, so that a request budget of N
    /// claims exactly N numbers between all threads.
    #[inline]
    pub fn take(&self, want: u64) -> u64 {
        if self.next.get() == self.end.get() {
            let n = want.clamp(1, SEQUENCE_CHUNK);
            let start = self.global.fetch_add(n, Ordering::Relaxed);
            self.next.set(start);
            self.end.set(start + n);
        }
        let v = self.next.get();
        self.next.set(v + 1);
        v
    }
}

/// Bytes that values are cut from: random letters and digits, shared by a thread's connections.
pub fn value_pool(max_size: usize, rng: &mut Rng) -> Rc<[u8]> {
    const ALNUM: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    (0..max_size + VALUE_SLACK)
        .map(|_| ALNUM[rng.below(ALNUM.len() as u64) as usize])
        .collect()
}

/// Values start at a random offset within this many bytes, so they differ.
const VALUE_SLACK: usize = 4096;

/// One connection's request generator.
pub struct Generator {
    commands: Rc<[Compiled]>,
    cumulative: Box<[u64]>,
    total_weight: u64,
    prefix: Box<[u8]>,
    pad: usize,
    key_lo: u64,
    key_span: u64,
    distribution: Distribution,
    size_lo: u64,
    size_span: u64,
    pool: Rc<[u8]>,
    sequence: Rc<Sequence>,
    rng: Rng,
}

impl Generator {
    /// A generator for `phase` with its own random stream.
    pub fn new(
        phase: &Phase,
        commands: Rc<[Compiled]>,
        pool: Rc<[u8]>,
        sequence: Rc<Sequence>,
        rng: Rng,
    ) -> Self {
        let mut acc = 0;
        let cumulative = commands
            .iter()
            .map(|c| {
                acc += c.weight as u64;
                acc
            })
            .collect();
        let keys = &phase.spec.keys;
        let (lo, hi) = phase.spec.values.size.bounds();
        Generator {
            commands,
            cumulative,
            total_weight: acc,
            prefix: keys.prefix.as_bytes().into(),
            pad: keys.pad as usize,
            key_lo: keys.range[0],
            key_span: keys.range[1] - keys.range[0] + 1,
            distribution: keys.distribution,
            size_lo: lo as u64,
            size_span: (hi - lo) as u64 + 1,
            pool,
            sequence,
            rng,
        }
    }

    #[inline]
    fn pick(&mut self) -> usize {
        if self.cumulative.len() == 1 {
            return 0;
        }
        let r = self.rng.below(self.total_weight);
        self.cumulative.iter().position(|&c| r < c).unwrap_or(0)
    }

    #[inline]
    fn key(&mut self, budget_left: u64) -> u64 {
        let offset = match self.distribution {
            Distribution::Uniform => self.rng.below(self.key_span),
            Distribution::Sequential => self.sequence.take(budget_left) % self.key_span,
        };
        self.key_lo + offset
    }

    #[inline]
    fn value(&mut self) -> &[u8] {
        let size = if self.size_span == 1 {
            self.size_lo
        } else {
            self.size_lo + self.rng.below(self.size_span)
        } as usize;
        let start = self.rng.below(VALUE_SLACK as u64) as usize;
        &self.pool[start..start + size]
    }

    /// Encode the next request into `buf`; returns its command index. `budget_left` is how
    /// many more requests this thread may send (bounds sequential key chunks).
    #[inline]
    pub fn next(&mut self, buf: &mut Vec<u8>, budget_left: u64) -> usize {
        let index = self.pick();
        let commands = Rc::clone(&self.commands);
        let cmd = &commands[index];
        let mut key = None;
        write_array_header(buf, cmd.args.len());
        for arg in &cmd.args {
            match arg {
                Arg::Lit(bytes) => write_bulk(buf, bytes),
                Arg::Key | Arg::KeyNum(_) => {
                    let k = match key {
                        Some(k) => k,
                        None => {
                            let k = self.key(budget_left);
                            key = Some(k);
                            k
                        }
                    };
                    let prefix = match arg {
                        Arg::KeyNum(p) => p,
                        _ => &self.prefix,
                    };
                    write_bulk_prefixed_u64(buf, prefix, k, self.pad);
                }
                Arg::FreshKey => {
                    let k = self.key(budget_left);
                    write_bulk_prefixed_u64(buf, &self.prefix, k, self.pad);
                }
                Arg::Value => {
                    let v = self.value();
                    write_bulk(buf, v);
                }
                Arg::Rand(lo, hi) => {
                    let n = self.rng.between(*lo, *hi);
                    write_bulk_i64(buf, n);
                }
            }
        }
        index
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::Workload;

    fn generator(toml: &str, seed: u64) -> Generator {
        let w = Workload::from_toml_str(toml).unwrap();
        let p = &w.phases[0];
        let mut rng = Rng::new(seed);
        let pool = value_pool(p.spec.values.size.bounds().1 as usize, &mut rng);
        let seq = Rc::new(Sequence::new(Arc::new(AtomicU64::new(0))));
        Generator::new(
            p,
            p.commands.clone().into(),
            pool,
            seq,
            Rng::for_stream(seed, 0, 0),
        )
    }

    #[test]
    fn encodes_sequential_keys_with_padding() {
        let mut g = generator(
            "[keys]\nprefix='k:'\npad=4\nrange=[5,6]\ndistribution='sequential'\n[[commands]]\nname='get'",
            1,
        );
        let mut buf = Vec::new();
        for _ in 0..3 {
            assert_eq!(g.next(&mut buf, 100), 0);
        }
        let text = String::from_utf8(buf).unwrap();
        assert_eq!(
            text,
            "*2\r\n$3\r\nGET\r\n$6\r\nk:0005\r\n*2\r\n$3\r\nGET\r\n$6\r\nk:0006\r\n*2\r\n$3\r\nGET\r\n$6\r\nk:0005\r\n"
        );
    }

    #[test]
    fn same_seed_same_stream_and_weights_hold() {
        let spec =
            "[values]\nsize=[10,20]\n[[commands]]\nname='set'\nweight=3\n[[commands]]\nname='get'";
        let (mut a, mut b) = (generator(spec, 9), generator(spec, 9));
        let (mut x, mut y) = (Vec::new(), Vec::new());
        let mut sets = 0;
        for _ in 0..4000 {
            sets += (a.next(&mut x, 1) == 0) as u32;
            b.next(&mut y, 1);
        }
        assert_eq!(x, y);
        assert!((2800..3200).contains(&sets), "{sets}");
        let mut other = Vec::new();
        let mut c = generator(spec, 10);
        for _ in 0..4000 {
            c.next(&mut other, 1);
        }
        assert_ne!(x, other);
    }
}
