//! Redis Cluster: the slot map read from `CLUSTER SLOTS` (key slots are `resp::slot`'s, node
//! addresses `spec::NodeAddr`).

use super::{Client, Value};
use crate::plan::ConnectOptions;
use crate::resp::slot::SLOTS;
use crate::spec::NodeAddr;
use crate::{Error, Result};

/// A contiguous range of slots and the nodes serving it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SlotRange {
    /// First slot.
    pub start: u16,
    /// Last slot (inclusive).
    pub end: u16,
    /// The primary.
    pub primary: NodeAddr,
    /// Its replicas (listed once they synced).
    pub replicas: Vec<NodeAddr>,
}

/// The cluster's slot map, as `CLUSTER SLOTS` gave it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SlotMap {
    /// The ranges, in slot order.
    pub ranges: Vec<SlotRange>,
}

impl SlotMap {
    /// Parse a `CLUSTER SLOTS` reply. A node with an empty host or `?` is on `seed_host`
    /// (the host the reply came from).
    pub fn from_reply(reply: &Value, seed_host: &str) -> std::result::Result<SlotMap, String> {
        let Value::List(items) = reply else {
            return Err(format!("CLUSTER SLOTS: expected an array, got {reply:?}"));
        };
        let int = |v: &Value| -> std::result::Result<i64, String> {
            v.as_text()
                .and_then(|t| t.parse().ok())
                .ok_or_else(|| format!("CLUSTER SLOTS: expected an integer, got {v:?}"))
        };
        let node = |v: &Value| -> std::result::Result<NodeAddr, String> {
            let Value::List(f) = v else {
                return Err(format!("CLUSTER SLOTS: expected a node, got {v:?}"));
            };
            if f.len() < 2 {
                return Err(format!("CLUSTER SLOTS: node with {} fields", f.len()));
            }
            let host = match &f[0] {
                Value::Nil => String::new(),
                v => v.as_text().unwrap_or_default(),
            };
            let host = if host.is_empty() || host == "?" {
                seed_host.to_string()
            } else {
                host
            };
            let port = int(&f[1])?;
            let port = u16::try_from(port)
                .ok()
                .filter(|p| *p > 0)
                .ok_or_else(|| format!("CLUSTER SLOTS: bad port {port}"))?;
            Ok(NodeAddr { host, port })
        };
        let mut ranges = Vec::with_capacity(items.len());
        for item in items {
            let Value::List(f) = item else {
                return Err(format!("CLUSTER SLOTS: expected a range, got {item:?}"));
            };
            if f.len() < 3 {
                return Err("CLUSTER SLOTS: a range without a primary".into());
            }
            let (start, end) = (int(&f[0])?, int(&f[1])?);
            if !(0..SLOTS as i64).contains(&start) || !(start..SLOTS as i64).contains(&end) {
                return Err(format!("CLUSTER SLOTS: bad range {start}-{end}"));
            }
            ranges.push(SlotRange {
                start: start as u16,
                end: end as u16,
                primary: node(&f[2])?,
                replicas: f[3..]
                    .iter()
                    .map(node)
                    .collect::<std::result::Result<_, _>>()?,
            });
        }
        ranges.sort_by_key(|r| r.start);
        Ok(SlotMap { ranges })
    }

    /// The primaries, each once, in slot order.
    pub fn primaries(&self) -> Vec<NodeAddr> {
        let mut out: Vec<NodeAddr> = Vec::new();
        for r in &self.ranges {
            if !out.contains(&r.primary) {
                out.push(r.primary.clone());
            }
        }
        out
    }

    /// The primary serving `slot`, if any.
    pub fn primary_of(&self, slot: u16) -> Option<&NodeAddr> {
        self.ranges
            .iter()
            .find(|r| r.start <= slot && slot <= r.end)
            .map(|r| &r.primary)
    }

    /// Slots no range covers.
    #[cfg(test)]
    pub fn uncovered(&self) -> usize {
        let covered: usize = self
            .ranges
            .iter()
            .map(|r| (r.end - r.start) as usize + 1)
            .sum();
        SLOTS.saturating_sub(covered)
    }

    /// Read the map from the first of `seeds` that answers `CLUSTER SLOTS`; `base` gives
    /// credentials, TLS and timeouts. Fails with the last error when none does.
    pub async fn fetch(seeds: &[NodeAddr], base: &ConnectOptions) -> Result<SlotMap> {
        let mut last = None;
        for seed in seeds {
            match Self::fetch_one(seed, base).await {
                Ok(map) => return Ok(map),
                Err(e) => last = Some(e),
            }
        }
        Err(last.unwrap_or_else(|| Error::Internal("no cluster seed node".into())))
    }

    async fn fetch_one(seed: &NodeAddr, base: &ConnectOptions) -> Result<SlotMap> {
        let c = seed.connect(base).control();
        let mut client = Client::connect(&c).await?;
        let reply = client
            .call(&[b"CLUSTER", b"SLOTS"], c.connect_timeout)
            .await?;
        let protocol = |message: String| Error::Protocol {
            address: seed.to_string(),
            reason: message,
        };
        if let Value::Error(e) = &reply {
            return Err(protocol(format!(
                "CLUSTER SLOTS failed: {e} (is this a cluster node? target.cluster is set)"
            )));
        }
        let map = SlotMap::from_reply(&reply, &seed.host).map_err(protocol)?;
        if map.ranges.is_empty() {
            return Err(protocol("CLUSTER SLOTS: no slot is assigned".into()));
        }
        Ok(map)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(host: &str, port: u16) -> Value {
        Value::List(vec![
            Value::Bulk(host.as_bytes().to_vec()),
            Value::Text(port.to_string()),
            Value::Bulk(b"id".to_vec()),
        ])
    }

    #[test]
    fn parses_cluster_slots() {
        let reply = Value::List(vec![
            Value::List(vec![
                Value::Text("5461".into()),
                Value::Text("10922".into()),
                node("", 7001),
                node("10.0.0.2", 7004),
            ]),
            Value::List(vec![
                Value::Text("0".into()),
                Value::Text("5460".into()),
                node("?", 7000),
            ]),
        ]);
        let map = SlotMap::from_reply(&reply, "seed.example").unwrap();
        assert_eq!(map.ranges[0].start, 0);
        assert_eq!(map.ranges[0].primary.to_string(), "seed.example:7000");
        assert_eq!(map.ranges[1].primary.to_string(), "seed.example:7001");
        assert_eq!(map.ranges[1].replicas[0].to_string(), "10.0.0.2:7004");
        assert_eq!(map.primary_of(6000).unwrap().port, 7001);
        assert!(map.primary_of(12000).is_none());
        assert_eq!(map.uncovered(), SLOTS - 10923);
        assert_eq!(map.primaries().len(), 2);
        assert!(SlotMap::from_reply(&Value::Text("x".into()), "h").is_err());
        assert_eq!(
            NodeAddr::parse("[::1]:7000").unwrap().to_string(),
            "[::1]:7000"
        );
        assert!(NodeAddr::parse("h:0").is_none() && NodeAddr::parse("h").is_none());
    }
}
