//! Which values: `[values]`.

use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{json, Value as Json};

/// Value size: fixed, a uniform range, or a weighted list.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema), schemars(untagged))]
pub enum ValueSize {
    /// Every value has this many bytes (`size = 32`).
    Fixed(u32),
    /// Sizes drawn uniformly from `[min, max]`, both included (`size = [100, 1000]`), or
    /// following the key number with `size_follows_key`.
    Range([u32; 2]),
    /// Sizes drawn by weight from `[[size, weight], ...]` (`size = [[100, 3], [1000, 1]]`).
    List(Vec<[u32; 2]>),
}

impl ValueSize {
    /// Smallest and largest size.
    pub fn bounds(&self) -> (u32, u32) {
        match self {
            ValueSize::Fixed(n) => (*n, *n),
            ValueSize::Range([a, b]) => (*a, *b),
            ValueSize::List(list) => (
                list.iter().map(|e| e[0]).min().unwrap_or(0),
                list.iter().map(|e| e[0]).max().unwrap_or(0),
            ),
        }
    }

    fn from_json(v: &Json) -> Result<Self, String> {
        let num = |v: &Json| {
            v.as_u64()
                .filter(|&n| n <= u32::MAX as u64)
                .map(|n| n as u32)
        };
        let pair = |v: &Json| match v.as_array().map(Vec::as_slice) {
            Some([a, b]) => Some([num(a)?, num(b)?]),
            _ => None,
        };
        const ALLOWED: &str = "a number of bytes, [min, max], or [[size, weight], ...]";
        if let Some(n) = num(v) {
            return Ok(ValueSize::Fixed(n));
        }
        if let Some(p) = pair(v) {
            return Ok(ValueSize::Range(p));
        }
        match v.as_array() {
            Some(items) if !items.is_empty() && items.iter().all(Json::is_array) => items
                .iter()
                .map(|e| pair(e).ok_or_else(|| format!("{e} is not a [size, weight] pair")))
                .collect::<Result<Vec<_>, _>>()
                .map(ValueSize::List),
            _ => Err(format!("{v} is not a size: allowed are {ALLOWED}")),
        }
    }
}

impl Serialize for ValueSize {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            ValueSize::Fixed(n) => json!(n),
            ValueSize::Range(r) => json!(r),
            ValueSize::List(l) => json!(l),
        }
        .serialize(s)
    }
}

impl<'de> Deserialize<'de> for ValueSize {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        ValueSize::from_json(&Json::deserialize(d)?).map_err(D::Error::custom)
    }
}

/// What values are made of.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, Default)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum ValueData {
    /// Random printable bytes (letters and digits).
    #[default]
    Random,
    /// The byte `x` repeated, as redis-benchmark and memtier_benchmark (without `-R`) send.
    Fixed,
    /// Random bytes and runs of `x` mixed so that the value compresses by about
    /// `compression_ratio`.
    Compressible,
}

/// Values written by SET and friends (`[values]` in a spec).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct Values {
    /// Size in bytes (default 32, like memtier_benchmark).
    #[serde(default = "default_size")]
    pub size: ValueSize,
    /// With a `[min, max]` size: the size grows with the key number, from `min` at the
    /// range's first key to `max` at its last (memtier's `--data-size-pattern=S`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub size_follows_key: bool,
    /// Content (default random).
    #[serde(default)]
    pub data: ValueData,
    /// With `data = "compressible"`: original size / compressed size aimed at (default 2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compression_ratio: Option<f64>,
    /// Fill every value afresh for each request instead of cutting it from a pre-filled pool
    /// at a random offset (costs client CPU; use when the server deduplicates or caches).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub fresh: bool,
    /// `[min, max]` seconds: the built-in `set` sends `EX` with a uniform random TTL from
    /// this range (memtier's `--expiry-range`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expiry: Option<[u64; 2]>,
}

fn default_size() -> ValueSize {
    ValueSize::Fixed(32)
}

impl Default for Values {
    fn default() -> Self {
        Values {
            size: default_size(),
            size_follows_key: false,
            data: ValueData::default(),
            compression_ratio: None,
            fresh: false,
            expiry: None,
        }
    }
}

/// Largest value size accepted (Redis' proto-max-bulk-len default).
pub const MAX_VALUE_SIZE: u32 = 512 * 1024 * 1024;

impl Values {
    /// The compression ratio aimed at with compressible data.
    pub fn ratio(&self) -> f64 {
        self.compression_ratio.unwrap_or(2.0)
    }

    pub(crate) fn validate(&self, p: &str) -> crate::Result<()> {
        let err = |field: &str, m: String| Err(crate::Error::spec(format!("{p}values.{field}"), m));
        let (lo, hi) = self.size.bounds();
        if let ValueSize::Range([a, b]) = self.size {
            if a > b {
                return err(
                    "size",
                    format!("[{a}, {b}]: the first number must not exceed the second"),
                );
            }
        }
        if let ValueSize::List(list) = &self.size {
            if let Some(e) = list.iter().find(|e| e[1] == 0 || e[1] > 1_000_000) {
                return err(
                    "size",
                    format!(
                        "weight {} of size {} is out of range: allowed is 1 to 1000000",
                        e[1], e[0]
                    ),
                );
            }
        }
        if lo == 0 || hi > MAX_VALUE_SIZE {
            let bad = if lo == 0 { lo } else { hi };
            return err(
                "size",
                format!("{bad} is out of range: allowed is 1 to {MAX_VALUE_SIZE} bytes"),
            );
        }
        if self.size_follows_key && !matches!(self.size, ValueSize::Range(_)) {
            return err(
                "size_follows_key",
                "needs a size range: set values.size = [min, max]".into(),
            );
        }
        if let Some(r) = self.compression_ratio {
            if self.data != ValueData::Compressible {
                return err(
                    "compression_ratio",
                    "applies to data = \"compressible\" only".into(),
                );
            }
            if !(1.0..=64.0).contains(&r) {
                return err(
                    "compression_ratio",
                    format!("{r} is out of range: allowed is 1 to 64"),
                );
            }
        }
        if let Some([a, b]) = self.expiry {
            if a > b || b == 0 || b > u32::MAX as u64 {
                return err(
                    "expiry",
                    format!(
                        "[{a}, {b}]: allowed are whole seconds 0 <= min <= max, max from 1 to \
                         4294967295 (a drawn 0 sends that SET without expiry)"
                    ),
                );
            }
        }
        Ok(())
    }
}
