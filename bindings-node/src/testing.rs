//! Throwaway servers for `respload/testing`: the `respload-testing` crate's servers and
//! clusters, started off the JS thread; `testing.js` wraps them with its RESP client and
//! `asyncDispose`.

use napi::bindgen_prelude::*;
use napi::JsError;
use napi_derive::napi;
use respload_testing::{
    ClientOptions, ClientTls, Connection, Error, Reply, Server, ServerOptions, Tls,
};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Options of `startServers` (camelCase, as `startRedis` and `startCluster` take them).
#[napi(object)]
#[derive(Default)]
pub struct TestServerOptions {
    /// `requirepass` (and `masterauth`).
    pub password: Option<String>,
    /// Extra redis-server arguments.
    pub args: Option<Vec<String>>,
    /// TLS only, with throwaway certificates.
    pub tls: Option<bool>,
    /// Also require a client certificate (needs `tls`).
    pub tls_auth_clients: Option<bool>,
    /// The redis-server binary.
    pub redis_server: Option<String>,
    /// The redis-cli binary (clusters).
    pub redis_cli: Option<String>,
    /// How long to wait for it (for a cluster, all of it).
    pub start_timeout_ms: Option<f64>,
    /// A Redis Cluster rather than one server.
    pub cluster: Option<bool>,
    /// A cluster's primaries (at least 3).
    pub primaries: Option<u32>,
    /// A cluster's replicas per primary.
    pub replicas: Option<u32>,
}

/// One redis-server under its watchdog; stopped by `stop()` or when collected.
#[napi]
pub struct TestServer {
    inner: Arc<Mutex<Option<Server>>>,
    port: u16,
    pid: u32,
    dir: String,
    certs_dir: Option<String>,
}

impl TestServer {
    fn new(server: Server) -> TestServer {
        TestServer {
            port: server.port,
            pid: server.pid(),
            dir: server.dir.display().to_string(),
            certs_dir: server.certs().map(|c| c.dir.display().to_string()),
            inner: Arc::new(Mutex::new(Some(server))),
        }
    }
}

#[napi]
impl TestServer {
    /// The port clients use (the TLS port when it has TLS).
    #[napi(getter)]
    pub fn port(&self) -> u32 {
        u32::from(self.port)
    }

    /// The redis-server process id.
    #[napi(getter)]
    pub fn pid(&self) -> u32 {
        self.pid
    }

    /// Its working directory (removed when it stops).
    #[napi(getter)]
    pub fn dir(&self) -> String {
        self.dir.clone()
    }

    /// Its certificates' directory, when it has TLS.
    #[napi(getter)]
    pub fn certs_dir(&self) -> Option<String> {
        self.certs_dir.clone()
    }

    /// Whether the server process runs.
    #[napi]
    pub fn running(&self) -> bool {
        self.inner
            .lock()
            .map(|s| s.as_ref().is_some_and(Server::running))
            .unwrap_or(false)
    }

    /// Stop it and remove its directory (idempotent), off the JS thread.
    #[napi(ts_return_type = "Promise<void>")]
    pub fn stop(&self) -> AsyncTask<StopServer> {
        AsyncTask::new(StopServer {
            server: Arc::clone(&self.inner),
        })
    }
}

/// Stops a server on a libuv worker thread (its watchdog is waited for).
pub struct StopServer {
    server: Arc<Mutex<Option<Server>>>,
}

impl Task for StopServer {
    type Output = ();
    type JsValue = ();

    fn compute(&mut self) -> Result<()> {
        let server = self.server.lock().ok().and_then(|mut s| s.take());
        drop(server);
        Ok(())
    }

    fn resolve(&mut self, _env: Env, _: ()) -> Result<()> {
        Ok(())
    }
}

