//! One redis-server process: plain ([`Server`]), with TLS ([`TlsServer`]), or a primary with a
//! replica ([`primary_and_replica`]).

use crate::{free_port, Certs};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A redis-server child process, killed and its directory removed on drop.
///
/// It listens on 127.0.0.1 (and `::1`, when the machine has it) at `port`, and on a Unix socket
/// in `dir` ([`Server::socket`]); persistence is off unless the extra arguments turn it on.
pub struct Server {
    /// The TCP port.
    pub port: u16,
    /// The server's working directory (its log, socket and any dump), which tests may also
    /// use for their own files: it is removed on drop.
    pub dir: PathBuf,
    child: Child,
}

impl Server {
    /// Start a server with persistence off plus `extra` arguments (`--name value` pairs).
    ///
    /// Panics when it does not come up on any of 3 ports.
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

    /// `redis://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}", self.port)
    }

    /// The path of the server's Unix socket.
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

    /// Send each command (one per line) through one redis-cli and return one line per reply.
    pub fn cli_batch(&self, commands: &[String]) -> Vec<String> {
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
        // Closed, so that redis-cli ends once it has sent them all.
        drop(input);
        let out = child.wait_with_output().unwrap();
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(|l| l.to_string())
            .collect()
    }

    /// The number of keys in database 0.
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

    /// One field of `INFO` (`""` when the server does not give it).
    pub fn info(&self, field: &str) -> String {
        let text = self.cli(&["INFO"]);
        let prefix = format!("{field}:");
        text.lines()
            .find_map(|l| l.strip_prefix(&prefix))
            .unwrap_or_default()
            .trim()
            .to_string()
    }

    /// This node's cluster id.
    pub fn node_id(&self) -> String {
        self.cli(&["CLUSTER", "MYID"])
    }

    /// Kill the server now (SIGKILL), as a crash would. Its directory stays until drop.
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.kill();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// A redis-server that also listens for TLS on `tls_port`, with the certificate `NAME.crt` of
/// [`Certs`] and `ca.crt` to check client certificates. Its plain port stays open for the
/// harness (`cli`, `calls`) and for the tests that mix up the two ports.
pub struct TlsServer {
    /// The server; its `port` is the plain one.
    pub server: Server,
    /// The TLS port.
    pub tls_port: u16,
}

impl TlsServer {
    /// Start a server presenting the certificate `cert` of `certs` (`server`, `expired`,
    /// `wrongname`...). `auth_clients`: `no` (no client certificate asked), `optional` or
    /// `yes` (required, checked against `ca.crt`).
    pub fn start(certs: &Certs, cert: &str, auth_clients: &str) -> TlsServer {
        let tls_port = free_port();
        let server = Server::start(&[
            "--tls-port",
            &tls_port.to_string(),
            "--tls-cert-file",
            &certs.path(&format!("{cert}.crt")),
            "--tls-key-file",
            &certs.path(&format!("{cert}.key")),
            "--tls-ca-cert-file",
            &certs.path("ca.crt"),
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

/// A primary and a replica of it, returned once the replica has synced
/// (`master_link_status:up`); panics after 10 s.
pub fn primary_and_replica() -> (Server, Server) {
    // No delay before a diskless sync: the replica is up at once.
    let primary = Server::start(&["--repl-diskless-sync-delay", "0"]);
    let port = primary.port.to_string();
    let replica = Server::start(&["--replicaof", "127.0.0.1", &port]);
    let deadline = Instant::now() + Duration::from_secs(10);
    while replica.info("master_link_status") != "up" {
        assert!(Instant::now() < deadline, "the replica did not sync");
        std::thread::sleep(Duration::from_millis(50));
    }
    (primary, replica)
}
