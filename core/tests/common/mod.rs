//! Test harness: real redis-server processes on free loopback ports, and a counting proxy.
#![allow(dead_code)]

use respload::resp::{Framer, Reply};
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A free TCP port on 127.0.0.1 (bound, then released).
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A redis-server child process, killed and cleaned up on drop.
pub struct Server {
    pub port: u16,
    pub dir: PathBuf,
    child: Child,
}

impl Server {
    /// Start a server with persistence off plus `extra` arguments (`--name value` pairs).
    pub fn start(extra: &[&str]) -> Server {
        // A port found free may be taken before redis-server binds it (by another test, or
        // as the bus port picked for this very node): one that does not come up is tried
        // again on another port.
        for _ in 0..3 {
            if let Some(server) = Server::start_on(free_port(), extra) {
                return server;
            }
        }
        panic!("redis-server did not start on any of 3 ports (extra arguments {extra:?})");
    }

    /// The server on `port`, once it answers; `None` if it exits or stays silent for 10 s.
    pub fn start_on(port: u16, extra: &[&str]) -> Option<Server> {
        let dir = std::env::temp_dir().join(format!("respload-test-{}-{port}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let child = Command::new("redis-server")
            .args(["--port", &port.to_string(), "--bind", "127.0.0.1", "-::1"])
            .args(["--save", "", "--appendonly", "no", "--daemonize", "no"])
            .args(["--dir", dir.to_str().unwrap(), "--logfile", "redis.log"])
            .args([
                "--unixsocket",
                dir.join("redis.sock").to_str().unwrap(),
                "--unixsocketperm",
                "700",
            ])
            .args(extra)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("redis-server must be installed (make test installs it)");
        let mut server = Server { port, dir, child };
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            // Exited: the port was taken (or the arguments are wrong, then every try fails).
            if matches!(server.child.try_wait(), Ok(Some(_))) {
                return None;
            }
            if let Ok(mut s) = TcpStream::connect(("127.0.0.1", port)) {
                let mut buf = [0u8; 64];
                // NOAUTH also proves the server is up.
                if s.write_all(b"PING\r\n").is_ok()
                    && s.read(&mut buf).map(|n| n > 0).unwrap_or(false)
                {
                    return Some(server);
                }
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        None
    }

    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}", self.port)
    }

    pub fn socket(&self) -> String {
        self.dir.join("redis.sock").display().to_string()
    }

    /// Run redis-cli against this server and return its trimmed output.
    pub fn cli(&self, args: &[&str]) -> String {
        let out = Command::new("redis-cli")
            .args(["-p", &self.port.to_string()])
            .args(args)
            .output()
            .expect("redis-cli must be installed");
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    }

    pub fn dbsize(&self) -> u64 {
        self.cli(&["DBSIZE"]).parse().unwrap()
    }

    /// `calls` of one command in INFO commandstats (0 when never called).
    pub fn calls(&self, command: &str) -> u64 {
        let info = self.cli(&["INFO", "commandstats"]);
        let prefix = format!("cmdstat_{}:calls=", command.to_lowercase());
        info.lines()
            .find_map(|l| l.strip_prefix(&prefix))
            .map(|rest| rest.split(',').next().unwrap().parse().unwrap())
            .unwrap_or(0)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// A TCP proxy in front of a real server that counts, per connection, how many requests
/// were in flight at once (requests forwarded minus replies returned), and how many of the
/// client's writes (reads here) brought requests while earlier ones were still unanswered,
/// and the RESP3 push messages the server sent (counted as replies in the in-flight figure).
/// A paced proxy ([`Proxy::start_paced`]) pauses after forwarding part of a pipeline's
/// replies, so the client has them while the rest are still owed, however busy the machine.
pub struct Proxy {
    pub port: u16,
    pub max_inflight: Arc<AtomicI64>,
    pub sent_while_busy: Arc<AtomicI64>,
    pub pushes: Arc<AtomicI64>,
}

impl Proxy {
    pub fn start(upstream: u16) -> Proxy {
        Proxy::start_paced(upstream, Duration::ZERO)
    }

    /// As [`Proxy::start`], and after each forwarded piece of the server's replies that
    /// leaves replies owed, a pause of `pause` before the next.
    pub fn start_paced(upstream: u16, pause: Duration) -> Proxy {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let max_inflight = Arc::new(AtomicI64::new(0));
        let max = Arc::clone(&max_inflight);
        let sent_while_busy = Arc::new(AtomicI64::new(0));
        let busy = Arc::clone(&sent_while_busy);
        let pushes = Arc::new(AtomicI64::new(0));
        let pushed = Arc::clone(&pushes);
        std::thread::spawn(move || {
            for client in listener.incoming() {
                let Ok(client) = client else { return };
                let Ok(server) = TcpStream::connect(("127.0.0.1", upstream)) else {
                    return;
                };
                let inflight = Arc::new(AtomicI64::new(0));
                let pipe = |mut from: TcpStream,
                            mut to: TcpStream,
                            delta: i64,
                            inflight: Arc<AtomicI64>,
                            (max, busy, pushed): (
                    Arc<AtomicI64>,
                    Arc<AtomicI64>,
                    Arc<AtomicI64>,
                )| {
                    std::thread::spawn(move || {
                        let mut framer = Framer::new();
                        let mut pending: Vec<u8> = Vec::new();
                        let mut buf = [0u8; 65536];
                        loop {
                            let n = match from.read(&mut buf) {
                                Ok(0) | Err(_) => break,
                                Ok(n) => n,
                            };
                            pending.extend_from_slice(&buf[..n]);
                            let before = inflight.load(Ordering::SeqCst);
                            let mut framed = 0;
                            while let Ok(Some((len, reply))) = framer.next(&pending) {
                                pending.drain(..len);
                                framed += 1;
                                if reply == Reply::Push {
                                    pushed.fetch_add(1, Ordering::SeqCst);
                                }
                                let now = inflight.fetch_add(delta, Ordering::SeqCst) + delta;
                                max.fetch_max(now, Ordering::SeqCst);
                            }
                            if delta > 0 && framed > 0 && before > 0 {
                                busy.fetch_add(1, Ordering::SeqCst);
                            }
                            if to.write_all(&buf[..n]).is_err() {
                                break;
                            }
                            if delta < 0 && inflight.load(Ordering::SeqCst) > 0 {
                                std::thread::sleep(pause);
                            }
                        }
                        let _ = to.shutdown(std::net::Shutdown::Both);
                    });
                };
                let (c2, s2) = (client.try_clone().unwrap(), server.try_clone().unwrap());
                let counters = (Arc::clone(&max), Arc::clone(&busy), Arc::clone(&pushed));
                pipe(client, server, 1, Arc::clone(&inflight), counters.clone());
                pipe(s2, c2, -1, inflight, counters);
            }
        });
        Proxy {
            port,
            max_inflight,
            sent_while_busy,
            pushes,
        }
    }
}

/// GETs of keys `keys[0]..=keys[1]` (values large enough that a pipeline's replies take
/// several reads), 2 connections, pipeline 8, 800 requests, one thread, through a new
/// [`Proxy`] in front of `upstream`, once eager and once in batches; `target` gives the
/// target for the proxy. Checks that every GET hit and that 8 were in flight at most, and
/// returns how many writes each sent while earlier requests were unanswered.
pub fn writes_while_busy(
    upstream: u16,
    keys: [u64; 2],
    target: impl Fn(&Proxy) -> serde_json::Value,
) -> [i64; 2] {
    ["eager", "batch"].map(|refill| {
        // Paced, so that an eager client has read part of each pipeline's replies before
        // the rest arrive even when the machine is busy (it failed once under load).
        let proxy = Proxy::start_paced(upstream, Duration::from_millis(2));
        let report = respload::run(&workload(serde_json::json!({
            "target": target(&proxy),
            "load": { "connections": 2, "pipeline": 8, "requests": 800, "threads": 1,
                      "refill": refill },
            "keys": { "range": keys },
            "commands": [{ "name": "get" }],
        })))
        .unwrap();
        let t = &report.totals;
        assert_eq!((t.ops, t.errors, t.hits), (800, 0, 800), "{refill}");
        assert_eq!(proxy.max_inflight.load(Ordering::SeqCst), 8, "{refill}");
        proxy.sent_while_busy.load(Ordering::SeqCst)
    })
}

/// Build a workload from JSON, panicking with the error on failure.
pub fn workload(spec: serde_json::Value) -> respload::Workload {
    respload::Workload::from_json_value(spec).unwrap_or_else(|e| panic!("{e}"))
}

/// Certificates for the TLS tests, made with the `openssl` command line in a temporary
/// directory (removed on drop). EC P-256 keys, so making them is quick.
///
/// - `ca` signs `server` (127.0.0.1 and localhost), `client`, `expired` (127.0.0.1, valid in
///   January 2020 only) and `wrongname` (only `other.example`);
/// - `other-ca` is an unrelated CA, and signs `other-client`.
///
/// Each name has `NAME.crt` and `NAME.key`.
pub struct Certs {
    pub dir: PathBuf,
}

impl Certs {
    pub fn generate() -> Certs {
        static N: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let n = N.fetch_add(1, Ordering::SeqCst);
        let dir = std::env::temp_dir().join(format!("respload-certs-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let certs = Certs { dir };
        certs.ca("ca", "respload test CA");
        certs.ca("other-ca", "an unrelated CA");
        let ip = "subjectAltName=IP:127.0.0.1,DNS:localhost";
        certs.leaf("server", "ca", "127.0.0.1", ip, "825");
        certs.leaf(
            "client",
            "ca",
            "respload client",
            "extendedKeyUsage=clientAuth",
            "825",
        );
        certs.expired("expired", "ca", ip);
        certs.leaf(
            "wrongname",
            "ca",
            "other.example",
            "subjectAltName=DNS:other.example",
            "825",
        );
        certs.leaf(
            "other-client",
            "other-ca",
            "stranger",
            "extendedKeyUsage=clientAuth",
            "825",
        );
        certs
    }

    /// The path of `file` (e.g. `ca.crt`) as a string.
    pub fn path(&self, file: &str) -> String {
        self.dir.join(file).display().to_string()
    }

    fn openssl(&self, args: &[&str]) {
        let out = Command::new("openssl")
            .args(args)
            .current_dir(&self.dir)
            .output()
            .expect("the openssl command line must be installed");
        assert!(
            out.status.success(),
            "openssl {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    fn ca(&self, name: &str, cn: &str) {
        let (key, crt, subj) = (
            format!("{name}.key"),
            format!("{name}.crt"),
            format!("/CN={cn}"),
        );
        self.openssl(&[
            "req",
            "-x509",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:prime256v1",
            "-nodes",
            "-keyout",
            &key,
            "-out",
            &crt,
            "-days",
            "825",
            "-subj",
            &subj,
        ]);
    }

    fn leaf(&self, name: &str, ca: &str, cn: &str, ext: &str, days: &str) {
        let (key, csr, crt, ext_file) = (
            format!("{name}.key"),
            format!("{name}.csr"),
            format!("{name}.crt"),
            format!("{name}.ext"),
        );
        std::fs::write(self.dir.join(&ext_file), format!("{ext}\n")).unwrap();
        self.openssl(&[
            "req",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:prime256v1",
            "-nodes",
            "-keyout",
            &key,
            "-out",
            &csr,
            "-subj",
            &format!("/CN={cn}"),
        ]);
        self.openssl(&[
            "x509",
            "-req",
            "-in",
            &csr,
            "-CA",
            &format!("{ca}.crt"),
            "-CAkey",
            &format!("{ca}.key"),
            "-CAcreateserial",
            "-days",
            days,
            "-extfile",
            &ext_file,
            "-out",
            &crt,
        ]);
    }
}

impl Certs {
    /// A certificate valid in January 2020 only, issued with `openssl ca` (which, unlike
    /// `openssl x509` of OpenSSL 3.0, takes a start and an end date).
    fn expired(&self, name: &str, ca: &str, ext: &str) {
        let (key, csr, crt, ext_file, cnf) = (
            format!("{name}.key"),
            format!("{name}.csr"),
            format!("{name}.crt"),
            format!("{name}.ext"),
            format!("{name}.cnf"),
        );
        std::fs::write(self.dir.join(&ext_file), format!("{ext}\n")).unwrap();
        std::fs::write(
            self.dir.join(&cnf),
            "[ca]\ndefault_ca = d\n[d]\ndatabase = index.txt\nnew_certs_dir = .\n\
             serial = serial\ndefault_md = sha256\npolicy = p\n[p]\ncommonName = supplied\n",
        )
        .unwrap();
        std::fs::write(self.dir.join("index.txt"), "").unwrap();
        std::fs::write(self.dir.join("serial"), "1000\n").unwrap();
        self.openssl(&[
            "req",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:prime256v1",
            "-nodes",
            "-keyout",
            &key,
            "-out",
            &csr,
            "-subj",
            "/CN=127.0.0.1",
        ]);
        self.openssl(&[
            "ca",
            "-batch",
            "-notext",
            "-config",
            &cnf,
            "-cert",
            &format!("{ca}.crt"),
            "-keyfile",
            &format!("{ca}.key"),
            "-in",
            &csr,
            "-out",
            &crt,
            "-extfile",
            &ext_file,
            "-startdate",
            "20200101000000Z",
            "-enddate",
            "20200201000000Z",
        ]);
    }
}

impl Drop for Certs {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// A redis-server that also listens for TLS on `tls_port`, with the certificate `NAME.crt` of
/// `certs` and `ca.crt` to check client certificates. Its plain port stays open for the
/// harness (`cli`, `calls`) and for the tests that mix up the two ports.
pub struct TlsServer {
    pub server: Server,
    pub tls_port: u16,
}

impl TlsServer {
    /// `auth_clients`: `no` (no client certificate asked), `optional` or `yes` (required).
    pub fn start(certs: &Certs, cert: &str, auth_clients: &str) -> TlsServer {
        let tls_port = free_port();
        let (port, crt, key, ca) = (
            tls_port.to_string(),
            certs.path(&format!("{cert}.crt")),
            certs.path(&format!("{cert}.key")),
            certs.path("ca.crt"),
        );
        let server = Server::start(&[
            "--tls-port",
            &port,
            "--tls-cert-file",
            &crt,
            "--tls-key-file",
            &key,
            "--tls-ca-cert-file",
            &ca,
            "--tls-auth-clients",
            auth_clients,
        ]);
        TlsServer { server, tls_port }
    }

    /// `rediss://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("rediss://127.0.0.1:{}", self.tls_port)
    }
}

/// A Redis Cluster of real servers on free loopback ports: `primaries` primaries with
/// `replicas` replicas each, joined with `redis-cli --cluster create`; killed on drop.
pub struct Cluster {
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

impl Server {
    /// Send each command (one per line) through one redis-cli and return one line per reply.
    pub fn cli_batch(&self, commands: &[String]) -> Vec<String> {
        use std::io::Write as _;
        let mut child = Command::new("redis-cli")
            .args(["-p", &self.port.to_string()])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("redis-cli must be installed");
        let mut input = child.stdin.take().unwrap();
        for c in commands {
            writeln!(input, "{c}").unwrap();
        }
        drop(input);
        let out = child.wait_with_output().unwrap();
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(|l| l.to_string())
            .collect()
    }

    /// Kill the server now (SIGKILL), as a crash would.
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// This node's cluster id.
    pub fn node_id(&self) -> String {
        self.cli(&["CLUSTER", "MYID"])
    }
}
