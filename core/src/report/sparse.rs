//! Histograms as their non-zero buckets, for adding many encoded histograms quickly.
//!
//! Merging 16 hosts' one-hour reports adds 16 interval histograms for each of 3,600 rows.
//! Decoded by the `hdrhistogram` crate, each is a fresh ~260 KB array of counts (1 ns to 1 h at
//! 3 digits) that is zeroed, filled, added element by element and encoded again; yet an
//! interval holds a few hundred non-zero buckets. Here the V2 encoding is read straight into
//! (bucket, count) pairs, added, ranked and written back, each step as long as the buckets in
//! use. The results are the crate's to the bit: the same encoding (same layout, same zlib
//! stream) and the same percentiles, which the tests check against it. It is also the reader
//! of every histogram respload loads ([`super::decode_histogram`]): the crate's own sizes a
//! buffer by the length a header declares, however few bytes follow.

use super::histogram::percentile_rank;
use base64::Engine as _;

/// The cookies of the V2 encodings this module writes (the crate's, "| 0x10").
const V2_COOKIE: u32 = 0x1c84_9303 | 0x10;
const V2_COMPRESSED_COOKIE: u32 = 0x1c84_9304 | 0x10;
const V2_HEADER: usize = 40;

/// How a histogram's values map to bucket indexes, as the crate computes it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Layout {
    low: u64,
    high: u64,
    sigfig: u8,
    unit_magnitude: u32,
    sub_bucket_half_count_magnitude: u32,
    /// How many buckets the crate's array of counts has for these bounds.
    len: u64,
}

impl Layout {
    fn new(low: u64, high: u64, sigfig: u8) -> Option<Layout> {
        // The crate's own limits (`Histogram::new_with_bounds`).
        if !(1..=u64::MAX / 2).contains(&low) || high < 2 * low || sigfig > 5 {
            return None;
        }
        let largest = 2 * 10_u32.pow(u32::from(sigfig));
        let unit_magnitude = (low as f64).log2().floor() as u32;
        let sub_bucket_count_magnitude = f64::from(largest).log2().ceil() as u32;
        if unit_magnitude + sub_bucket_count_magnitude > 63 {
            return None;
        }
        // The crate's `buckets_to_cover(high)` and `num_bins`.
        let mut untrackable = 1u64 << (sub_bucket_count_magnitude + unit_magnitude);
        let mut buckets = 1u64;
        while untrackable <= high {
            if untrackable > u64::MAX / 2 {
                buckets += 1;
                break;
            }
            untrackable <<= 1;
            buckets += 1;
        }
        Some(Layout {
            low,
            high,
            sigfig,
            unit_magnitude,
            sub_bucket_half_count_magnitude: sub_bucket_count_magnitude - 1,
            len: (buckets + 1) << (sub_bucket_count_magnitude - 1),
        })
    }

    /// The lowest value counted at `index` (the crate's `value_for`).
    fn value_for(&self, index: u32) -> u64 {
        let half = 1u32 << self.sub_bucket_half_count_magnitude;
        let mut bucket = (index >> self.sub_bucket_half_count_magnitude) as i64 - 1;
        let mut sub_bucket = (index & (half - 1)) + half;
        if bucket < 0 {
            sub_bucket -= half;
            bucket = 0;
        }
        u64::from(sub_bucket).wrapping_shl(bucket as u32 + self.unit_magnitude)
    }

    /// The highest value counted at `index` (the crate's `highest_equivalent`).
    fn highest_for(&self, index: u32) -> u64 {
        let lowest = self.value_for(index);
        let bucket = (index >> self.sub_bucket_half_count_magnitude).saturating_sub(1);
        // As the crate: the next bucket's lowest value (saturating) less one.
        match 1u64.checked_shl(bucket + self.unit_magnitude) {
            Some(range) if lowest < u64::MAX => lowest.saturating_add(range) - 1,
            _ => u64::MAX,
        }
    }
}

/// A histogram's non-zero buckets in index order.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Sparse {
    layout: Layout,
    /// (bucket index, count), indexes rising, counts above zero.
    buckets: Vec<(u32, u64)>,
}

impl Sparse {
    /// Read a histogram written by [`super::encode_histogram`] (base64 of the V2 compressed
    /// encoding); `None` when it is not one this reader knows.
    pub(crate) fn decode(text: &str) -> Option<Sparse> {
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(text)
            .ok()?;
        Self::decode_plain(&v2_plain(&bytes)?)
    }

