//! Value bytes: sizes as the spec asks, contents cut from a pool shared by a thread's
//! connections (no allocation, one copy into the write buffer), or filled fresh per request.

use super::rng::Rng;
use crate::resp::encode::write_bulk_header;
use crate::spec::{ValueData, ValueSize, Values};
use std::rc::Rc;

const ALNUM: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

/// Values start at a random offset within this many bytes, so they differ.
const VALUE_SLACK: usize = 4096;

/// Compressible data is made of blocks of this many bytes: random bytes, then `x`s.
const BLOCK: usize = 64;

/// Bytes that values are cut from, for the largest size of `values`.
pub fn value_pool(values: &Values, rng: &mut Rng) -> Rc<[u8]> {
    let len = values.size.bounds().1 as usize + VALUE_SLACK;
    let mut pool = vec![b'x'; len];
    fill(&mut pool, values, rng);
    pool.into()
}

/// How many random bytes open each block of compressible data.
fn random_per_block(ratio: f64) -> usize {
    ((BLOCK as f64 / ratio).round() as usize).clamp(1, BLOCK)
}

/// Fill `out` with the contents `values.data` asks for.
fn fill(out: &mut [u8], values: &Values, rng: &mut Rng) {
    match values.data {
        ValueData::Fixed => out.fill(b'x'),
        ValueData::Random => {
            for chunk in out.chunks_mut(8) {
                let mut bits = rng.next_u64();
                for b in chunk {
                    *b = ALNUM[(bits & 0xff) as usize % ALNUM.len()];
                    bits >>= 8;
                }
            }
        }
        ValueData::Compressible => {
            let k = random_per_block(values.ratio());
            for block in out.chunks_mut(BLOCK) {
                let n = k.min(block.len());
                for chunk in block[..n].chunks_mut(8) {
                    chunk.copy_from_slice(&rng.next_u64().to_le_bytes()[..chunk.len()]);
                }
                block[n..].fill(b'x');
            }
        }
    }
}

/// How sizes are picked.
#[derive(Debug, Clone)]
enum SizePick {
    Fixed(u64),
    Uniform {
        lo: u64,
        span: u64,
    },
    FollowsKey {
        lo: u64,
        diff: u64,
        last_key: u64,
    },
    List {
        sizes: Box<[u64]>,
        cumulative: Box<[u64]>,
    },
}

/// One connection's source of values.
#[derive(Debug, Clone)]
pub struct ValueSource {
    pick: SizePick,
    pool: Rc<[u8]>,
    fresh: Option<Values>,
}

impl ValueSource {
    /// Values as `values` asks, cut from `pool`, over a key range of `key_span` keys.
    pub fn new(values: &Values, pool: Rc<[u8]>, key_span: u64) -> Self {
        let pick = match &values.size {
            ValueSize::Fixed(n) => SizePick::Fixed(*n as u64),
            ValueSize::Range([lo, hi]) if values.size_follows_key => SizePick::FollowsKey {
                lo: *lo as u64,
                diff: (hi - lo) as u64,
                last_key: key_span.saturating_sub(1).max(1),
            },
            ValueSize::Range([lo, hi]) => SizePick::Uniform {
                lo: *lo as u64,
                span: (hi - lo) as u64 + 1,
            },
            ValueSize::List(list) => {
                let mut acc = 0;
                SizePick::List {
                    sizes: list.iter().map(|e| e[0] as u64).collect(),
                    cumulative: list
                        .iter()
                        .map(|e| {
                            acc += e[1] as u64;
                            acc
                        })
                        .collect(),
                }
            }
        };
        ValueSource {
            pick,
            pool,
            fresh: values.fresh.then(|| values.clone()),
        }
    }

    /// The size of the next value; `key` is the request's key offset in the range.
    #[inline]
    pub fn size(&self, rng: &mut Rng, key: u64) -> usize {
        (match &self.pick {
            SizePick::Fixed(n) => *n,
            SizePick::Uniform { lo, span } => lo + rng.below(*span),
            SizePick::FollowsKey { lo, diff, last_key } => {
                lo + (key.min(*last_key) as u128 * *diff as u128 / *last_key as u128) as u64
            }
            SizePick::List { sizes, cumulative } => {
                let total = cumulative.last().copied().unwrap_or(1);
                let r = rng.below(total);
                sizes[cumulative.iter().position(|&c| r < c).unwrap_or(0)]
            }
        }) as usize
    }

