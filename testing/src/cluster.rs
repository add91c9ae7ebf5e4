//! A Redis Cluster of real servers, with or without TLS.

use crate::{free_port, Certs, Server};
use std::process::Command;
use std::time::{Duration, Instant};

/// A Redis Cluster of real servers on free loopback ports: `primaries` primaries with
/// `replicas` replicas each, joined with `redis-cli --cluster create`; killed on drop.
pub struct Cluster {
    /// Every node, in the order given to `redis-cli --cluster create` (which made the first
    /// `primaries` of them primaries; a failover may have changed that since: see
    /// [`Cluster::primaries`]).
    pub nodes: Vec<Server>,
    /// With TLS: each node's TLS port (its plain `port` stays open for the harness).
    pub tls_ports: Vec<u16>,
}

impl Cluster {
    /// Start the cluster and wait until every node says `cluster_state:ok` (and, with
    /// replicas, until CLUSTER SLOTS lists them: a replica is listed once it synced).
    pub fn start(primaries: usize, replicas: usize) -> Cluster {
        Self::start_with(primaries, replicas, None)
    }

    /// A cluster whose nodes also listen for TLS (certificate `server` of `certs`, no client
    /// certificate asked) and talk TLS among themselves (`tls-cluster yes`,
    /// `tls-replication yes`). Clients on a TLS port are told the TLS ports (CLUSTER SLOTS,
    /// MOVED), clients on the plain port the plain ones.
    pub fn start_tls(primaries: usize, replicas: usize, certs: &Certs) -> Cluster {
        Self::start_with(primaries, replicas, Some(certs))
    }

    fn start_with(primaries: usize, replicas: usize, certs: Option<&Certs>) -> Cluster {
        let n = primaries * (1 + replicas);
        let mut tls_ports = Vec::new();
        let nodes: Vec<Server> = (0..n)
            .map(|_| {
                let bus = free_port().to_string();
                let mut args: Vec<String> = [
                    "--cluster-enabled",
                    "yes",
                    "--cluster-config-file",
                    "nodes.conf",
                    "--cluster-node-timeout",
                    "2000",
                    "--cluster-port",
                    &bus,
                    // Replicas sync at once rather than after the default 5 s.
                    "--repl-diskless-sync-delay",
                    "0",
                ]
                .iter()
                .map(|a| a.to_string())
                .collect();
                if let Some(certs) = certs {
                    let tls_port = free_port();
                    tls_ports.push(tls_port);
                    args.extend([
                        "--tls-port".into(),
                        tls_port.to_string(),
                        "--tls-cert-file".into(),
                        certs.path("server.crt"),
                        "--tls-key-file".into(),
                        certs.path("server.key"),
                        "--tls-ca-cert-file".into(),
                        certs.path("ca.crt"),
                        "--tls-auth-clients".into(),
                        "no".into(),
                        "--tls-cluster".into(),
                        "yes".into(),
                        "--tls-replication".into(),
                        "yes".into(),
                    ]);
                }
                let args: Vec<&str> = args.iter().map(|a| a.as_str()).collect();
                Server::start(&args)
            })
            .collect();
        let addrs: Vec<String> = nodes
            .iter()
            .map(|s| format!("127.0.0.1:{}", s.port))
            .collect();
        let out = Command::new("redis-cli")
            .arg("--cluster")
            .arg("create")
            .args(&addrs)
            .args(["--cluster-replicas", &replicas.to_string(), "--cluster-yes"])
            .output()
            .expect("redis-cli must be installed");
        assert!(
            out.status.success(),
            "redis-cli --cluster create failed: {}",
            String::from_utf8_lossy(&out.stdout)
        );
        let cluster = Cluster { nodes, tls_ports };
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let ok = cluster
                .nodes
                .iter()
                .all(|s| s.cli(&["CLUSTER", "INFO"]).contains("cluster_state:ok"));
            let synced = replicas == 0
                || cluster.nodes.iter().all(|s| {
                    // redis-cli prints one line per field: each node listed gives its IP.
                    let slots = s.cli(&["CLUSTER", "SLOTS"]);
                    slots.lines().filter(|l| *l == "127.0.0.1").count() == n
                });
            if ok && synced {
                break;
            }
            assert!(Instant::now() < deadline, "the cluster did not come up");
            std::thread::sleep(Duration::from_millis(100));
        }
        cluster
    }

    /// The nodes that are primaries now.
    pub fn primaries(&self) -> Vec<&Server> {
        self.nodes
            .iter()
            .filter(|s| s.cli(&["ROLE"]).lines().next() == Some("master"))
            .collect()
    }

    /// The first node's port, as a seed.
    pub fn port(&self) -> u16 {
        self.nodes[0].port
    }
}
