//! A target resolved: where and how each connection connects ([`ConnectOptions`]), from a
//! spec's `[target]` (its URL form or its fields).

use super::TlsConnect;
use crate::spec::{redact_url, Family, NodeAddr, ReadFrom, Target};
use std::time::Duration;

/// A resolved address to connect to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Endpoint {
    /// TCP host (name or address) and port.
    Tcp {
        /// Host name or IP address (IPv6 without brackets).
        host: String,
        /// Port.
        port: u16,
    },
    /// Unix domain socket path.
    Unix(String),
}

impl std::fmt::Display for Endpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Endpoint::Tcp { host, port } if host.contains(':') => write!(f, "[{host}]:{port}"),
            Endpoint::Tcp { host, port } => write!(f, "{host}:{port}"),
            Endpoint::Unix(path) => write!(f, "unix:{path}"),
        }
    }
}

/// Everything a connection needs, resolved from a [`Target`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConnectOptions {
    /// Where to connect.
    pub endpoint: Endpoint,
    /// Which addresses of a TCP host name to use (`target.family`).
    pub family: Family,
    /// ACL user.
    pub user: Option<String>,
    /// Password.
    pub password: Option<String>,
    /// Database to SELECT.
    pub db: u32,
    /// CLIENT SETNAME value (empty: none).
    pub client_name: String,
    /// 2 or 3.
    pub protocol: u8,
    /// `CLIENT TRACKING ON` at connect (load connections only: see [`ConnectOptions::control`]).
    pub tracking: bool,
    /// Connect and handshake timeout.
    pub connect_timeout: Duration,
    /// TLS, when on: the shared client configuration and the server name to verify.
    pub tls: Option<TlsConnect>,
    /// Cluster mode: the seed nodes to read the slot map from (`None`: not a cluster).
    pub cluster: Option<Vec<NodeAddr>>,
    /// Cluster mode: where reads go; anything but `Primary` sends `READONLY` at connect.
    pub read_from: ReadFrom,
    /// TCP connections are Multipath TCP (`target.mptcp`).
    pub mptcp: bool,
}

impl ConnectOptions {
    /// The same settings for a connection that sends no load (the server probe, slot map
    /// reads, observers, drills): without `CLIENT TRACKING`, so the server tracks only what
    /// the load reads.
    pub fn control(&self) -> ConnectOptions {
        ConnectOptions {
            tracking: false,
            ..self.clone()
        }
    }
}

