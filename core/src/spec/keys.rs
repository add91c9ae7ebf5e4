//! Which keys: `[keys]` and the key distributions.

use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{json, Map, Value as Json};
use std::sync::Arc;

/// How a command picks its key from the range.
///
/// Written as a name (`"zipf"`, parameters at their defaults) or a table with a `kind`
/// (`{ kind = "gaussian", median = 500, stddev = 100 }`).
#[derive(Debug, Clone, PartialEq, Default)]
#[cfg_attr(
    feature = "schema",
    derive(schemars::JsonSchema),
    schemars(
        tag = "kind",
        rename_all = "snake_case",
        deny_unknown_fields,
        transform = super::schema::named_or_table
    )
)]
pub enum Distribution {
    /// Each key of the range in order, one counter shared by all connections, wrapping at
    /// the end: N requests over a range of N keys touch every key exactly once.
    Sequential,
    /// Uniformly random over the range.
    #[default]
    Uniform,
    /// Each connection walks its own contiguous slice of the range in order (memtier's `P`):
    /// with `load.requests = "all_keys"` every key is visited exactly once.
    Parallel,
    /// Normal around `median` (default: the middle of the range) with `stddev` (default: a
    /// sixth of the range, as memtier_benchmark); draws outside the range are drawn again.
    Gaussian {
        /// Centre, as a key number.
        median: Option<f64>,
        /// Standard deviation, in keys.
        stddev: Option<f64>,
    },
    /// Zipf over the range: key rank r (1 = the range's first key) is picked with weight
    /// r^-exponent.
    Zipf {
        /// The exponent s, 0 < s <= 5 (default 1).
        #[cfg_attr(feature = "schema", schemars(extend("exclusiveMinimum" = 0, "maximum" = 5)))]
        exponent: f64,
    },
    /// `hot_ops` of the operations go to the first `hot_keys` of the range, the rest to the
    /// other keys, uniformly within each part.
    Hotset {
        /// Fraction of the range that is hot, 0 < x < 1 (default 0.2).
        #[cfg_attr(
            feature = "schema",
            schemars(extend("exclusiveMinimum" = 0, "exclusiveMaximum" = 1))
        )]
        hot_keys: f64,
        /// Fraction of operations on the hot keys, 0 <= x <= 1 (default 0.8).
        #[cfg_attr(feature = "schema", schemars(range(min = 0, max = 1)))]
        hot_ops: f64,
    },
    /// Given popularity for the range's first keys, a Zipf tail for the rest: the key of
    /// rank r (1 = the range's first) is picked with probability `shares[r-1]`; what the
    /// shares leave (1 minus their sum) goes to the other keys, by Zipf(`tail_exponent`) of
    /// their rank among themselves, or uniformly without `tail_exponent`. When the range
    /// holds no key beyond the shares, the shares are relative weights. What `respload
    /// model` writes for a trace whose most popular keys no single curve follows.
    Empirical {
        /// Probability of each of the range's first keys, most popular first (1 to 100,000
        /// numbers, each 0 to 1, summing to at most 1).
        #[cfg_attr(feature = "schema", schemars(with = "Vec<f64>"))]
        shares: Shares,
        /// Zipf exponent of the tail, 0 < s <= 5; absent: the tail is uniform.
        #[cfg_attr(
            feature = "schema",
            schemars(extend("exclusiveMinimum" = 0, "maximum" = 5))
        )]
        tail_exponent: Option<f64>,
    },
}

/// The shares of an empirical distribution, with their running sums as 64-bit thresholds
/// (computed once, shared by every connection's sampler).
#[derive(Debug, Clone)]
pub struct Shares(Arc<ShareTable>);

#[derive(Debug)]
struct ShareTable {
    shares: Vec<f64>,
    cumulative: Vec<u64>,
}

/// The most shares an empirical distribution may list.
pub const MAX_SHARES: usize = 100_000;

impl Shares {
    /// Shares of the range's first keys, most popular first.
    pub fn new(shares: Vec<f64>) -> Self {
        let mut acc = 0.0f64;
        let cumulative = shares
            .iter()
            .map(|&p| {
                acc += p.max(0.0);
                // 2^64 is u64::MAX + 1: the cast saturates at the top.
                (acc.min(1.0) * 18_446_744_073_709_551_616.0) as u64
            })
            .collect();
        Shares(Arc::new(ShareTable { shares, cumulative }))
    }

    /// The shares, in rank order.
    pub fn as_slice(&self) -> &[f64] {
        &self.0.shares
    }

