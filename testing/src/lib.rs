//! Throwaway Redis servers for respload's tests, in every language: real `redis-server`
//! processes on free loopback ports ([`Server`], from [`ServerOptions`]), with TLS ([`Tls`],
//! [`TlsServer`], certificates made in-process by [`Certs`]), a primary with replicas
//! ([`primary_with_replicas`]) and a Redis Cluster ([`Cluster`]).
//!
//! Each server runs under a small shell watchdog holding a pipe from this process: when the
//! server is dropped, or this process exits, crashes or is killed (even with SIGKILL), the
//! watchdog kills `redis-server` and removes its directory. The core's tests use this crate
//! directly, the Python and Node `testing` modules through their bindings, and
//! `scripts/bench.py` and `scripts/demo.sh` through the `respload-servers` program. It needs
//! `redis-server` and `redis-cli` on `PATH` (`make test` installs them), or
//! `$RESPLOAD_REDIS_SERVER` and `$RESPLOAD_REDIS_CLI`.
#![warn(missing_docs)]

mod certs;
mod client;
mod cluster;
mod error;
mod options;
mod server;
mod watchdog;

pub use certs::Certs;
pub use client::{Client, ClientOptions, ClientTls, Connection, Reply};
pub use cluster::{Cluster, ClusterOptions};
pub use error::Error;
pub use options::{ServerOptions, Tls};
pub use server::{primary_and_replica, primary_with_replicas, Server, TlsServer};

use std::net::TcpListener;

/// One server as `server` says, or with `cluster` (`(primaries, replicas)`) a Redis Cluster
/// of such nodes (its nodes, primaries first as created): what the bindings'
/// `start_servers` / `startServers` start.
pub fn start_servers(
    cluster: Option<(usize, usize)>,
    server: ServerOptions,
) -> Result<Vec<Server>, Error> {
    match cluster {
        None => Ok(vec![Server::launch(&server)?]),
        Some((primaries, replicas)) => Ok(Cluster::launch(&ClusterOptions {
            primaries,
            replicas,
            server,
        })?
        .nodes),
    }
}

/// A free TCP port on 127.0.0.1 (bound, then released).
///
/// Another process may take it before it is used: [`Server::launch`] tries again on another
/// port when a server does not come up.
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}