impl Target {
    /// Resolve URL or host/port/unix into a [`ConnectOptions`]; `path` prefixes error paths.
    pub fn resolve(&self, path: &str) -> Result<ConnectOptions, crate::Error> {
        // A zero timeout would only work where the clock is coarse enough to let it.
        if self.connect_timeout.0 < Duration::from_millis(10) {
            return Err(crate::Error::spec(
                format!("{path}target.connect_timeout"),
                format!(
                    "{:?} is too short: allowed is 10ms or more",
                    self.connect_timeout.0
                ),
            ));
        }
        let mut c = ConnectOptions {
            endpoint: Endpoint::Tcp {
                host: self.host.clone().unwrap_or_else(|| "127.0.0.1".into()),
                port: self.port.unwrap_or(6379),
            },
            family: self.family,
            user: self.user.clone(),
            password: self.password.clone(),
            db: self.db,
            client_name: self.client_name.clone(),
            protocol: self.protocol,
            tracking: self.tracking,
            connect_timeout: self.connect_timeout.0,
            tls: None,
            cluster: None,
            read_from: self.read_from,
            mptcp: self.mptcp,
        };
        let mut tls_url = false;
        if let Some(unix) = &self.unix {
            if self.host.is_some() || self.port.is_some() {
                return Err(crate::Error::spec(
                    format!("{path}target.unix"),
                    "give either `unix` or `host`/`port`, not both",
                ));
            }
            c.endpoint = Endpoint::Unix(unix.clone());
        }
        if let Some(url) = &self.url {
            if self.host.is_some() || self.port.is_some() || self.unix.is_some() {
                return Err(crate::Error::spec(
                    format!("{path}target.url"),
                    "give either `url` or `host`/`port`/`unix`, not both",
                ));
            }
            tls_url = parse_url(url, &mut c).map_err(|m| {
                let url = redact_url(url);
                crate::Error::spec(format!("{path}target.url"), format!("`{url}`: {m}"))
            })?;
        }
        if self.mptcp {
            let why = match &c.endpoint {
                Endpoint::Unix(_) => {
                    Some("Multipath TCP is TCP: a Unix socket target cannot use it")
                }
                Endpoint::Tcp { .. } if !cfg!(target_os = "linux") => {
                    Some("Multipath TCP sockets are Linux's: not available on this platform")
                }
                Endpoint::Tcp { .. } => None,
            };
            if let Some(why) = why {
                return Err(crate::Error::spec(format!("{path}target.mptcp"), why));
            }
        }
        if !(c.protocol == 2 || c.protocol == 3) {
            return Err(crate::Error::spec(
                format!("{path}target.protocol"),
                format!("{} is not a RESP version: allowed are 2 and 3", c.protocol),
            ));
        }
        if let Endpoint::Tcp { host, port } = &c.endpoint {
            if host.is_empty() {
                return Err(crate::Error::spec(
                    format!("{path}target.host"),
                    "must not be empty",
                ));
            }
            if *port == 0 {
                return Err(crate::Error::spec(
                    format!("{path}target.port"),
                    "0 is not a port: allowed are 1 to 65535",
                ));
            }
        }
        let host = match &c.endpoint {
            Endpoint::Tcp { host, .. } => Some(host.as_str()),
            Endpoint::Unix(_) => None,
        };
        c.tls = self.tls.resolve(self.tls.enabled || tls_url, host, path)?;
        c.cluster = self.cluster_seeds(&c, path)?;
        Ok(c)
    }

    /// The cluster seeds, checked: `None` unless `cluster` is set.
    fn cluster_seeds(
        &self,
        c: &ConnectOptions,
        path: &str,
    ) -> Result<Option<Vec<NodeAddr>>, crate::Error> {
        if !self.cluster {
            if !self.read_from.is_primary() {
                return Err(crate::Error::spec(
                    format!("{path}target.read_from"),
                    "applies to cluster mode only (a standalone server has no replicas to \
                     route to): set target.cluster = true too, or point the target at the \
                     replica itself",
                ));
            }
            if !self.cluster_seeds.is_empty() {
                return Err(crate::Error::spec(
                    format!("{path}target.cluster_seeds"),
                    "applies to cluster mode only: set target.cluster = true too",
                ));
            }
            return Ok(None);
        }
        let own = match &c.endpoint {
            Endpoint::Tcp { host, port } => NodeAddr {
                host: host.clone(),
                port: *port,
            },
            Endpoint::Unix(_) => {
                return Err(crate::Error::spec(
                    format!("{path}target.cluster"),
                    "cluster mode needs a TCP target (host and port), not a Unix socket: \
                     cluster nodes announce TCP addresses",
                ))
            }
        };
        if c.db != 0 {
            return Err(crate::Error::spec(
                format!("{path}target.db"),
                format!("{}: Redis Cluster has database 0 only", c.db),
            ));
        }
        if self.cluster_seeds.is_empty() {
            return Ok(Some(vec![own]));
        }
        self.cluster_seeds
            .iter()
            .enumerate()
            .map(|(i, s)| {
                NodeAddr::parse(s).ok_or_else(|| {
                    crate::Error::spec(
                        format!("{path}target.cluster_seeds[{i}]"),
                        format!("`{s}` is not host:port (e.g. \"10.0.0.1:7000\")"),
                    )
                })
            })
            .collect::<Result<Vec<_>, _>>()
            .map(Some)
    }
}

