//! How a server is started: [`ServerOptions`], and [`Tls`] for its TLS port.

use crate::{Certs, Error};
use std::time::Duration;

/// Options of [`Server::launch`](crate::Server::launch); `Default` is a plain server with
/// persistence off.
#[derive(Clone, Debug, Default)]
pub struct ServerOptions {
    /// `requirepass` (and `masterauth`, so that replicas of it sync).
    pub password: Option<String>,
    /// Extra `redis-server` arguments (`--name value` pairs), after respload's own.
    pub args: Vec<String>,
    /// A TLS port too, or only.
    pub tls: Option<Tls>,
    /// The `redis-server` binary: else `$RESPLOAD_REDIS_SERVER`, else `redis-server` on `PATH`.
    pub redis_server: Option<String>,
    /// The `redis-cli` binary of the harness (`Server::cli`, creating a cluster): else
    /// `$RESPLOAD_REDIS_CLI`, else `redis-cli` on `PATH`.
    pub redis_cli: Option<String>,
    /// The port (the TLS port when TLS only): else a free one, another tried when it is taken
    /// before the server binds it. Given, a server can come back on the port it had.
    pub port: Option<u16>,
    /// How long to wait for it to answer (10 s when `None`).
    pub start_timeout: Option<Duration>,
}

impl ServerOptions {
    /// The defaults plus `extra` redis-server arguments.
    pub fn with_args(extra: &[&str]) -> ServerOptions {
        ServerOptions {
            args: extra.iter().map(|a| a.to_string()).collect(),
            ..ServerOptions::default()
        }
    }
}

/// A server's TLS port: the certificate it presents, whether it asks for clients'.
#[derive(Clone, Debug)]
pub struct Tls {
    /// The certificates; the server keeps them (their directory) while it runs.
    pub certs: Certs,
    /// The certificate the server presents: `NAME.crt` and `NAME.key` of `certs`.
    pub cert: String,
    /// `--tls-auth-clients`: `no`, `optional`, or `yes` (checked against `ca.crt`).
    pub auth_clients: String,
    /// TLS only (`--port 0`); else the plain port stays open beside it.
    pub only: bool,
}

impl Tls {
    /// The `server` certificate of `certs`, client certificates asked for when
    /// `auth_clients` (`no`, `optional`, `yes`); `only`: no plain port.
    pub fn new(certs: &Certs, auth_clients: &str, only: bool) -> Tls {
        Tls {
            certs: certs.clone(),
            cert: "server".into(),
            auth_clients: auth_clients.into(),
            only,
        }
    }

    /// TLS only, with new throwaway certificates (`server`), client certificates required
    /// when `auth_clients`: what the bindings' `tls` and `tls_auth_clients` options ask for.
    pub fn throwaway(auth_clients: bool) -> Result<Tls, Error> {
        let auth = if auth_clients { "yes" } else { "no" };
        Ok(Tls::new(&Certs::try_generate()?, auth, true))
    }

    /// The `redis-server` arguments for a TLS port `port`.
    pub(crate) fn args(&self, port: u16) -> Vec<String> {
        let c = &self.certs;
        [
            "--tls-port",
            &port.to_string(),
            "--tls-cert-file",
            &c.path(&format!("{}.crt", self.cert)),
            "--tls-key-file",
            &c.path(&format!("{}.key", self.cert)),
            "--tls-ca-cert-file",
            &c.path("ca.crt"),
            "--tls-auth-clients",
            &self.auth_clients,
        ]
        .map(String::from)
        .into()
    }
}