    fn decode_plain(b: &[u8]) -> Option<Sparse> {
        let (layout, payload) = header(b)?;
        let mut buckets = Vec::new();
        each_bucket(payload, layout.len, |index, n| buckets.push((index, n)))?;
        Some(Sparse { layout, buckets })
    }

    /// The sum of the histograms encoded in `texts` (as [`Sparse::decode`] reads them, all of
    /// one layout, else `None`) and how many values each holds. Each one's counts are added
    /// straight into one array of counts as they are read (no list of buckets per histogram,
    /// no merging of lists): what merging hosts' timelines spends most of its time on.
    pub(crate) fn sum_decoded(texts: &[&str]) -> Option<(Sparse, Vec<u64>)> {
        DENSE.with(|dense| {
            let mut dense = dense.borrow_mut();
            let counts = &mut *dense;
            let mut first: Option<Layout> = None;
            let mut lens = Vec::with_capacity(texts.len());
            let (mut lo, mut hi) = (u32::MAX, 0u32);
            let mut read = || -> Option<()> {
                for text in texts {
                    let bytes = base64::engine::general_purpose::STANDARD
                        .decode(text)
                        .ok()?;
                    let plain = v2_plain(&bytes)?;
                    let (layout, payload) = header(&plain)?;
                    if *first.get_or_insert(layout) != layout || layout.len > MAX_DENSE {
                        return None;
                    }
                    // One slot more than the layout's buckets: see `add_payload`.
                    let slots = layout.len as usize + 1;
                    if counts.len() < slots {
                        counts.resize(slots, 0);
                    }
                    let counts = &mut counts[..slots];
                    lens.push(add_payload(payload, counts, (&mut lo, &mut hi))?);
                }
                Some(())
            };
            let done = read();
            // The counts go back to zero for the next sum, whatever happened.
            let mut buckets = Vec::new();
            if lo <= hi {
                for (index, c) in counts[lo as usize..=hi as usize].iter_mut().enumerate() {
                    if *c > 0 {
                        buckets.push((lo + index as u32, std::mem::take(c)));
                    }
                }
            }
            done?;
            Some((
                Sparse {
                    layout: first?,
                    buckets,
                },
                lens,
            ))
        })
    }

    /// The crate's histogram of these buckets; `None` when a count does not fit its array.
    pub(crate) fn to_histogram(&self) -> Option<hdrhistogram::Histogram<u64>> {
        let l = &self.layout;
        let mut h = hdrhistogram::Histogram::new_with_bounds(l.low, l.high, l.sigfig).ok()?;
        for &(i, n) in &self.buckets {
            h.record_n(l.value_for(i), n).ok()?;
        }
        Some(h)
    }

    /// How many values it holds.
    pub(crate) fn len(&self) -> u64 {
        self.buckets
            .iter()
            .fold(0, |sum, &(_, n)| sum.saturating_add(n))
    }

    /// The sum of `parts`, all of one layout (else `None`). Their order does not matter.
    pub(crate) fn sum(parts: &[Sparse]) -> Option<Sparse> {
        let first = parts.first()?;
        if parts.iter().any(|p| p.layout != first.layout) {
            return None;
        }
        // Sorted lists merged two by two: each bucket is moved log2(parts) times.
        let mut lists: Vec<Vec<(u32, u64)>> = parts.iter().map(|p| p.buckets.clone()).collect();
        while lists.len() > 1 {
            let mut next = Vec::with_capacity(lists.len().div_ceil(2));
            let mut it = lists.into_iter();
            while let Some(a) = it.next() {
                next.push(match it.next() {
                    Some(b) => merge_sorted(&a, &b),
                    None => a,
                });
            }
            lists = next;
        }
        Some(Sparse {
            layout: first.layout,
            buckets: lists.pop().unwrap_or_default(),
        })
    }

    /// The value at each of `quantiles` (rising), as [`super::percentile`] reads them from the
    /// crate's histogram: the highest value of the bucket where the rank falls.
    pub(crate) fn percentiles<const N: usize>(&self, quantiles: [f64; N]) -> [u64; N] {
        let total = self.len();
        let mut out = [0; N];
        if total == 0 {
            return out;
        }
        let mut seen = 0u64;
        let mut at = self.buckets.iter();
        let mut current: Option<u32> = None;
        for (slot, q) in out.iter_mut().zip(quantiles) {
            let rank = percentile_rank(total, q);
            while seen < rank {
                let Some(&(i, n)) = at.next() else { break };
                seen = seen.saturating_add(n);
                current = Some(i);
            }
            *slot = current.map_or(0, |i| self.layout.highest_for(i));
        }
        out
    }