/// Make room in a phase's target (`base`, as JSON, resolved as `connect`) for an override
/// (`over`, a partial target, e.g. the command line's `--port`): the override's endpoint
/// replaces the phase's, whether either is a URL or `host`/`port`/`unix`. Merged as is,
/// both forms would be there and the target refused, so `-p 6380` could not be used with a
/// spec file that has a `url`. A URL that must give way is unfolded into fields first,
/// keeping its user, password, database and TLS (but not onto a Unix socket) unless the
/// override gives them (a URL's user info would otherwise win over the override's
/// `password`).
pub(crate) fn make_room(
    base: &mut serde_json::Value,
    connect: &ConnectOptions,
    over: &serde_json::Value,
) {
    let (Some(base), Some(over)) = (base.as_object_mut(), over.as_object()) else {
        return;
    };
    let gives = |keys: &[&str]| keys.iter().any(|k| over.contains_key(*k));
    if gives(&["url"]) {
        for k in ["host", "port", "unix"] {
            base.remove(k);
        }
        return;
    }
    if base.contains_key("url") && gives(&["host", "port", "unix", "user", "password", "db"]) {
        base.remove("url");
        match &connect.endpoint {
            Endpoint::Tcp { host, port } => {
                base.insert("host".into(), host.clone().into());
                base.insert("port".into(), (*port).into());
            }
            Endpoint::Unix(path) => {
                base.insert("unix".into(), path.clone().into());
            }
        }
        for (k, v) in [("user", &connect.user), ("password", &connect.password)] {
            if let Some(v) = v {
                base.insert(k.into(), v.clone().into());
            }
        }
        base.insert("db".into(), connect.db.into());
        // A rediss:// URL's scheme is what turned TLS on; a Unix socket has none to keep.
        if connect.tls.is_some() && !gives(&["unix"]) {
            let tls = base
                .entry("tls")
                .or_insert_with(|| serde_json::Value::Object(Default::default()));
            if let Some(tls) = tls.as_object_mut() {
                tls.insert("enabled".into(), true.into());
            }
        }
    }
    if gives(&["unix"]) {
        base.remove("host");
        base.remove("port");
    } else if gives(&["host", "port"]) {
        base.remove("unix");
    }
}

/// Fill `c` from a `redis://`, `rediss://` or `unix://` URL; returns whether it asks for TLS.
pub(crate) fn parse_url(url: &str, c: &mut ConnectOptions) -> Result<bool, String> {
    let (scheme, rest) = url
        .split_once("://")
        .ok_or("not a URL: expected redis://host:port/db or unix:///path.sock")?;
    let tls = match scheme {
        "redis" => false,
        "rediss" => true,
        "unix" | "redis+unix" => {
            let (path, query) = rest.split_once('?').unwrap_or((rest, ""));
            if path.is_empty() {
                return Err("a unix URL needs a socket path".into());
            }
            c.endpoint = Endpoint::Unix(path.to_string());
            apply_query(query, c)?;
            return Ok(false);
        }
        other => {
            return Err(format!(
                "unknown scheme `{other}`: allowed are redis://, rediss:// (TLS), unix://"
            ))
        }
    };
    // `?` cannot appear unencoded before the query (RFC 3986), not even in a password.
    let (rest, query) = rest.split_once('?').unwrap_or((rest, ""));
    // The user info ends at the last `@`: a `/` in a password is the password's, and the
    // host, port and database after it can never hold a piece of it (their errors quote them).
    let (userinfo, location) = match rest.rsplit_once('@') {
        Some((u, l)) => (Some(u), l),
        None => (None, rest),
    };
    let (hostport, db) = location.split_once('/').unwrap_or((location, ""));
    if let Some(info) = userinfo {
        match info.split_once(':') {
            Some((user, pass)) => {
                if !user.is_empty() {
                    c.user = Some(percent_decode(user)?);
                }
                c.password = Some(password_decode(pass)?);
            }
            None if !info.is_empty() => c.password = Some(password_decode(info)?),
            None => {}
        }
    }
    let (host, port) = if let Some(v6) = hostport.strip_prefix('[') {
        let (h, after) = v6.split_once(']').ok_or("unclosed `[` in IPv6 address")?;
        (h, after.strip_prefix(':'))
    } else {
        match hostport.rsplit_once(':') {
            Some((h, p)) => (h, Some(p)),
            None => (hostport, None),
        }
    };
    let port = match port {
        Some(p) => p
            .parse::<u16>()
            .ok()
            .filter(|p| *p > 0)
            .ok_or_else(|| format!("port `{p}` is not a number from 1 to 65535"))?,
        None => 6379,
    };
    let host = if host.is_empty() { "127.0.0.1" } else { host };
    c.endpoint = Endpoint::Tcp {
        host: host.to_string(),
        port,
    };
    if !db.is_empty() {
        c.db = db
            .parse()
            .map_err(|_| format!("database `{db}` is not a number"))?;
    }
    apply_query(query, c)?;
    Ok(tls)
}