/// The crate's options from the flat JavaScript ones.
fn options(o: &TestServerOptions) -> std::result::Result<ServerOptions, Error> {
    let tls = o.tls.unwrap_or(false);
    let auth = o.tls_auth_clients.unwrap_or(false);
    if auth && !tls {
        return Err(Error::Invalid(
            "tlsAuthClients: true needs tls: true (client certificates are TLS)".into(),
        ));
    }
    Ok(ServerOptions {
        password: o.password.clone(),
        args: o.args.clone().unwrap_or_default(),
        tls: tls.then(|| Tls::throwaway(auth)).transpose()?,
        redis_server: o.redis_server.clone(),
        redis_cli: o.redis_cli.clone(),
        start_timeout: o
            .start_timeout_ms
            .filter(|ms| ms.is_finite() && *ms > 0.0)
            .map(|ms| Duration::from_secs_f64(ms / 1000.0)),
        port: None,
    })
}

/// Starts a server or a cluster on a libuv worker thread.
pub struct Start {
    options: TestServerOptions,
}

impl Start {
    fn launch(&self) -> std::result::Result<Vec<Server>, Error> {
        let o = &self.options;
        let cluster = (o.cluster == Some(true)).then(|| {
            let primaries = o.primaries.unwrap_or(3) as usize;
            (primaries, o.replicas.unwrap_or(1) as usize)
        });
        respload_testing::start_servers(cluster, options(o)?)
    }
}

impl Task for Start {
    // The error is made a JavaScript one (with its `code`) on the JS thread.
    type Output = std::result::Result<Vec<Server>, Error>;
    type JsValue = Vec<TestServer>;

    fn compute(&mut self) -> Result<Self::Output> {
        Ok(self.launch())
    }

    fn resolve(&mut self, env: Env, started: Self::Output) -> Result<Vec<TestServer>> {
        match started {
            Ok(servers) => Ok(servers.into_iter().map(TestServer::new).collect()),
            Err(e) => Err(to_js(&env, &e)),
        }
    }
}

/// Start a redis-server on a free 127.0.0.1 port, or with `cluster` a Redis Cluster
/// (`primaries`, default 3; `replicas`, default 1); resolves with the servers (a cluster's
/// primaries first, as created) once they accept connections. Rejects with `code`
/// `ERR_RESPLOAD_TESTING_NOT_FOUND` when a binary is missing, `ERR_RESPLOAD_TESTING_INVALID`
/// for bad options, and `ERR_RESPLOAD_TESTING_START` when they do not start.
#[napi(ts_return_type = "Promise<TestServer[]>")]
pub fn start_servers(options: Option<TestServerOptions>) -> AsyncTask<Start> {
    AsyncTask::new(Start {
        options: options.unwrap_or_default(),
    })
}

/// Where `TestClient` connects (camelCase).
#[napi(object)]
pub struct TestClientOptions {
    /// The host name or address.
    pub host: String,
    /// The port.
    pub port: u32,
    /// TLS (trusting `caFile`, else Mozilla's roots).
    pub tls: Option<bool>,
    /// The CA file (PEM).
    pub ca_file: Option<String>,
    /// A client certificate (PEM), with `key`.
    pub cert: Option<String>,
    /// Its private key (PEM).
    pub key: Option<String>,
    /// The ACL user.
    pub user: Option<String>,
    /// The password (`AUTH`).
    pub password: Option<String>,
    /// The database to `SELECT`.
    pub db: Option<u32>,
    /// Connect, read and write timeout (default 10 000 ms).
    pub timeout_ms: Option<f64>,
}

/// The helper's connection of a `RedisServer` (`command()`): connected at the first
/// command, again after one that failed; commands run one at a time off the JS thread.
#[napi]
pub struct TestClient {
    connection: Arc<Connection>,
}

