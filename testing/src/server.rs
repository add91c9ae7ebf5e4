//! One redis-server process: plain or with TLS ([`Server`], started from [`ServerOptions`]),
//! the older TLS pair ([`TlsServer`]), or a primary with replicas ([`primary_with_replicas`]).

use crate::error::program;
use crate::watchdog::Watchdog;
use crate::{free_port, Certs, Error, ServerOptions, Tls};
use std::io::Write;
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

/// How many ports [`Server::launch`] tries: another process may take a port found free before
/// redis-server binds it (another test, or the bus port picked for this very node).
const TRIES: usize = 5;

/// A redis-server process on free loopback ports, under a watchdog: it is killed and its
/// directory removed when this is dropped, or when this process ends however it ends.
///
/// It listens on 127.0.0.1 (and `::1`, when the machine has it) and on a Unix socket in `dir`
/// ([`Server::socket`]); persistence is off unless the extra arguments turn it on.
#[derive(Debug)]
pub struct Server {
    /// The port clients use: the plain port, or the TLS port when the server has TLS only.
    pub port: u16,
    /// The TLS port, when it has one.
    pub tls_port: Option<u16>,
    /// The server's working directory (its log, socket and any dump), which tests may also
    /// use for their own files: it is removed when the server stops.
    pub dir: PathBuf,
    /// Its `requirepass`.
    pub password: Option<String>,
    tls: Option<Tls>,
    redis_cli: Option<String>,
    pid: u32,
    watchdog: Option<Watchdog>,
}

impl Server {
    /// Start a server with persistence off plus `extra` arguments (`--name value` pairs).
    ///
    /// Panics when it does not come up.
    pub fn start(extra: &[&str]) -> Server {
        Server::launch(&ServerOptions::with_args(extra)).unwrap_or_else(|e| panic!("{e}"))
    }

    /// Start a server as `options` say, once it accepts connections; tries other ports when
    /// one was taken.
    pub fn launch(options: &ServerOptions) -> Result<Server, Error> {
        if let Some(port) = options.port {
            return Server::launch_on(port, options).map_err(|e| match e {
                Taken(log) => Error::Start(format!(
                    "port {port} is taken\n--- redis-server log ---\n{log}"
                )),
                Failed(e) => e,
            });
        }
        let mut last = None;
        for _ in 0..TRIES {
            match Server::launch_on(free_port(), options) {
                Ok(server) => return Ok(server),
                Err(Taken(log)) => last = Some(log),
                Err(Failed(e)) => return Err(e),
            }
        }
        Err(Error::Start(format!(
            "redis-server did not start on any of {TRIES} ports\n--- redis-server log ---\n{}",
            last.unwrap_or_default()
        )))
    }

    /// The server on `port`, once it answers; `None` if it exits or stays silent for 10 s.
    pub fn start_on(port: u16, extra: &[&str]) -> Option<Server> {
        let options = ServerOptions {
            port: Some(port),
            ..ServerOptions::with_args(extra)
        };
        Server::launch(&options).ok()
    }

