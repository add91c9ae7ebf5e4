//! Throwaway servers for `respload.testing`: the `respload-testing` crate's servers and
//! clusters, which the Python module wraps in its context managers and RESP client.

use pyo3::exceptions::{PyConnectionError, PyFileNotFoundError, PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyList;
use respload_testing::{
    ClientOptions, ClientTls, Connection, Error, Reply, Server, ServerOptions, Tls,
};
use std::time::Duration;

/// One redis-server under its watchdog; stopped by `stop()` or when collected.
#[pyclass(module = "respload._native")]
pub struct TestServer {
    inner: Option<Server>,
    /// The port clients use (the TLS port when the server has TLS).
    #[pyo3(get)]
    port: u16,
    /// Its working directory.
    #[pyo3(get)]
    dir: String,
    /// The directory of its certificates, when it has TLS.
    #[pyo3(get)]
    certs_dir: Option<String>,
}

impl TestServer {
    fn new(server: Server) -> TestServer {
        TestServer {
            port: server.port,
            dir: server.dir.display().to_string(),
            certs_dir: server.certs().map(|c| c.dir.display().to_string()),
            inner: Some(server),
        }
    }
}

#[pymethods]
impl TestServer {
    /// Whether the server process runs.
    fn running(&self) -> bool {
        self.inner.as_ref().is_some_and(Server::running)
    }

    /// Kill the server (SIGKILL), as a crash would; its directory stays until `stop()`.
    fn kill(&mut self, py: Python<'_>) {
        if let Some(s) = self.inner.as_mut() {
            py.detach(|| s.kill());
        }
    }

    /// Stop the server and remove its directory (idempotent).
    fn stop(&mut self, py: Python<'_>) {
        let server = self.inner.take();
        py.detach(move || drop(server));
    }
}

/// Start a redis-server on a free 127.0.0.1 port (or on `port`), or with `cluster`
/// (`(primaries, replicas)`) a Redis Cluster; every server TLS only, with throwaway
/// certificates, when `tls` (a cluster's bus and replication too). The servers, a cluster's
/// primaries first as created. Raises `FileNotFoundError` when a binary is missing,
/// `ValueError` for bad options, `RuntimeError` when they do not start.
#[pyfunction]
#[pyo3(signature = (*, cluster=None, password=None, args=Vec::new(), tls=false, tls_auth_clients=false, redis_server=None, start_timeout=None, port=None))]
#[allow(clippy::too_many_arguments)]
pub fn start_servers(
    py: Python<'_>,
    cluster: Option<(usize, usize)>,
    password: Option<String>,
    args: Vec<String>,
    tls: bool,
    tls_auth_clients: bool,
    redis_server: Option<String>,
    start_timeout: Option<f64>,
    port: Option<u16>,
) -> PyResult<Vec<TestServer>> {
    py.detach(|| {
        if tls_auth_clients && !tls {
            return Err(Error::Invalid(
                "tls_auth_clients = True needs tls = True (client certificates are TLS)".into(),
            ));
        }
        if let Some(t) = start_timeout.filter(|t| !(t.is_finite() && *t > 0.0)) {
            return Err(Error::Invalid(format!(
                "start_timeout = {t}: must be a positive number of seconds"
            )));
        }
        let server = ServerOptions {
            password,
            args,
            tls: tls.then(|| Tls::throwaway(tls_auth_clients)).transpose()?,
            redis_server,
            start_timeout: start_timeout.map(Duration::from_secs_f64),
            port,
            ..ServerOptions::default()
        };
        let nodes = respload_testing::start_servers(cluster, server)?;
        Ok(nodes.into_iter().map(TestServer::new).collect())
    })
    .map_err(to_py)
}

/// A connection for assertions (`RedisServer.call`): connected at the first call, again
/// after one that failed.
#[pyclass(module = "respload._native")]
pub struct TestClient {
    connection: Connection,
}

#[pymethods]
impl TestClient {
    /// Where to connect: TLS when `tls` (trusting `ca_file`, else Mozilla's roots; showing
    /// `cert` and `key` when given); `AUTH` with `password` (and `user`), `SELECT db`.
    #[new]
    #[pyo3(signature = (host, port, *, tls=false, ca_file=None, cert=None, key=None, user=None, password=None, db=0, timeout=10.0))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        host: String,
        port: u16,
        tls: bool,
        ca_file: Option<String>,
        cert: Option<String>,
        key: Option<String>,
        user: Option<String>,
        password: Option<String>,
        db: u32,
        timeout: f64,
    ) -> PyResult<TestClient> {
        if !(timeout.is_finite() && timeout > 0.0) {
            return Err(PyValueError::new_err(format!(
                "timeout = {timeout}: must be a positive number of seconds"
            )));
        }
        let tls = tls.then_some(ClientTls { ca_file, cert, key });
        Ok(TestClient {
            connection: Connection::new(ClientOptions {
                host,
                port,
                tls,
                user,
                password,
                db,
                timeout: Duration::from_secs_f64(timeout),
            }),
        })
    }

    /// Send one command; its reply: `str` (simple and bulk strings, bulk decoded as UTF-8
    /// with replacement), `int`, `None`, `list`, and `respload.testing.ReplyError` for an
    /// error reply (returned, not raised). Raises `ConnectionError` when the connection fails
    /// (the next call connects again), `ReplyError` when `AUTH` or `SELECT` is refused.
    fn call(&self, py: Python<'_>, args: Vec<Vec<u8>>) -> PyResult<Py<PyAny>> {
        let reply = py.detach(|| {
            let args: Vec<&[u8]> = args.iter().map(Vec::as_slice).collect();
            self.connection.call(&args)
        });
        match reply {
            Ok(reply) => to_python(py, reply),
            Err(Error::Reply(m)) => Err(PyErr::from_value(reply_error(py, m)?.into_bound(py))),
            // The Python client raised OSErrors (ssl.SSLError too): callers retry on them.
            Err(Error::Io(e)) => Err(PyConnectionError::new_err(e.to_string())),
            Err(e) => Err(to_py(e)),
        }
    }

    /// Close the connection (the next call connects again).
    fn close(&self) {
        self.connection.close();
    }
}

/// An instance of `respload.testing.ReplyError`.
fn reply_error(py: Python<'_>, message: String) -> PyResult<Py<PyAny>> {
    let class = py.import("respload.testing")?.getattr("ReplyError")?;
    Ok(class.call1((message,))?.unbind())
}

fn to_python(py: Python<'_>, reply: Reply) -> PyResult<Py<PyAny>> {
    Ok(match reply {
        Reply::Status(s) => s.into_pyobject(py)?.into_any().unbind(),
        Reply::Error(m) => reply_error(py, m)?,
        Reply::Int(n) => n.into_pyobject(py)?.into_any().unbind(),
        Reply::Bulk(b) => String::from_utf8_lossy(&b)
            .into_pyobject(py)?
            .into_any()
            .unbind(),
        Reply::Nil => py.None(),
        Reply::Array(items) => {
            let items = items
                .into_iter()
                .map(|r| to_python(py, r))
                .collect::<PyResult<Vec<_>>>()?;
            PyList::new(py, items)?.into_any().unbind()
        }
    })
}

fn to_py(e: Error) -> PyErr {
    match e {
        Error::NotFound(m) => PyFileNotFoundError::new_err(m),
        Error::Invalid(m) => PyValueError::new_err(m),
        other => PyRuntimeError::new_err(other.to_string()),
    }
}