    /// Base64 of the V2 compressed encoding, byte for byte what [`super::encode_histogram`]
    /// writes for the same histogram.
    pub(crate) fn encode(&self) -> String {
        self.encode_plain()
            .map_or_else(String::new, |plain| compress(&plain))
    }

    /// The V2 encoding, uncompressed; `None`, as the crate fails, for a count above
    /// `i64::MAX` (the encoding's counts are signed).
    fn encode_plain(&self) -> Option<Vec<u8>> {
        let mut plain = Vec::with_capacity(V2_HEADER + 2 * self.buckets.len() + 9);
        plain.extend_from_slice(&V2_COOKIE.to_be_bytes());
        plain.extend_from_slice(&0u32.to_be_bytes()); // the payload's length, below
        plain.extend_from_slice(&0u32.to_be_bytes());
        plain.extend_from_slice(&u32::from(self.layout.sigfig).to_be_bytes());
        plain.extend_from_slice(&self.layout.low.to_be_bytes());
        plain.extend_from_slice(&self.layout.high.to_be_bytes());
        plain.extend_from_slice(&1.0f64.to_be_bytes());
        let mut next = 0u32;
        for &(i, n) in &self.buckets {
            match i - next {
                0 => {}
                // One empty bucket is written as a count of 0, a longer run as its length.
                1 => varint_write(0, &mut plain),
                run => varint_write(zig_zag_encode(-i64::from(run)), &mut plain),
            }
            varint_write(zig_zag_encode(i64::try_from(n).ok()?), &mut plain);
            next = i + 1;
        }
        if self.buckets.is_empty() {
            varint_write(0, &mut plain); // the crate writes index 0 of an empty histogram
        }
        let payload = (plain.len() - V2_HEADER) as u32;
        plain[4..8].copy_from_slice(&payload.to_be_bytes());
        Some(plain)
    }
}

/// Base64 of the V2 compressed encoding of a V2 encoding (empty if zlib fails).
fn compress(plain: &[u8]) -> String {
    let mut out = Vec::with_capacity(8 + plain.len() / 2);
    out.extend_from_slice(&V2_COMPRESSED_COOKIE.to_be_bytes());
    out.extend_from_slice(&0u32.to_be_bytes());
    if !ZLIB.with(|z| z.borrow_mut().deflate(plain, &mut out)) {
        return String::new();
    }
    let compressed = (out.len() - 8) as u32;
    out[4..8].copy_from_slice(&compressed.to_be_bytes());
    base64::engine::general_purpose::STANDARD.encode(&out)
}

/// The most bytes a V2 encoding is inflated to: the widest layout the crate allows (1 to
/// 2^64 at 5 digits, 3.2 million buckets) takes 29 MB at 9 bytes a bucket.
const MAX_PLAIN: usize = 32 << 20;

/// The uncompressed V2 encoding in `bytes` (V2, or V2 compressed and inflated here), when its
/// header's payload length is what follows it; `None` for anything else. The crate's reader
/// sizes a buffer by that declared length before reading, so a report's few bytes could
/// otherwise make it allocate gigabytes.
fn v2_plain(bytes: &[u8]) -> Option<std::borrow::Cow<'_, [u8]>> {
    let plain = match be_u32(bytes, 0)? {
        V2_COOKIE => std::borrow::Cow::Borrowed(bytes),
        V2_COMPRESSED_COOKIE => {
            let len = be_u32(bytes, 4)? as usize;
            let compressed = bytes.get(8..8usize.checked_add(len)?)?;
            std::borrow::Cow::Owned(ZLIB.with(|z| z.borrow_mut().inflate(compressed))?)
        }
        _ => return None,
    };
    let payload = be_u32(&plain, 4)? as usize;
    (plain.len().checked_sub(V2_HEADER)? == payload && be_u32(&plain, 0)? == V2_COOKIE)
        .then_some(plain)
}

/// The layout and the payload of an uncompressed V2 encoding; `None` for one this reader
/// does not know.
fn header(b: &[u8]) -> Option<(Layout, &[u8])> {
    if be_u32(b, 0)? != V2_COOKIE || be_u32(b, 8)? != 0 {
        return None; // another cookie, or a normalizing offset this reader does not apply
    }
    let payload = be_u32(b, 4)? as usize;
    let sigfig = u8::try_from(be_u32(b, 12)?).ok()?;
    let low = be_u64(b, 16)?;
    let high = be_u64(b, 24)?;
    if f64::from_bits(be_u64(b, 32)?) != 1.0 {
        return None;
    }
    let layout = Layout::new(low, high, sigfig)?;
    Some((layout, b.get(V2_HEADER..V2_HEADER.checked_add(payload)?)?))
}