#[napi]
impl TestClient {
    /// A client for `options` (nothing is connected yet).
    #[napi(constructor)]
    pub fn new(options: TestClientOptions) -> Result<Self> {
        let port = u16::try_from(options.port).map_err(|_| {
            napi::Error::from_reason(format!("port = {}: not a port", options.port))
        })?;
        let timeout = options.timeout_ms.unwrap_or(10_000.0);
        if !(timeout.is_finite() && timeout > 0.0) {
            return Err(napi::Error::from_reason(format!(
                "timeoutMs = {timeout}: must be a positive number"
            )));
        }
        let tls = options.tls.unwrap_or(false).then_some(ClientTls {
            ca_file: options.ca_file,
            cert: options.cert,
            key: options.key,
        });
        Ok(TestClient {
            connection: Arc::new(Connection::new(ClientOptions {
                host: options.host,
                port,
                tls,
                user: options.user,
                password: options.password,
                db: options.db.unwrap_or(0),
                timeout: Duration::from_secs_f64(timeout / 1000.0),
            })),
        })
    }

    /// Send one command; resolves with its reply as JSON text: strings, numbers, `null`,
    /// arrays, and `{"error": MESSAGE}` for an error reply. Rejects with `code`
    /// `ERR_RESPLOAD_TESTING_IO` when the connection fails (the next command connects again)
    /// and `ERR_RESPLOAD_TESTING_REPLY` when `AUTH` or `SELECT` is refused.
    #[napi(ts_return_type = "Promise<string>")]
    pub fn command(&self, args: Vec<Either<String, Buffer>>) -> AsyncTask<Command> {
        let args = args
            .into_iter()
            .map(|a| match a {
                Either::A(s) => s.into_bytes(),
                Either::B(b) => b.to_vec(),
            })
            .collect();
        AsyncTask::new(Command {
            connection: Arc::clone(&self.connection),
            args,
        })
    }

    /// Close the connection (the next command connects again).
    #[napi]
    pub fn close(&self) {
        self.connection.close();
    }
}

/// One command of a `TestClient`, on a libuv worker thread.
pub struct Command {
    connection: Arc<Connection>,
    args: Vec<Vec<u8>>,
}

impl Task for Command {
    type Output = std::result::Result<Reply, Error>;
    type JsValue = String;

    fn compute(&mut self) -> Result<Self::Output> {
        let args: Vec<&[u8]> = self.args.iter().map(Vec::as_slice).collect();
        Ok(self.connection.call(&args))
    }

    fn resolve(&mut self, env: Env, reply: Self::Output) -> Result<String> {
        match reply {
            Ok(reply) => Ok(to_json(reply).to_string()),
            Err(e) => Err(to_js(&env, &e)),
        }
    }
}

/// A reply as JSON: bulk strings decoded as UTF-8 (with replacement), error replies as
/// `{"error": MESSAGE}`.
fn to_json(reply: Reply) -> serde_json::Value {
    use serde_json::Value;
    match reply {
        Reply::Status(s) => Value::String(s),
        Reply::Error(m) => serde_json::json!({ "error": m }),
        Reply::Int(n) => Value::from(n),
        Reply::Bulk(b) => Value::String(String::from_utf8_lossy(&b).into_owned()),
        Reply::Nil => Value::Null,
        Reply::Array(items) => Value::Array(items.into_iter().map(to_json).collect()),
    }
}

/// A JavaScript `Error` whose `code` says which kind of failure it is.
fn to_js(env: &Env, e: &Error) -> napi::Error {
    let code = match e {
        Error::NotFound(_) => "ERR_RESPLOAD_TESTING_NOT_FOUND",
        Error::Invalid(_) => "ERR_RESPLOAD_TESTING_INVALID",
        Error::Start(_) => "ERR_RESPLOAD_TESTING_START",
        Error::Reply(_) => "ERR_RESPLOAD_TESTING_REPLY",
        Error::Io(_) => "ERR_RESPLOAD_TESTING_IO",
    };
    let value = JsError::from(napi::Error::new(code, e.to_string())).into_unknown(*env);
    napi::Error::from(value)
}