    /// Their running sums scaled to 2^64: the key of rank i is picked for a draw `u` with
    /// `cumulative[i-1] <= u < cumulative[i]`.
    pub fn cumulative(&self) -> &[u64] {
        &self.0.cumulative
    }

    /// Their sum.
    pub fn total(&self) -> f64 {
        self.0.shares.iter().sum()
    }
}

impl PartialEq for Shares {
    fn eq(&self, other: &Self) -> bool {
        self.0.shares == other.0.shares
    }
}

const KINDS: &str = "sequential, uniform, parallel, gaussian, zipf, hotset, empirical";

impl Distribution {
    fn kind(&self) -> &'static str {
        match self {
            Distribution::Sequential => "sequential",
            Distribution::Uniform => "uniform",
            Distribution::Parallel => "parallel",
            Distribution::Gaussian { .. } => "gaussian",
            Distribution::Zipf { .. } => "zipf",
            Distribution::Hotset { .. } => "hotset",
            Distribution::Empirical { .. } => "empirical",
        }
    }

    fn from_json(value: &Json) -> Result<Self, String> {
        let (kind, table) = match value {
            Json::String(s) => (s.as_str(), Map::new()),
            Json::Object(m) => match m.get("kind") {
                Some(Json::String(k)) => (k.as_str(), m.clone()),
                _ => return Err(format!("a distribution table needs `kind`: one of {KINDS}")),
            },
            other => {
                return Err(format!(
                    "{other} is not a distribution: give a name ({KINDS}) or a table with `kind`"
                ))
            }
        };
        if kind == "empirical" {
            return Self::empirical_from(&table);
        }
        let allowed: &[&str] = match kind {
            "sequential" | "uniform" | "parallel" => &[],
            "gaussian" => &["median", "stddev"],
            "zipf" => &["exponent"],
            "hotset" => &["hot_keys", "hot_ops"],
            other => {
                return Err(format!(
                    "unknown distribution `{other}`: allowed are {KINDS}"
                ))
            }
        };
        let mut params = std::collections::HashMap::new();
        for (k, v) in &table {
            if k == "kind" {
                continue;
            }
            if !allowed.contains(&k.as_str()) {
                return Err(format!(
                    "unknown field `{k}` for a {kind} distribution: allowed are {}",
                    if allowed.is_empty() {
                        "none".to_string()
                    } else {
                        allowed.join(", ")
                    }
                ));
            }
            let x = v
                .as_f64()
                .ok_or_else(|| format!("`{k}` = {v} is not a number"))?;
            params.insert(k.as_str(), x);
        }
        let get = |k: &str| params.get(k).copied();
        Ok(match kind {
            "sequential" => Distribution::Sequential,
            "uniform" => Distribution::Uniform,
            "parallel" => Distribution::Parallel,
            "gaussian" => Distribution::Gaussian {
                median: get("median"),
                stddev: get("stddev"),
            },
            "zipf" => Distribution::Zipf {
                exponent: get("exponent").unwrap_or(1.0),
            },
            _ => Distribution::Hotset {
                hot_keys: get("hot_keys").unwrap_or(0.2),
                hot_ops: get("hot_ops").unwrap_or(0.8),
            },
        })
    }

    /// `{ kind = "empirical", shares = [...], tail_exponent = s }`.
    fn empirical_from(table: &Map<String, Json>) -> Result<Self, String> {
        let mut shares = None;
        let mut tail_exponent = None;
        for (k, v) in table {
            match k.as_str() {
                "kind" => {}
                "shares" => {
                    let list = v
                        .as_array()
                        .ok_or_else(|| format!("`shares` = {v} is not a list of numbers"))?;
                    let nums = list
                        .iter()
                        .enumerate()
                        .map(|(i, x)| {
                            x.as_f64()
                                .ok_or_else(|| format!("`shares[{i}]` = {x} is not a number"))
                        })
                        .collect::<Result<Vec<f64>, String>>()?;
                    shares = Some(nums);
                }
                "tail_exponent" => {
                    tail_exponent = Some(
                        v.as_f64()
                            .ok_or_else(|| format!("`tail_exponent` = {v} is not a number"))?,
                    );
                }
                other => {
                    return Err(format!(
                        "unknown field `{other}` for an empirical distribution: allowed are \
                         shares, tail_exponent"
                    ))
                }
            }
        }
        let shares =
            shares.ok_or("an empirical distribution needs `shares`: a list of probabilities")?;
        Ok(Distribution::Empirical {
            shares: Shares::new(shares),
            tail_exponent,
        })
    }

    fn to_json(&self) -> Json {
        match self {
            Distribution::Gaussian { median, stddev } => {
                let mut m = Map::new();
                m.insert("kind".into(), json!("gaussian"));
                if let Some(x) = median {
                    m.insert("median".into(), json!(x));
                }
                if let Some(x) = stddev {
                    m.insert("stddev".into(), json!(x));
                }
                Json::Object(m)
            }
            Distribution::Zipf { exponent } => json!({ "kind": "zipf", "exponent": exponent }),
            Distribution::Hotset { hot_keys, hot_ops } => {
                json!({ "kind": "hotset", "hot_keys": hot_keys, "hot_ops": hot_ops })
            }
            Distribution::Empirical {
                shares,
                tail_exponent,
            } => {
                let mut m = Map::new();
                m.insert("kind".into(), json!("empirical"));
                m.insert("shares".into(), json!(shares.as_slice()));
                if let Some(s) = tail_exponent {
                    m.insert("tail_exponent".into(), json!(s));
                }
                Json::Object(m)
            }
            plain => json!(plain.kind()),
        }
    }

    /// Check parameters against the key range; `path` names the field.
    pub(crate) fn validate(&self, path: &str, range: [u64; 2]) -> crate::Result<()> {
        let bad = |m: String| Err(crate::Error::spec(path.to_string(), m));
        match *self {
            Distribution::Gaussian { median, stddev } => {
                if let Some(m) = median {
                    if !(m >= range[0] as f64 && m <= range[1] as f64) {
                        return bad(format!(
                            "median {m} is outside keys.range [{}, {}]",
                            range[0], range[1]
                        ));
                    }
                }
                if let Some(s) = stddev {
                    if !(s > 0.0 && s.is_finite()) {
                        return bad(format!("stddev {s} must be a positive number of keys"));
                    }
                }
            }
            Distribution::Zipf { exponent } if !(exponent > 0.0 && exponent <= 5.0) => {
                return bad(format!(
                    "exponent {exponent} is out of range: allowed is 0 < exponent <= 5"
                ));
            }
            Distribution::Hotset { hot_keys, hot_ops } => {
                if !(hot_keys > 0.0 && hot_keys < 1.0) {
                    return bad(format!(
                        "hot_keys {hot_keys} is out of range: allowed is a fraction 0 < x < 1"
                    ));
                }
                if !(0.0..=1.0).contains(&hot_ops) {
                    return bad(format!(
                        "hot_ops {hot_ops} is out of range: allowed is a fraction 0 <= x <= 1"
                    ));
                }
            }
            Distribution::Empirical {
                ref shares,
                tail_exponent,
            } => {
                let list = shares.as_slice();
                let n = list.len();
                if n == 0 || n > MAX_SHARES {
                    return Err(crate::Error::spec(
                        format!("{path}.shares"),
                        format!("{n} shares: allowed are 1 to {MAX_SHARES}"),
                    ));
                }
                if let Some((i, p)) = list
                    .iter()
                    .enumerate()
                    .find(|(_, p)| !(0.0..=1.0).contains(*p))
                {
                    return Err(crate::Error::spec(
                        format!("{path}.shares[{i}]"),
                        format!("{p} is out of range: allowed is a probability 0 <= x <= 1"),
                    ));
                }
                let total = shares.total();
                if total > 1.0 + 1e-6 {
                    return bad(format!(
                        "the shares sum to {total}: allowed is at most 1 (the rest goes to the \
                         keys after them)"
                    ));
                }
                let keys = range[1] - range[0] + 1;
                if (n as u64) > keys {
                    return bad(format!(
                        "{n} shares for a keys.range of {keys} keys [{}, {}]: allowed are at \
                         most as many shares as keys",
                        range[0], range[1]
                    ));
                }
                if total <= 0.0 && n as u64 == keys {
                    return bad(
                        "the shares sum to 0 and the range has no other key: give some share a \
                         positive probability"
                            .to_string(),
                    );
                }
                if let Some(s) = tail_exponent {
                    if !(s > 0.0 && s <= 5.0) {
                        return Err(crate::Error::spec(
                            format!("{path}.tail_exponent"),
                            format!("{s} is out of range: allowed is 0 < exponent <= 5"),
                        ));
                    }
                }
            }
            _ => {}
        }
        Ok(())
    }
}