/// A URL's query parameters (`?db=3&user=u&password=p`, as redis-py reads them; they win
/// over the path and the user info): any other is refused rather than ignored.
fn apply_query(query: &str, c: &mut ConnectOptions) -> Result<(), String> {
    for pair in query.split('&').filter(|p| !p.is_empty()) {
        match pair.split_once('=') {
            Some(("db", v)) => c.db = v.parse().map_err(|_| format!("db `{v}` is not a number"))?,
            Some(("password", v)) => c.password = Some(password_decode(v)?),
            Some(("user", v)) => c.user = Some(percent_decode(v)?),
            _ => {
                // The name only: a misspelt `password=` must not show its value.
                let name = pair.split_once('=').map_or(pair, |(k, _)| k);
                return Err(format!(
                    "unknown query parameter `{name}`: allowed are db, user, password (a `?` \
                     in a password is written %3F)"
                ));
            }
        }
    }
    Ok(())
}

/// A password's percent-decoding; an error says what is wrong without showing any of it.
fn password_decode(s: &str) -> Result<String, String> {
    percent_decode(s).map_err(|_| {
        "the password is not valid percent-encoding (write `%` as %25) or not UTF-8".to_string()
    })
}

fn percent_decode(s: &str) -> Result<String, String> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = s.get(i + 1..i + 3).ok_or("truncated %-escape")?;
            out.push(u8::from_str_radix(hex, 16).map_err(|_| format!("bad %-escape `%{hex}`"))?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).map_err(|_| "credentials are not UTF-8".into())
}

