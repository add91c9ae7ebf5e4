//! A cluster node's address, as `CLUSTER SLOTS` and `target.cluster` name it.

/// A cluster node, as `CLUSTER SLOTS` names it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct NodeAddr {
    /// Host (IP or name; the seed's host when the node did not say).
    pub host: String,
    /// Port.
    pub port: u16,
}

impl std::fmt::Display for NodeAddr {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.host.contains(':') {
            write!(f, "[{}]:{}", self.host, self.port)
        } else {
            write!(f, "{}:{}", self.host, self.port)
        }
    }
}

impl NodeAddr {
    /// Parse `host:port` (or `[v6]:port`).
    pub fn parse(s: &str) -> Option<NodeAddr> {
        let (host, port) = if let Some(v6) = s.strip_prefix('[') {
            let (h, rest) = v6.split_once(']')?;
            (h, rest.strip_prefix(':')?)
        } else {
            s.rsplit_once(':')?
        };
        let port = port.parse::<u16>().ok().filter(|p| *p > 0)?;
        if host.is_empty() {
            return None;
        }
        Some(NodeAddr {
            host: host.to_string(),
            port,
        })
    }
}