impl Serialize for Distribution {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.to_json().serialize(s)
    }
}

impl<'de> Deserialize<'de> for Distribution {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let value = Json::deserialize(d)?;
        Distribution::from_json(&value).map_err(D::Error::custom)
    }
}

/// The key space (`[keys]` in a spec).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
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
    /// How writing commands pick keys, instead of `distribution` (memtier's
    /// `--key-pattern=S:R`, first half).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub writes: Option<Distribution>,
    /// How reading commands (GET, HGETALL, LRANGE, ...) pick keys, instead of `distribution`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reads: Option<Distribution>,
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
            writes: None,
            reads: None,
        }
    }
}

impl Keys {
    /// Number of keys in the range.
    pub fn count(&self) -> u64 {
        self.range[1] - self.range[0] + 1
    }

    /// The distribution a command uses: its own, else by whether it reads, else the default.
    pub fn distribution_for(&self, own: Option<Distribution>, reads: bool) -> Distribution {
        own.or_else(|| {
            if reads {
                self.reads.clone()
            } else {
                self.writes.clone()
            }
        })
        .unwrap_or_else(|| self.distribution.clone())
    }

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
        self.distribution
            .validate(&format!("{p}keys.distribution"), self.range)?;
        for (field, d) in [("writes", &self.writes), ("reads", &self.reads)] {
            if let Some(d) = d {
                d.validate(&format!("{p}keys.{field}"), self.range)?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_tables_round_trip() {
        for (text, want) in [
            (json!("uniform"), Distribution::Uniform),
            (json!("parallel"), Distribution::Parallel),
            (json!("zipf"), Distribution::Zipf { exponent: 1.0 }),
            (
                json!({"kind": "gaussian", "stddev": 10}),
                Distribution::Gaussian {
                    median: None,
                    stddev: Some(10.0),
                },
            ),
            (
                json!({"kind": "hotset", "hot_keys": 0.1}),
                Distribution::Hotset {
                    hot_keys: 0.1,
                    hot_ops: 0.8,
                },
            ),
        ] {
            let d: Distribution = serde_json::from_value(text).unwrap();
            assert_eq!(d, want);
            let back: Distribution =
                serde_json::from_value(serde_json::to_value(d).unwrap()).unwrap();
            assert_eq!(back, want);
        }
        let err = |v: Json| {
            serde_json::from_value::<Distribution>(v)
                .unwrap_err()
                .to_string()
        };
        assert!(err(json!("pareto")).contains("allowed are sequential"));
        assert!(err(json!({"kind": "zipf", "stddev": 1})).contains("allowed are exponent"));
        assert!(err(json!({"exponent": 1})).contains("needs `kind`"));
    }

    #[test]
    fn empirical_round_trips_and_is_checked_against_the_range() {
        let text = json!({"kind": "empirical", "shares": [0.5, 0.25], "tail_exponent": 0.9});
        let d: Distribution = serde_json::from_value(text.clone()).unwrap();
        assert_eq!(serde_json::to_value(&d).unwrap(), text);
        d.validate("keys.distribution", [0, 9]).unwrap();
        let uniform_tail: Distribution =
            serde_json::from_value(json!({"kind": "empirical", "shares": [1.0]})).unwrap();
        uniform_tail.validate("keys.distribution", [5, 5]).unwrap();
        let parse = |v: Json| {
            serde_json::from_value::<Distribution>(v)
                .unwrap_err()
                .to_string()
        };
        assert!(parse(json!({"kind": "empirical"})).contains("needs `shares`"));
        assert!(parse(json!({"kind": "empirical", "shares": [0.1, "x"]})).contains("`shares[1]`"));
        assert!(
            parse(json!({"kind": "empirical", "shares": [0.1], "exponent": 1}))
                .contains("allowed are shares, tail_exponent")
        );
        let check = |v: Json, range: [u64; 2]| {
            let d: Distribution = serde_json::from_value(v).unwrap();
            d.validate("keys.distribution", range)
                .unwrap_err()
                .to_string()
        };
        for (v, range, says) in [
            (
                json!({"kind": "empirical", "shares": []}),
                [0, 9],
                "keys.distribution.shares",
            ),
            (
                json!({"kind": "empirical", "shares": [0.5, 1.5]}),
                [0, 9],
                "keys.distribution.shares[1]",
            ),
            (
                json!({"kind": "empirical", "shares": [0.7, 0.7]}),
                [0, 9],
                "sum to 1.4",
            ),
            (
                json!({"kind": "empirical", "shares": [0.1, 0.1, 0.1]}),
                [0, 1],
                "3 shares for a keys.range of 2 keys",
            ),
            (
                json!({"kind": "empirical", "shares": [0.0]}),
                [3, 3],
                "sum to 0",
            ),
            (
                json!({"kind": "empirical", "shares": [0.5], "tail_exponent": 0}),
                [0, 9],
                "keys.distribution.tail_exponent",
            ),
        ] {
            let e = check(v.clone(), range);
            assert!(e.contains(says), "{v}: {e}");
        }
    }
}