impl NodeAddr {
    /// The connection settings for this node: `base` (credentials, TLS, timeouts) with this
    /// node's endpoint.
    pub fn connect(&self, base: &ConnectOptions) -> ConnectOptions {
        let mut c = base.clone();
        c.endpoint = Endpoint::Tcp {
            host: self.host.clone(),
            port: self.port,
        };
        c
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::SpecDuration;

    fn resolve(url: &str) -> Result<ConnectOptions, crate::Error> {
        Target {
            url: Some(url.into()),
            ..Target::default()
        }
        .resolve("")
    }

    #[test]
    fn a_connect_timeout_under_10ms_is_refused() {
        let t = |ms| Target {
            connect_timeout: SpecDuration(Duration::from_millis(ms)),
            ..Target::default()
        };
        let err = t(0).resolve("").unwrap_err().to_string();
        assert!(
            err.contains("`target.connect_timeout`: 0ns is too short"),
            "{err}"
        );
        assert!(t(10).resolve("").is_ok());
    }

    #[test]
    fn urls_resolve() {
        let c = resolve("redis://alice:s%40cret@example.org:6380/3").unwrap();
        assert_eq!(
            c.endpoint,
            Endpoint::Tcp {
                host: "example.org".into(),
                port: 6380
            }
        );
        assert_eq!(c.user.as_deref(), Some("alice"));
        assert_eq!(c.password.as_deref(), Some("s@cret"));
        assert_eq!(c.db, 3);
        let c = resolve("redis://:pw@[::1]:7000").unwrap();
        assert_eq!(c.endpoint.to_string(), "[::1]:7000");
        assert_eq!(c.user, None);
        assert_eq!(c.password.as_deref(), Some("pw"));
        let c = resolve("unix:///tmp/r.sock?db=2").unwrap();
        assert_eq!(c.endpoint, Endpoint::Unix("/tmp/r.sock".into()));
        assert_eq!(c.db, 2);
        // Query parameters over TCP too (they win over the path); others are refused.
        let c = resolve("redis://127.0.0.1:7700/0?db=3&user=u&password=p%26q").unwrap();
        assert_eq!(c.endpoint.to_string(), "127.0.0.1:7700");
        assert_eq!((c.db, c.user.as_deref()), (3, Some("u")));
        assert_eq!(c.password.as_deref(), Some("p&q"));
        assert_eq!(resolve("redis://127.0.0.1:7700?db=4").unwrap().db, 4);
        let err = resolve("redis://127.0.0.1:7700/5?foo=bar")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains(
                "`redis://127.0.0.1:7700/5?foo=***`: unknown query parameter `foo`: \
                 allowed are db, user, password"
            ),
            "{err}"
        );
        let c = resolve("rediss://cache.example.org:6380/1").unwrap();
        let tls = c.tls.expect("rediss:// turns TLS on");
        assert_eq!(tls.server_name.to_str(), "cache.example.org");
        assert!(resolve("redis://h").unwrap().tls.is_none());
        let cluster = |extra: &str| {
            Target {
                cluster: true,
                cluster_seeds: vec![extra.into()],
                ..Target::default()
            }
            .resolve("")
        };
        let seeds = cluster("[::1]:7001").unwrap().cluster.unwrap();
        assert_eq!(seeds[0].to_string(), "[::1]:7001");
        let err = cluster("nope").unwrap_err().to_string();
        assert!(err.contains("target.cluster_seeds[0]"), "{err}");
        let own = Target {
            cluster: true,
            port: Some(7000),
            ..Target::default()
        };
        assert_eq!(own.resolve("").unwrap().cluster.unwrap()[0].port, 7000);
        let unix = Target {
            cluster: true,
            unix: Some("/tmp/s".into()),
            ..Target::default()
        };
        assert!(unix
            .resolve("")
            .unwrap_err()
            .to_string()
            .contains("target.cluster"));
        let seeds_alone = Target {
            cluster_seeds: vec!["h:1".into()],
            ..Target::default()
        };
        assert!(seeds_alone.resolve("").is_err());
        let replica_alone: Target =
            serde_json::from_value(serde_json::json!({ "read_from": "replica" })).unwrap();
        let err = replica_alone.resolve("").unwrap_err().to_string();
        assert!(err.contains("target.read_from"), "{err}");
        let prefer: Target = serde_json::from_value(
            serde_json::json!({ "cluster": true, "read_from": "prefer-replica" }),
        )
        .unwrap();
        assert_eq!(
            prefer.resolve("").unwrap().read_from,
            ReadFrom::PreferReplica
        );
        assert!(
            serde_json::from_value::<Target>(serde_json::json!({ "read_from": "all" })).is_err()
        );
        for bad in [
            "http://x",
            "redis://h:0",
            "redis://h:99999",
            "redis://h/x",
            "localhost",
        ] {
            let err = resolve(bad).unwrap_err().to_string();
            assert!(err.contains("target.url"), "{bad}: {err}");
        }
    }
}