    /// Start on `port` (the TLS port when TLS only; else a TLS port is picked beside it).
    fn launch_on(port: u16, options: &ServerOptions) -> Result<Server, Failure> {
        let exe = program(
            options.redis_server.as_deref(),
            "RESPLOAD_REDIS_SERVER",
            "redis-server",
            "redis-server",
        )
        .map_err(Failed)?;
        let dir = new_dir(port).map_err(Failed)?;
        let tls_port = options
            .tls
            .as_ref()
            .map(|t| if t.only { port } else { free_port() });
        let plain = match &options.tls {
            Some(t) if t.only => 0,
            _ => port,
        };
        let mut argv: Vec<String> = vec![exe.display().to_string()];
        let socket = dir.join("redis.sock").display().to_string();
        let dir_arg = dir.display().to_string();
        argv.extend(
            [
                "--port",
                &plain.to_string(),
                "--bind",
                "127.0.0.1",
                "-::1",
                "--save",
                "",
                "--appendonly",
                "no",
                "--daemonize",
                "no",
                "--dir",
                &dir_arg,
                "--logfile",
                "redis.log",
                "--unixsocket",
                &socket,
                "--unixsocketperm",
                "700",
            ]
            .map(String::from),
        );
        if let (Some(tls), Some(p)) = (&options.tls, tls_port) {
            argv.extend(tls.args(p));
        }
        if let Some(pw) = &options.password {
            argv.extend(["--requirepass", pw, "--masterauth", pw].map(String::from));
        }
        argv.extend(options.args.iter().cloned());
        let (watchdog, pid) = Watchdog::server(&dir, &argv).map_err(|e| {
            // No watchdog holds the directory yet.
            let _ = std::fs::remove_dir_all(&dir);
            Failed(e)
        })?;
        let server = Server {
            port,
            tls_port,
            dir,
            password: options.password.clone(),
            tls: options.tls.clone(),
            redis_cli: options.redis_cli.clone(),
            pid,
            watchdog: Some(watchdog),
        };
        let deadline = Instant::now() + options.start_timeout.unwrap_or(Duration::from_secs(10));
        while Instant::now() < deadline {
            let log = server.log();
            if log.contains("Address already in use") {
                return Err(Taken(tail(&log)));
            }
            if !server.running() {
                let stderr = std::fs::read_to_string(server.dir.join("stderr.log"));
                return Err(Failed(Error::Start(format!(
                    "redis-server exited at start\n--- redis-server log ---\n{}{}",
                    tail(&log),
                    stderr.unwrap_or_default().trim_end()
                ))));
            }
            if log.to_lowercase().contains("ready to accept connections")
                && TcpStream::connect(("127.0.0.1", port)).is_ok()
            {
                return Ok(server);
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        let log = tail(&server.log());
        Err(Failed(Error::Start(format!(
            "redis-server on port {port} did not answer in time\n--- redis-server log ---\n{log}"
        ))))
    }

    /// `redis://127.0.0.1:PORT` (`rediss://` when TLS only), without the password.
    pub fn url(&self) -> String {
        let scheme = if self.tls_only() { "rediss" } else { "redis" };
        format!("{scheme}://127.0.0.1:{}", self.port)
    }

    /// The path of the server's Unix socket.
    pub fn socket(&self) -> String {
        self.dir.join("redis.sock").display().to_string()
    }

    /// Its certificates, when it has TLS.
    pub fn certs(&self) -> Option<&Certs> {
        self.tls.as_ref().map(|t| &t.certs)
    }

    fn tls_only(&self) -> bool {
        self.tls.as_ref().is_some_and(|t| t.only)
    }

    /// The redis-server process's id.
    pub fn pid(&self) -> u32 {
        self.pid
    }

    /// Whether the process is still running (it is not once [`Server::kill`]ed).
    pub fn running(&self) -> bool {
        self.watchdog.is_some() && alive(self.pid)
    }

    /// The server's log so far.
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.join("redis.log")).unwrap_or_default()
    }

    /// A redis-cli for this server: its port, password and, when TLS only, certificates.
    fn redis_cli(&self) -> Command {
        let exe = (self.redis_cli.clone())
            .or_else(|| std::env::var("RESPLOAD_REDIS_CLI").ok())
            .unwrap_or("redis-cli".into());
        let mut c = Command::new(exe);
        c.args(["-p", &self.port.to_string()]);
        if let Some(pw) = &self.password {
            c.args(["-a", pw, "--no-auth-warning"]);
        }
        if let (true, Some(certs)) = (self.tls_only(), self.certs()) {
            c.args(["--tls", "--cacert", &certs.path("ca.crt")]);
            c.args(["--cert", &certs.path("client.crt")]);
            c.args(["--key", &certs.path("client.key")]);
        }
        c
    }

    /// Run redis-cli against this server and return its trimmed output.
    pub fn cli(&self, args: &[&str]) -> String {
        let out = self
            .redis_cli()
            .args(args)
            .output()
            .expect("redis-cli must be installed");
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    }

