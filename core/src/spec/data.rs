//! Which keys and values: `[keys]` and `[values]`.

use serde::{Deserialize, Serialize};

/// How keys are chosen from the range.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum Distribution {
    /// Each key of the range in order, shared by all connections, wrapping at the end:
    /// N requests over a range of N keys touch every key exactly once.
    Sequential,
    /// Uniformly random over the range.
    #[default]
    Uniform,
}

/// The key space (`[keys]` in a spec).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Keys {
    /// Text before the key number (default `key:`).
    #[serde(default = "default_prefix")]
    pub prefix: String,
    /// Smallest and largest key number, both included (default `[0, 99999]`).
    #[serde(default = "default_range")]
    pub range: [u64; 2],
    /// Zero-pad key numbers to this many digits (redis-benchmark uses 12).
    #[serde(default)]
    pub pad: u8,
    /// How keys are picked (default uniform).
    #[serde(default)]
    pub distribution: Distribution,
}

fn default_prefix() -> String {
    "key:".into()
}
fn default_range() -> [u64; 2] {
    [0, 99_999]
}

impl Default for Keys {
    fn default() -> Self {
        Keys {
            prefix: default_prefix(),
            range: default_range(),
            pad: 0,
            distribution: Distribution::default(),
        }
    }
}

/// Value size: a fixed number of bytes or a uniform range `[min, max]`.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(untagged)]
pub enum ValueSize {
    /// Every value has this many bytes.
    Fixed(u32),
    /// Sizes drawn uniformly from `[min, max]`, both included.
    Range([u32; 2]),
}

impl ValueSize {
    /// Smallest and largest size.
    pub fn bounds(&self) -> (u32, u32) {
        match *self {
            ValueSize::Fixed(n) => (n, n),
            ValueSize::Range([a, b]) => (a, b),
        }
    }
}

/// What values are made of.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum ValueData {
    /// Random printable bytes (letters and digits).
    #[default]
    Random,
}

/// Values written by SET and friends (`[values]` in a spec).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Values {
    /// Size in bytes (default 32, like memtier_benchmark).
    #[serde(default = "default_size")]
    pub size: ValueSize,
    /// Content (default random).
    #[serde(default)]
    pub data: ValueData,
}

fn default_size() -> ValueSize {
    ValueSize::Fixed(32)
}

impl Default for Values {
    fn default() -> Self {
        Values {
            size: default_size(),
            data: ValueData::default(),
        }
    }
}

/// Largest value size accepted (Redis' proto-max-bulk-len default).
pub const MAX_VALUE_SIZE: u32 = 512 * 1024 * 1024;

impl Keys {
    pub(crate) fn validate(&self, p: &str) -> crate::Result<()> {
        let [lo, hi] = self.range;
        if lo > hi {
            return Err(crate::Error::spec(
                format!("{p}keys.range"),
                format!("[{lo}, {hi}]: the first number must not exceed the second"),
            ));
        }
        if hi == u64::MAX {
            return Err(crate::Error::spec(
                format!("{p}keys.range"),
                format!("{hi} is too large: allowed up to {}", u64::MAX - 1),
            ));
        }
        if self.pad > 20 {
            return Err(crate::Error::spec(
                format!("{p}keys.pad"),
                format!("{} is out of range: allowed is 0 to 20", self.pad),
            ));
        }
        Ok(())
    }
}

impl Values {
    pub(crate) fn validate(&self, p: &str) -> crate::Result<()> {
        let (lo, hi) = self.size.bounds();
        if lo > hi {
            return Err(crate::Error::spec(
                format!("{p}values.size"),
                format!("[{lo}, {hi}]: the first number must not exceed the second"),
            ));
        }
        if lo == 0 || hi > MAX_VALUE_SIZE {
            let bad = if lo == 0 { lo } else { hi };
            return Err(crate::Error::spec(
                format!("{p}values.size"),
                format!("{bad} is out of range: allowed is 1 to {MAX_VALUE_SIZE} bytes"),
            ));
        }
        Ok(())
    }
}
