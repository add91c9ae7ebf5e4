//! Which keys: `[keys]` and the key distributions.

use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{json, Map, Value as Json};

/// How a command picks its key from the range.
///
/// Written as a name (`"zipf"`, parameters at their defaults) or a table with a `kind`
/// (`{ kind = "gaussian", median = 500, stddev = 100 }`).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
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
}

const KINDS: &str = "sequential, uniform, parallel, gaussian, zipf, hotset";

impl Distribution {
    fn kind(&self) -> &'static str {
        match self {
            Distribution::Sequential => "sequential",
            Distribution::Uniform => "uniform",
            Distribution::Parallel => "parallel",
            Distribution::Gaussian { .. } => "gaussian",
            Distribution::Zipf { .. } => "zipf",
            Distribution::Hotset { .. } => "hotset",
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

    fn to_json(self) -> Json {
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
        own.or(if reads { self.reads } else { self.writes })
            .unwrap_or(self.distribution)
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
}
