//! Test harness: real redis-server processes on free loopback ports, and a counting proxy.
#![allow(dead_code)]

use respload::resp::Framer;
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
        let port = free_port();
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
        let server = Server { port, dir, child };
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if let Ok(mut s) = TcpStream::connect(("127.0.0.1", port)) {
                let mut buf = [0u8; 64];
                // NOAUTH also proves the server is up.
                if s.write_all(b"PING\r\n").is_ok()
                    && s.read(&mut buf).map(|n| n > 0).unwrap_or(false)
                {
                    return server;
                }
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        panic!("redis-server on port {port} did not start");
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
/// were in flight at once (requests forwarded minus replies returned).
pub struct Proxy {
    pub port: u16,
    pub max_inflight: Arc<AtomicI64>,
}

impl Proxy {
    pub fn start(upstream: u16) -> Proxy {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let max_inflight = Arc::new(AtomicI64::new(0));
        let max = Arc::clone(&max_inflight);
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
                            max: Arc<AtomicI64>| {
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
                            while let Ok(Some((len, _))) = framer.next(&pending) {
                                pending.drain(..len);
                                let now = inflight.fetch_add(delta, Ordering::SeqCst) + delta;
                                max.fetch_max(now, Ordering::SeqCst);
                            }
                            if to.write_all(&buf[..n]).is_err() {
                                break;
                            }
                        }
                        let _ = to.shutdown(std::net::Shutdown::Both);
                    });
                };
                let (c2, s2) = (client.try_clone().unwrap(), server.try_clone().unwrap());
                pipe(client, server, 1, Arc::clone(&inflight), Arc::clone(&max));
                pipe(s2, c2, -1, inflight, Arc::clone(&max));
            }
        });
        Proxy { port, max_inflight }
    }
}

/// Build a workload from JSON, panicking with the error on failure.
pub fn workload(spec: serde_json::Value) -> respload::Workload {
    respload::Workload::from_json_value(spec).unwrap_or_else(|e| panic!("{e}"))
}