/// Every non-zero bucket of a V2 payload, in index order, as `(index, count)`; `None` (after
/// some calls, maybe) when the payload is not an encoder's for `len` buckets.
fn each_bucket(mut rest: &[u8], len: u64, mut bucket: impl FnMut(u32, u64)) -> Option<()> {
    let mut index: u64 = 0;
    while !rest.is_empty() {
        let n = zig_zag_decode(varint_read(&mut rest)?);
        if n < 0 {
            index = index.checked_add(n.unsigned_abs())?;
            if index > len {
                return None; // empty buckets past the last: not an encoder's
            }
        } else {
            if n > 0 {
                // A count past the layout's last bucket: the crate refuses it too.
                if index >= len {
                    return None;
                }
                bucket(u32::try_from(index).ok()?, n as u64);
            }
            index += 1;
        }
    }
    Some(())
}

/// A V2 payload's counts added into `counts` (a slot per bucket of its layout, and one more
/// that only ever receives 0), as [`each_bucket`] reads them: how many values it held, `None`
/// when it is not an encoder's. Whatever happens, the span `lo..=hi` is widened to every
/// bucket it added to, so that a payload failing halfway leaves nothing behind once the
/// caller clears the span. Merging long timelines is mostly this loop, and whether a byte
/// is a count or a run of empty buckets is a coin toss in a latency histogram: a one-byte
/// varint (nearly all of them) is taken without a branch on which it is.
fn add_payload(rest: &[u8], counts: &mut [u64], (lo, hi): (&mut u32, &mut u32)) -> Option<u64> {
    // The last slot takes the zero counts met at or past `len`: no branch guards the add.
    let len = counts.len() - 1;
    let (mut index, mut held) = (0usize, 0u64);
    let (mut first, mut last) = (usize::MAX, 0usize);
    let mut ok = true;
    let mut at = 0;
    while let Some(&byte) = rest.get(at) {
        if byte < 0x80 {
            at += 1;
            // Zigzag: an odd byte is a run of (byte + 1) / 2 empty buckets, an even one a
            // count of byte / 2.
            let v = usize::from(byte);
            let odd = v & 1;
            let half = (v + 1) >> 1;
            let count = half & odd.wrapping_sub(1);
            let next = index + (half & odd.wrapping_neg()) + (odd ^ 1);
            // A count past the last bucket, or a run past it: not an encoder's.
            if ((count != 0) & (index >= len)) | ((odd == 1) & (next > len)) {
                ok = false;
                break;
            }
            let slot = &mut counts[index.min(len)];
            *slot = slot.saturating_add(count as u64);
            held = held.saturating_add(count as u64);
            let touched = if count != 0 { index } else { usize::MAX };
            first = first.min(touched);
            last = if count != 0 { index } else { last }; // indexes rise
            index = next;
            continue;
        }
        let mut tail = &rest[at..];
        let Some(v) = varint_read_long(&mut tail) else {
            ok = false;
            break;
        };
        at = rest.len() - tail.len();
        let n = zig_zag_decode(v);
        if n < 0 {
            match usize::try_from(n.unsigned_abs())
                .ok()
                .and_then(|run| index.checked_add(run))
            {
                // Empty buckets past the last: not an encoder's.
                Some(next) if next <= len => index = next,
                _ => {
                    ok = false;
                    break;
                }
            }
        } else {
            if n > 0 {
                // A count past the layout's last bucket: the crate refuses it too.
                if index >= len {
                    ok = false;
                    break;
                }
                counts[index] = counts[index].saturating_add(n as u64);
                held = held.saturating_add(n as u64);
                first = first.min(index);
                last = index;
            }
            index += 1;
        }
    }
    if first <= last {
        // Both below `len`, which is at most MAX_DENSE.
        *lo = (*lo).min(first as u32);
        *hi = (*hi).max(last as u32);
    }
    ok.then_some(held)
}

/// The widest layout [`Sparse::sum_decoded`] adds in an array of counts (2 MB a thread);
/// wider ones (1 ns to an hour at 3 digits is 33,000 buckets) go through lists.
const MAX_DENSE: u64 = 1 << 18;