    /// Append the next value as a bulk string; `key` is the request's key offset.
    #[inline]
    pub fn write(&self, buf: &mut Vec<u8>, rng: &mut Rng, key: u64) {
        let size = self.size(rng, key);
        write_bulk_header(buf, size);
        self.append(buf, rng, size);
        buf.extend_from_slice(b"\r\n");
    }

    /// Append the next value's bytes alone (for a value inside a longer argument).
    #[inline]
    pub fn write_raw(&self, out: &mut Vec<u8>, rng: &mut Rng, key: u64) {
        let size = self.size(rng, key);
        self.append(out, rng, size);
    }

    #[inline]
    fn append(&self, out: &mut Vec<u8>, rng: &mut Rng, size: usize) {
        match &self.fresh {
            None => {
                let start = rng.below(VALUE_SLACK as u64) as usize;
                out.extend_from_slice(&self.pool[start..start + size]);
            }
            Some(values) => {
                let at = out.len();
                out.resize(at + size, 0);
                fill(&mut out[at..], values, rng);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn values(toml: &str) -> Values {
        toml::from_str(toml).unwrap()
    }

    fn payloads(v: &Values, n: usize, key: impl Fn(usize) -> u64) -> Vec<Vec<u8>> {
        let mut rng = Rng::new(3);
        let src = ValueSource::new(v, value_pool(v, &mut rng), 1000);
        (0..n)
            .map(|i| {
                let mut buf = Vec::new();
                src.write(&mut buf, &mut rng, key(i));
                let body = buf.iter().position(|&b| b == b'\n').unwrap() + 1;
                buf[body..buf.len() - 2].to_vec()
            })
            .collect()
    }

    #[test]
    fn sizes_follow_the_spec() {
        let list = values("size = [[10, 3], [1000, 1]]");
        let xs = payloads(&list, 8000, |_| 0);
        let small = xs.iter().filter(|v| v.len() == 10).count() as f64 / xs.len() as f64;
        assert!((small - 0.75).abs() < 0.02, "{small}");
        assert!(xs.iter().all(|v| v.len() == 10 || v.len() == 1000));

        let follows = values("size = [100, 1099]\nsize_follows_key = true");
        let xs = payloads(&follows, 1000, |i| i as u64);
        assert_eq!((xs[0].len(), xs[999].len()), (100, 1099));
        assert!(xs.windows(2).all(|w| w[0].len() <= w[1].len()));
        assert_eq!(xs[500].len(), 100 + 500 * 999 / 999);
    }

    #[test]
    fn data_kinds_and_fresh_values() {
        let fixed = payloads(&values("size = 20\ndata = 'fixed'"), 3, |_| 0);
        assert!(fixed.iter().all(|v| v == &vec![b'x'; 20]));
        let random = payloads(&values("size = 200"), 50, |_| 0);
        assert!(random
            .iter()
            .all(|v| v.iter().all(u8::is_ascii_alphanumeric)));
        let fresh = payloads(&values("size = 5000\nfresh = true"), 4, |_| 0);
        assert!(fresh[0] != fresh[1] && fresh.iter().all(|v| v.len() == 5000));
        assert!(fresh
            .iter()
            .all(|v| v.iter().all(u8::is_ascii_alphanumeric)));
    }

    #[test]
    fn compressible_data_compresses_by_the_ratio() {
        for (ratio, fresh) in [(2.0, false), (4.0, false), (4.0, true)] {
            let v = values(&format!(
                "size = 65536\ndata = 'compressible'\ncompression_ratio = {ratio}\nfresh = {fresh}"
            ));
            let data = &payloads(&v, 1, |_| 0)[0];
            let packed = miniz_oxide::deflate::compress_to_vec(data, 6);
            let got = data.len() as f64 / packed.len() as f64;
            assert!((got / ratio - 1.0).abs() < 0.2, "ratio {ratio}: got {got}");
        }
    }
}
