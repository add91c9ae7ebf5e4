//! Throwaway servers for `respload.testing`: the `respload-testing` crate's servers and
//! clusters, which the Python module wraps in its context managers and RESP client.

use pyo3::exceptions::{PyFileNotFoundError, PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use respload_testing::{Certs, Cluster, ClusterOptions, Error, Server, ServerOptions, Tls};
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
        let auth = if tls_auth_clients { "yes" } else { "no" };
        let server = ServerOptions {
            password,
            args,
            tls: match tls {
                true => Some(Tls::new(&Certs::try_generate()?, auth, true)),
                false => None,
            },
            redis_server,
            start_timeout: start_timeout.map(Duration::from_secs_f64),
            port,
            ..ServerOptions::default()
        };
        let nodes = match cluster {
            None => vec![Server::launch(&server)?],
            Some((primaries, replicas)) => {
                let options = ClusterOptions {
                    primaries,
                    replicas,
                    server,
                };
                Cluster::launch(&options)?.nodes
            }
        };
        Ok(nodes.into_iter().map(TestServer::new).collect())
    })
    .map_err(to_py)
}

fn to_py(e: Error) -> PyErr {
    match e {
        Error::NotFound(m) => PyFileNotFoundError::new_err(m),
        Error::Invalid(m) => PyValueError::new_err(m),
        other => PyRuntimeError::new_err(other.to_string()),
    }
}