thread_local! {
    // Zeroed between sums: only the span a sum touched is cleared.
    static DENSE: std::cell::RefCell<Vec<u64>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Two lists of (bucket, count), indexes rising, as one.
fn merge_sorted(a: &[(u32, u64)], b: &[(u32, u64)]) -> Vec<(u32, u64)> {
    let mut out = Vec::with_capacity(a.len() + b.len());
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        let ((x, m), (y, n)) = (a[i], b[j]);
        match x.cmp(&y) {
            std::cmp::Ordering::Less => {
                out.push((x, m));
                i += 1;
            }
            std::cmp::Ordering::Greater => {
                out.push((y, n));
                j += 1;
            }
            std::cmp::Ordering::Equal => {
                out.push((x, m.saturating_add(n)));
                i += 1;
                j += 1;
            }
        }
    }
    out.extend_from_slice(&a[i..]);
    out.extend_from_slice(&b[j..]);
    out
}

thread_local! {
    // A zlib state is some 300 KB of tables: made once per thread, not once per histogram.
    static ZLIB: std::cell::RefCell<Zlib> = std::cell::RefCell::new(Zlib {
        compress: flate2::Compress::new(flate2::Compression::default(), true),
        decompress: flate2::Decompress::new(true),
    });
}

/// A thread's zlib compressor and decompressor, reset for each stream.
struct Zlib {
    compress: flate2::Compress,
    decompress: flate2::Decompress,
}

impl Zlib {
    /// One whole zlib stream appended to `out`, as `ZlibEncoder` writes it; false on error.
    fn deflate(&mut self, input: &[u8], out: &mut Vec<u8>) -> bool {
        self.compress.reset();
        loop {
            out.reserve(input.len() / 2 + 64);
            let read = self.compress.total_in() as usize;
            match self
                .compress
                .compress_vec(&input[read..], out, flate2::FlushCompress::Finish)
            {
                Ok(flate2::Status::StreamEnd) => return true,
                Ok(_) => continue,
                Err(_) => return false,
            }
        }
    }

    /// One whole zlib stream inflated; `None` when it is not one.
    fn inflate(&mut self, input: &[u8]) -> Option<Vec<u8>> {
        self.decompress.reset(true);
        let mut out = Vec::with_capacity(4 * input.len() + 64);
        loop {
            let read = self.decompress.total_in() as usize;
            let before = (self.decompress.total_in(), self.decompress.total_out());
            // Not `Finish`, which needs all the output to fit in one call.
            match self.decompress.decompress_vec(
                &input[read..],
                &mut out,
                flate2::FlushDecompress::None,
            ) {
                Ok(flate2::Status::StreamEnd) => return Some(out),
                Ok(_) if out.len() >= MAX_PLAIN => return None,
                Ok(_) if out.len() == out.capacity() => out.reserve(out.capacity()),
                // No room was lacking and nothing moved: the stream is cut short.
                Ok(_) if before == (self.decompress.total_in(), self.decompress.total_out()) => {
                    return None
                }
                Ok(_) => continue,
                Err(_) => return None,
            }
        }
    }
}

fn be_u32(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_be_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

fn be_u64(b: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_be_bytes(b.get(at..at + 8)?.try_into().ok()?))
}

fn zig_zag_encode(n: i64) -> u64 {
    ((n << 1) ^ (n >> 63)) as u64
}

fn zig_zag_decode(n: u64) -> i64 {
    ((n >> 1) as i64) ^ -((n & 1) as i64)
}

/// HdrHistogram's LEB128 variant: up to 8 bytes of 7 bits, then a 9th of 8 bits.
fn varint_write(mut n: u64, out: &mut Vec<u8>) {
    for _ in 0..8 {
        if n < 0x80 {
            out.push(n as u8);
            return;
        }
        out.push((n as u8 & 0x7f) | 0x80);
        n >>= 7;
    }
    out.push(n as u8);
}

#[inline(always)]
fn varint_read(b: &mut &[u8]) -> Option<u64> {
    // Most of a latency histogram's counts and gaps are below 64: one byte.
    if let Some((&byte, rest)) = b.split_first() {
        if byte < 0x80 {
            *b = rest;
            return Some(u64::from(byte));
        }
    }
    varint_read_long(b)
}

