//! Where the traffic goes: `[target]` (resolved, URL form included, into the connection
//! settings in `plan`), and how a target URL appears in reports with its password hidden.

use super::{SpecDuration, Tls};
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// The server to load (`[target]` in a spec).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct Target {
    /// `redis://[user[:password]@]host[:port][/db]`, `rediss://...` (TLS) or
    /// `unix:///path/to.sock[?db=N]`. Mutually exclusive with `host`, `port` and `unix`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// Host name, IPv4 or IPv6 address (default `127.0.0.1`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
    /// Which addresses of `host` to connect to: `any` (the default: every address the name
    /// resolves to, in the resolver's order), `ipv4` or `ipv6` only (memtier_benchmark's
    /// `-4` / `-6`). A host with no address of that family fails before any traffic.
    #[serde(default, skip_serializing_if = "Family::is_any")]
    pub family: Family,
    /// TCP port (default 6379).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub port: Option<u16>,
    /// Path of a Unix socket, instead of host and port.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unix: Option<String>,
    /// ACL user name (AUTH user password); absent means password-only AUTH.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user: Option<String>,
    /// Password for AUTH; redacted in reports.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub password: Option<String>,
    /// Database number to SELECT (default 0: no SELECT sent).
    #[serde(default)]
    pub db: u32,
    /// Name given to every connection with CLIENT SETNAME (empty: none).
    #[serde(default = "default_client_name")]
    pub client_name: String,
    /// RESP protocol version: 2, or 3 (HELLO 3 at connect).
    #[serde(default = "default_protocol")]
    pub protocol: u8,
    /// Send `CLIENT TRACKING ON` on every load connection (server-assisted client-side
    /// caching, as redis-benchmark's `--enable-tracking`). With `protocol = 3` the server
    /// pushes invalidation messages on the connection; they are read and skipped. With
    /// RESP2 the server tracks the keys read but sends nothing.
    #[serde(default, skip_serializing_if = "is_false")]
    pub tracking: bool,
    /// Connect over Multipath TCP (Linux only: sockets of protocol `IPPROTO_MPTCP`, which
    /// fall back to plain TCP when the server does not speak it), as valkey-benchmark's
    /// `--mptcp`. An error with a Unix socket, or off Linux.
    #[serde(default, skip_serializing_if = "is_false")]
    pub mptcp: bool,
    /// How long to wait for a connection (and its handshake) before failing.
    #[serde(default = "default_connect_timeout")]
    pub connect_timeout: SpecDuration,
    /// TLS settings (left out of the normalized spec while TLS is off and nothing is set).
    #[serde(default, skip_serializing_if = "Tls::is_default")]
    pub tls: Tls,
    /// Redis Cluster: read the slot map (`CLUSTER SLOTS`) and send each request to the
    /// primary that owns its key's slot, following MOVED and ASK redirections. In cluster
    /// mode `load.connections` counts connections per primary node.
    #[serde(default, skip_serializing_if = "is_false")]
    pub cluster: bool,
    /// Cluster nodes (`host:port`) to read the slot map from, tried in order (default: the
    /// target itself); the server's facts are read from the first that answers when the
    /// target does not. Needs `cluster = true`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cluster_seeds: Vec<String>,
    /// Cluster mode: where reading commands go (`primary`, `replica`, `prefer-replica`,
    /// `any`).
    #[serde(default, skip_serializing_if = "ReadFrom::is_primary")]
    pub read_from: ReadFrom,
}

/// Which address family a host name is resolved to (`target.family`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum Family {
    /// Every address, IPv4 or IPv6, in the order the resolver gives them.
    #[default]
    Any,
    /// IPv4 addresses only.
    Ipv4,
    /// IPv6 addresses only.
    Ipv6,
}

impl Family {
    pub(crate) fn is_any(&self) -> bool {
        *self == Family::Any
    }

    /// Whether a connection may go to `addr`.
    pub fn admits(&self, addr: &std::net::SocketAddr) -> bool {
        match self {
            Family::Any => true,
            Family::Ipv4 => addr.is_ipv4(),
            Family::Ipv6 => addr.is_ipv6(),
        }
    }
}

/// Cluster mode: which nodes serve reading commands (`target.read_from`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "kebab-case")]
pub enum ReadFrom {
    /// Every request goes to the primary owning its slot.
    #[default]
    Primary,
    /// Reads go to a replica of the slot's primary (connections send `READONLY`); the run
    /// refuses to start when some slot has no replica.
    Replica,
    /// Like `Replica`, but slots without a replica are read from their primary.
    PreferReplica,
    /// Reads spread over every node serving the slot, its primary and its replicas: each
    /// connection reads a slot from one of them, the connections taking them in turn
    /// (valkey-benchmark's `--rfr all`; connections send `READONLY`).
    Any,
}

impl ReadFrom {
    pub(crate) fn is_primary(&self) -> bool {
        *self == ReadFrom::Primary
    }
}

fn is_false(b: &bool) -> bool {
    !*b
}

fn default_client_name() -> String {
    "respload".into()
}
fn default_protocol() -> u8 {
    2
}
fn default_connect_timeout() -> SpecDuration {
    SpecDuration(Duration::from_secs(5))
}

impl Default for Target {
    fn default() -> Self {
        Target {
            url: None,
            host: None,
            family: Family::Any,
            port: None,
            unix: None,
            user: None,
            password: None,
            db: 0,
            client_name: default_client_name(),
            protocol: default_protocol(),
            tracking: false,
            mptcp: false,
            connect_timeout: default_connect_timeout(),
            tls: Tls::default(),
            cluster: false,
            cluster_seeds: Vec::new(),
            read_from: ReadFrom::Primary,
        }
    }
}

/// `url` with its password replaced by `***`, in the user info and in the query (every
/// parameter's value but `db`'s and `user`'s, so that a misspelt `password=` hides its
/// value too): how a URL appears in reports and messages.
pub(crate) fn redact_url(url: &str) -> String {
    // The query starts at the first `?` after the scheme: one before `://` is part of a
    // malformed scheme, and the user info after it must be hidden all the same.
    let after_scheme = url.find("://").map_or(0, |s| s + 3);
    let (base, query) = match url[after_scheme..].find('?') {
        Some(q) => (&url[..after_scheme + q], Some(&url[after_scheme + q + 1..])),
        None => (url, None),
    };
    let mut out = match (base.find("://"), base.rfind('@')) {
        (Some(s), Some(at)) if at > s => {
            let userinfo = &base[s + 3..at];
            let user = userinfo.split_once(':').map_or("", |(u, _)| u);
            format!("{}{user}:***{}", &base[..s + 3], &base[at..])
        }
        _ => base.to_string(),
    };
    if let Some(query) = query {
        let pairs: Vec<String> = query
            .split('&')
            .map(|pair| match pair.split_once('=') {
                Some((key @ ("db" | "user"), value)) => format!("{key}={value}"),
                Some((key, _)) => format!("{key}=***"),
                None => pair.to_string(),
            })
            .collect();
        out = format!("{out}?{}", pairs.join("&"));
    }
    out
}
