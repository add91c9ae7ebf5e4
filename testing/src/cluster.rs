//! A Redis Cluster of real servers, with or without TLS.

use crate::error::program;
use crate::{free_port, Certs, Error, Server, ServerOptions, Tls};
use std::process::Command;
use std::time::{Duration, Instant};

/// Options of [`Cluster::launch`].
#[derive(Clone, Debug)]
pub struct ClusterOptions {
    /// How many primaries (at least 3, Redis Cluster's minimum).
    pub primaries: usize,
    /// How many replicas each primary has.
    pub replicas: usize,
    /// Each node's options: password, extra arguments, TLS (the cluster bus and replication
    /// then use TLS too), binaries. Its `start_timeout` bounds the whole cluster's start (60 s
    /// when `None`).
    pub server: ServerOptions,
}

/// A Redis Cluster of real servers on free loopback ports: `primaries` primaries with
/// `replicas` replicas each, joined with `redis-cli --cluster create`; killed on drop.
pub struct Cluster {
    /// Every node, in the order given to `redis-cli --cluster create` (which made the first
    /// `primaries` of them primaries; a failover may have changed that since: see
    /// [`Cluster::primaries`]).
    pub nodes: Vec<Server>,
    /// With TLS beside the plain ports: each node's TLS port (its plain `port` stays open for
    /// the harness).
    pub tls_ports: Vec<u16>,
}

impl Cluster {
    /// Start the cluster and wait until every node says `cluster_state:ok` (and, with
    /// replicas, until CLUSTER SLOTS lists them: a replica is listed once it synced). Panics
    /// when it does not come up.
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
        let options = ClusterOptions {
            primaries,
            replicas,
            server: ServerOptions {
                tls: certs.map(|c| Tls::new(c, "no", false)),
                ..ServerOptions::default()
            },
        };
        Cluster::launch(&options).unwrap_or_else(|e| panic!("{e}"))
    }

    /// Start the cluster as `options` say, and return it once every node says
    /// `cluster_state:ok` and lists every node in CLUSTER SLOTS (a replica is listed once it
    /// synced).
    pub fn launch(options: &ClusterOptions) -> Result<Cluster, Error> {
        let (primaries, replicas) = (options.primaries, options.replicas);
        if primaries < 3 {
            return Err(Error::Invalid(format!(
                "primaries = {primaries}: Redis Cluster needs at least 3"
            )));
        }
        let cli = program(
            options.server.redis_cli.as_deref(),
            "RESPLOAD_REDIS_CLI",
            "redis-cli",
            "redis-tools",
        )?;
        let timeout = options
            .server
            .start_timeout
            .unwrap_or(Duration::from_secs(60));
        let n = primaries * (1 + replicas);
        let mut node = options.server.clone();
        node.start_timeout = None;
        // The bus port is chosen too: the default, port + 10000, is past 65535 for a port
        // above 55535. Replicas sync at once rather than after the default 5 s.
        let mut args: Vec<String> = [
            "--cluster-enabled",
            "yes",
            "--cluster-config-file",
            "nodes.conf",
            "--cluster-node-timeout",
            "2000",
            "--repl-diskless-sync-delay",
            "0",
        ]
        .map(String::from)
        .into();
        if node.tls.is_some() {
            args.extend(["--tls-cluster", "yes", "--tls-replication", "yes"].map(String::from));
        }
        let mut cluster = Cluster {
            nodes: Vec::with_capacity(n),
            tls_ports: Vec::new(),
        };
        for _ in 0..n {
            node.args = args.clone();
            node.args
                .extend(["--cluster-port".into(), free_port().to_string()]);
            node.args.extend(options.server.args.iter().cloned());
            let server = Server::launch(&node)?;
            if let (Some(p), Some(tls)) = (server.tls_port, &node.tls) {
                if !tls.only {
                    cluster.tls_ports.push(p);
                }
            }
            cluster.nodes.push(server);
        }
        let mut create = Command::new(cli);
        let first = &cluster.nodes[0];
        if let Some(pw) = &first.password {
            create.args(["-a", pw, "--no-auth-warning"]);
        }
        if let (Some(tls), Some(certs)) = (&node.tls, first.certs()) {
            if tls.only {
                create.args(["--tls", "--cacert", &certs.path("ca.crt")]);
                create.args(["--cert", &certs.path("client.crt")]);
                create.args(["--key", &certs.path("client.key")]);
            }
        }
        let out = create
            .args(["--cluster", "create"])
            .args(cluster.seeds())
            .args(["--cluster-replicas", &replicas.to_string(), "--cluster-yes"])
            .output()?;
        if !out.status.success() {
            return Err(Error::Start(format!(
                "redis-cli --cluster create failed:\n{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            )));
        }
        let deadline = Instant::now() + timeout;
        while !cluster.ready() {
            if Instant::now() > deadline {
                return Err(Error::Start(format!(
                    "the cluster {:?} did not come up in {timeout:?}",
                    cluster.seeds()
                )));
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        Ok(cluster)
    }

    /// Every node says `cluster_state:ok` and lists every node in CLUSTER SLOTS.
    fn ready(&self) -> bool {
        self.nodes.iter().all(|s| {
            // redis-cli prints one line per field: each node listed gives its IP.
            s.cli(&["CLUSTER", "INFO"]).contains("cluster_state:ok")
                && s.cli(&["CLUSTER", "SLOTS"])
                    .lines()
                    .filter(|l| *l == "127.0.0.1")
                    .count()
                    == self.nodes.len()
        })
    }

    /// `127.0.0.1:PORT` of every node, as `target.cluster_seeds` takes them.
    pub fn seeds(&self) -> Vec<String> {
        self.nodes
            .iter()
            .map(|s| format!("127.0.0.1:{}", s.port))
            .collect()
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