    /// Send each command (one per line) through one redis-cli and return one line per reply.
    pub fn cli_batch(&self, commands: &[String]) -> Vec<String> {
        let mut child = self
            .redis_cli()
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

    /// Kill the server now (SIGKILL), as a crash would, and wait until it is gone. Its
    /// directory stays until [`Server::stop`] or drop.
    pub fn kill(&mut self) {
        if self.watchdog.is_none() {
            return;
        }
        signal_kill(self.pid);
        let deadline = Instant::now() + Duration::from_secs(10);
        while alive(self.pid) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    /// Stop the server and remove its directory (idempotent; dropping does it too).
    pub fn stop(&mut self) {
        // The watchdog kills it and removes the directory once its pipe closes.
        drop(self.watchdog.take());
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Why a start failed: the port was taken (try another), or anything else.
enum Failure {
    Taken(String),
    Failed(Error),
}
use Failure::{Failed, Taken};

/// A new directory for a server on `port`.
fn new_dir(port: u16) -> Result<PathBuf, Error> {
    // Several per process (tests run in parallel): the pid and a counter name each.
    static N: AtomicU32 = AtomicU32::new(0);
    let n = N.fetch_add(1, Ordering::Relaxed);
    let dir =
        std::env::temp_dir().join(format!("respload-redis-{}-{n}-{port}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir)?;
    Ok(dir)
}

/// The last 10 lines of a log.
fn tail(log: &str) -> String {
    let lines: Vec<&str> = log.lines().collect();
    lines[lines.len().saturating_sub(10)..].join("\n") + "\n"
}

/// Whether `pid` runs: not gone, and not a zombie its watchdog has yet to reap. A killed
/// redis-server's main thread turns zombie before its other threads are gone, and its
/// sockets close only with the last: until then it still counts as running.
fn alive(pid: u32) -> bool {
    if cfg!(target_os = "linux") {
        let proc = Path::new("/proc").join(pid.to_string());
        let stat = std::fs::read_to_string(proc.join("stat"));
        // The state follows the command name, which is in parentheses.
        let zombie = stat.is_ok_and(|s| {
            s.rsplit_once(") ")
                .is_some_and(|(_, rest)| rest.starts_with('Z') || rest.starts_with('X'))
        });
        let threads = std::fs::read_dir(proc.join("task")).map_or(0, |d| d.count());
        return threads > 1 || (threads == 1 && !zombie);
    }
    exists(pid)
}

/// SIGKILL to `pid`.
#[cfg(unix)]
fn signal_kill(pid: u32) {
    // SAFETY: a plain system call on the pid of our watchdog's child.
    unsafe { libc::kill(pid as libc::pid_t, libc::SIGKILL) };
}

/// Whether `pid` exists (a zombie too).
#[cfg(unix)]
fn exists(pid: u32) -> bool {
    // SAFETY: signal 0 only checks that the process exists.
    unsafe { libc::kill(pid as libc::pid_t, 0) == 0 }
}

// Elsewhere (Windows) the bindings build, but no server starts: the watchdog is a `sh` script.
#[cfg(not(unix))]
fn signal_kill(_pid: u32) {}

#[cfg(not(unix))]
fn exists(_pid: u32) -> bool {
    false
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
    /// `yes` (required, checked against `ca.crt`). Panics when it does not come up.
    pub fn start(certs: &Certs, cert: &str, auth_clients: &str) -> TlsServer {
        let tls = Tls {
            cert: cert.into(),
            ..Tls::new(certs, auth_clients, false)
        };
        let options = ServerOptions {
            tls: Some(tls),
            ..ServerOptions::default()
        };
        let server = Server::launch(&options).unwrap_or_else(|e| panic!("{e}"));
        let tls_port = server.tls_port.expect("a TLS port");
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
    let (primary, mut replicas) =
        primary_with_replicas(1, &ServerOptions::default()).unwrap_or_else(|e| panic!("{e}"));
    (primary, replicas.remove(0))
}

/// A primary and `replicas` replicas of it, each started as `options` say (a password is
/// also `masterauth`, so they sync), returned once every replica has synced
/// (`master_link_status:up`).
pub fn primary_with_replicas(
    replicas: usize,
    options: &ServerOptions,
) -> Result<(Server, Vec<Server>), Error> {
    // No delay before a diskless sync: a replica is up at once.
    let mut first = options.clone();
    first
        .args
        .extend(["--repl-diskless-sync-delay".into(), "0".into()]);
    let primary = Server::launch(&first)?;
    let mut follow = options.clone();
    follow.port = None;
    follow.args.extend([
        "--replicaof".into(),
        "127.0.0.1".into(),
        primary.port.to_string(),
    ]);
    if follow.tls.is_some() {
        follow
            .args
            .extend(["--tls-replication".into(), "yes".into()]);
    }
    let replicas: Vec<Server> = (0..replicas)
        .map(|_| Server::launch(&follow))
        .collect::<Result<_, _>>()?;
    let deadline = Instant::now() + options.start_timeout.unwrap_or(Duration::from_secs(10));
    while !replicas
        .iter()
        .all(|r| r.info("master_link_status") == "up")
    {
        if Instant::now() > deadline {
            return Err(Error::Start(format!(
                "the replicas of 127.0.0.1:{} did not sync in time",
                primary.port
            )));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    Ok((primary, replicas))
}