#[inline(never)]
fn varint_read_long(b: &mut &[u8]) -> Option<u64> {
    let mut n = 0u64;
    for k in 0..8 {
        let (&byte, rest) = b.split_first()?;
        *b = rest;
        n |= u64::from(byte & 0x7f) << (7 * k);
        if byte < 0x80 {
            return Some(n);
        }
    }
    let (&byte, rest) = b.split_first()?;
    *b = rest;
    Some(n | (u64::from(byte) << 56))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::{decode_histogram, encode_histogram, percentile};
    use hdrhistogram::Histogram;

    /// Deterministic pseudo-random values (SplitMix64), spread over many magnitudes.
    fn values(seed: u64, n: usize) -> Vec<u64> {
        let mut x = seed;
        (0..n)
            .map(|_| {
                x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
                let mut z = x;
                z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
                z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
                z ^= z >> 31;
                // 1 ns to about 1 h, log-uniform.
                (1 + (z % 3_600_000_000_000)) >> (z % 42)
            })
            .collect()
    }

    /// A histogram as the engine makes them: 1 ns to 1 h, 3 significant digits.
    fn empty() -> Histogram<u64> {
        Histogram::new_with_bounds(1, 3_600_000_000_000, 3).unwrap()
    }

    fn histogram(seed: u64, n: usize) -> Histogram<u64> {
        let mut h = empty();
        for v in values(seed, n) {
            h.record(v.max(1)).unwrap();
        }
        h
    }

    /// The crate's own reading of an encoding (which `decode_histogram` no longer uses).
    fn crate_decode(text: &str) -> Option<Histogram<u64>> {
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(text)
            .ok()?;
        hdrhistogram::serialization::Deserializer::new()
            .deserialize(&mut bytes.as_slice())
            .ok()
    }

    const QS: [f64; 9] = [0.0, 0.001, 0.25, 0.5, 0.9, 0.99, 0.999, 0.9999, 1.0];

    #[test]
    fn it_encodes_decodes_and_ranks_as_the_crate_does() {
        let mut dense = empty(); // 1,000 buckets in a row: it inflates to 30x its size
        for us in 101..=1100u64 {
            dense.record(us * 1000).unwrap();
        }
        let cases = [(1, 0), (2, 1), (3, 2), (4, 17), (5, 1000), (6, 50_000)];
        for (seed, h) in cases
            .iter()
            .map(|&(seed, n)| (seed, histogram(seed, n)))
            .chain([(0, dense)])
        {
            let n = h.len();
            let text = encode_histogram(&h);
            let s = Sparse::decode(&text).expect("our own encoding");
            assert_eq!(s.to_histogram().as_ref(), Some(&h));
            assert_eq!(crate_decode(&text).as_ref(), Some(&h));
            assert_eq!(s.len(), h.len(), "seed {seed}");
            // Byte for byte the crate's encoding, so other HdrHistogram readers read it too.
            assert_eq!(s.encode(), text, "seed {seed}, {n} values");
            let want: Vec<u64> = QS.iter().map(|&q| percentile(&h, q)).collect();
            assert_eq!(s.percentiles(QS).to_vec(), want, "seed {seed}, {n} values");
            assert_eq!(s.layout.len, h.distinct_values() as u64);
            for &(i, _) in &s.buckets {
                let v = s.layout.value_for(i);
                assert_eq!(h.lowest_equivalent(v), v);
                assert_eq!(h.highest_equivalent(v), s.layout.highest_for(i));
            }
        }
    }

    #[test]
    fn a_sum_is_the_crates_sum() {
        let parts: Vec<Histogram<u64>> = (10..26).map(|seed| histogram(seed, 300)).collect();
        let mut total = empty();
        for h in &parts {
            total.add(h).unwrap();
        }
        let sparse: Vec<Sparse> = parts
            .iter()
            .map(|h| Sparse::decode(&encode_histogram(h)).unwrap())
            .collect();
        let sum = Sparse::sum(&sparse).unwrap();
        assert_eq!(sum.encode(), encode_histogram(&total));
        assert_eq!(decode_histogram(&sum.encode()).unwrap(), total);
        let want: Vec<u64> = QS.iter().map(|&q| percentile(&total, q)).collect();
        assert_eq!(sum.percentiles(QS).to_vec(), want);
        // Added in one array of counts, as merging rows does: the same sum, each one's size.
        let texts: Vec<String> = parts.iter().map(encode_histogram).collect();
        let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
        let lens: Vec<u64> = parts.iter().map(|h| h.len()).collect();
        for _ in 0..2 {
            // Twice: the array is back to zero after a sum.
            assert_eq!(
                Sparse::sum_decoded(&refs),
                Some((sum.clone(), lens.clone()))
            );
        }
        // One it cannot read ends the sum (`None`) and leaves the array clean.
        let bad: Vec<&str> = vec![refs[0], "AAAA", refs[1]];
        assert_eq!(Sparse::sum_decoded(&bad), None);
        let two = Sparse::sum(&sparse[..2]).unwrap();
        assert_eq!(
            Sparse::sum_decoded(&refs[..2]),
            Some((two, lens[..2].to_vec()))
        );
        // One that fails halfway, after a count was added (found by fuzz/histogram): the
        // count it added is cleared too.
        let layout = sparse[0].layout;
        let halfway = Sparse {
            layout,
            buckets: vec![(layout.len as u32 - 1, 7), (layout.len as u32, 1)],
        };
        assert_eq!(Sparse::sum_decoded(&[refs[0], &halfway.encode()]), None);
        assert_eq!(
            Sparse::sum_decoded(&refs),
            Some((sum.clone(), lens.clone()))
        );
        // The next sum to touch that last bucket finds it empty.
        let last = Sparse {
            layout,
            buckets: vec![(layout.len as u32 - 1, 1)],
        };
        assert_eq!(
            Sparse::sum_decoded(&[&last.encode()]),
            Some((last.clone(), vec![1]))
        );
        // Another layout among them: not one sum.
        let mut other = Histogram::<u64>::new_with_bounds(1000, 10_000_000, 2).unwrap();
        other.record(5_000).unwrap();
        let other = encode_histogram(&other);
        assert_eq!(Sparse::sum_decoded(&[refs[0], other.as_str()]), None);
        assert_eq!(Sparse::sum_decoded(&refs), Some((sum, lens)));
    }

    #[test]
    fn other_layouts_and_other_bytes_are_left_to_the_crate() {
        let mut other = Histogram::<u64>::new_with_bounds(1000, 10_000_000, 2).unwrap();
        other.record(5_000).unwrap();
        let s = Sparse::decode(&encode_histogram(&other)).unwrap();
        assert_eq!(s.encode(), encode_histogram(&other));
        assert_eq!(s.layout.len, other.distinct_values() as u64);
        // A count past the last bucket of its layout: refused, as the crate refuses it.
        let mut past = s.clone();
        past.buckets = vec![(s.layout.len as u32, 1)];
        assert!(Sparse::decode(&past.encode()).is_none());
        assert!(decode_histogram(&past.encode()).is_none());
        past.buckets = vec![(s.layout.len as u32 - 1, 1)];
        assert!(Sparse::decode(&past.encode()).is_some());
        assert!(decode_histogram(&past.encode()).is_some());
        let ours = Sparse::decode(&encode_histogram(&histogram(1, 10))).unwrap();
        assert!(Sparse::sum(&[ours, s]).is_none(), "different layouts");
        for bad in [
            "",
            "not base64!",
            "AAAA",
            "HISTFAAAACh42pNpmSzMwMDAxAABzFCaEUzK",
        ] {
            assert!(Sparse::decode(bad).is_none(), "{bad}");
        }
        // A zlib stream cut short, its length field saying so: refused, not waited on.
        let b64 = &base64::engine::general_purpose::STANDARD;
        let whole = b64.decode(encode_histogram(&histogram(7, 5000))).unwrap();
        for cut in [9, whole.len() / 2, whole.len() - 1] {
            let mut part = whole[..cut].to_vec();
            let len = (cut - 8) as u32;
            part[4..8].copy_from_slice(&len.to_be_bytes());
            assert!(Sparse::decode(&b64.encode(&part)).is_none(), "cut at {cut}");
        }
    }

    #[test]
    fn the_widest_layouts_read_and_rank_as_the_crates() {
        for (low, sigfig) in [(1, 2), (1 << 20, 3), (1 << 40, 1)] {
            let mut h = Histogram::<u64>::new_with_bounds(low, u64::MAX, sigfig).unwrap();
            for v in [low, low * 3, 1 << 50, 1 << 62, u64::MAX / 2, u64::MAX] {
                h.record(v).unwrap();
            }
            let text = encode_histogram(&h);
            let s = Sparse::decode(&text).unwrap();
            assert_eq!(s.layout.len, h.distinct_values() as u64);
            assert_eq!(s.encode(), text);
            let want: Vec<u64> = QS.iter().map(|&q| percentile(&h, q)).collect();
            assert_eq!(
                s.percentiles(QS).to_vec(),
                want,
                "low {low}, {sigfig} digits"
            );
        }
    }

    #[test]
    fn what_it_reads_of_damaged_bytes_the_crate_reads_the_same() {
        // Encodings with bytes changed (header and counts), whole zlib streams around them:
        // each is refused by this reader, or read as the crate reads it.
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let (mut read, mut refused) = (0, 0);
        for seed in 0..40 {
            let s = Sparse::decode(&encode_histogram(&histogram(seed, 200))).unwrap();
            let plain = s.encode_plain().unwrap();
            for _ in 0..50 {
                let mut bad = plain.clone();
                for _ in 0..1 + next() % 3 {
                    let at = (next() % bad.len() as u64) as usize;
                    bad[at] = next() as u8;
                }
                let text = compress(&bad);
                match Sparse::decode(&text) {
                    Some(ours) => {
                        read += 1;
                        let crates = crate_decode(&text).expect("the crate reads it too");
                        assert_eq!(decode_histogram(&text).as_ref(), Some(&crates));
                        assert_eq!(ours.len(), crates.len());
                        assert_eq!(ours.encode(), encode_histogram(&crates));
                        let want: Vec<u64> = QS.iter().map(|&q| percentile(&crates, q)).collect();
                        assert_eq!(ours.percentiles(QS).to_vec(), want);
                    }
                    None => refused += 1,
                }
            }
        }
        // Both kinds happened: the test saw damaged encodings read and refused.
        assert!(
            read > 100 && refused > 100,
            "{read} read, {refused} refused"
        );
    }

    #[test]
    fn a_count_past_i64_is_not_encoded_as_the_crate_does_not() {
        // Found by the `histogram` fuzz target: a sum was written capped where the crate
        // writes nothing.
        let half = (i64::MAX as u64) / 2 + 1;
        let mut h = empty();
        h.record_n(1000, half).unwrap();
        let one = Sparse::decode(&encode_histogram(&h)).unwrap();
        let sum = Sparse::sum(&[one.clone(), one]).unwrap();
        h.add(h.clone()).unwrap();
        assert_eq!(encode_histogram(&h), "");
        assert_eq!(sum.encode(), "");
    }

    #[test]
    fn a_declared_length_must_be_what_follows() {
        // Found by the `histogram` fuzz target: the crate's reader allocated the payload
        // length a header declared (4 GB) before finding a few bytes behind it.
        let mut plain = Sparse::decode(&encode_histogram(&histogram(3, 50)))
            .unwrap()
            .encode_plain()
            .unwrap();
        let real = u32::from_be_bytes(plain[4..8].try_into().unwrap());
        for declared in [0xf700_0000u32, real + 1, real - 1] {
            plain[4..8].copy_from_slice(&declared.to_be_bytes());
            let text = compress(&plain);
            assert!(Sparse::decode(&text).is_none(), "{declared}");
            assert!(decode_histogram(&text).is_none(), "{declared}");
            // The same, uncompressed.
            let raw = base64::engine::general_purpose::STANDARD.encode(&plain);
            assert!(decode_histogram(&raw).is_none(), "{declared}");
        }
        plain[4..8].copy_from_slice(&real.to_be_bytes());
        let raw = base64::engine::general_purpose::STANDARD.encode(&plain);
        assert_eq!(decode_histogram(&raw), decode_histogram(&compress(&plain)));
        assert!(decode_histogram(&raw).is_some());
    }

    #[test]
    fn a_zero_run_of_i64_min_is_refused_not_a_panic() {
        // Found by the `histogram` fuzz target: the crate's reader negates a run's length,
        // which panics on i64::MIN (overflow checks) where respload must refuse the histogram.
        let mut plain = Sparse::decode(&encode_histogram(&histogram(3, 50)))
            .unwrap()
            .encode_plain()
            .unwrap();
        assert!(decode_histogram(&compress(&plain)).is_some());
        varint_write(zig_zag_encode(i64::MIN), &mut plain);
        let payload = (plain.len() - V2_HEADER) as u32;
        plain[4..8].copy_from_slice(&payload.to_be_bytes());
        let text = compress(&plain);
        assert!(Sparse::decode(&text).is_none());
        assert!(decode_histogram(&text).is_none());
    }

    #[test]
    fn varints_round_trip_at_every_length() {
        for n in [
            0,
            1,
            127,
            128,
            16_383,
            16_384,
            1 << 49,
            1 << 56,
            u64::MAX - 1,
            u64::MAX,
        ] {
            let mut out = Vec::new();
            varint_write(n, &mut out);
            assert!(out.len() <= 9);
            let mut b = out.as_slice();
            assert_eq!(varint_read(&mut b), Some(n));
            assert!(b.is_empty());
        }
        for n in [0i64, 1, -1, i64::MAX, i64::MIN] {
            assert_eq!(zig_zag_decode(zig_zag_encode(n)), n);
        }
    }
}
