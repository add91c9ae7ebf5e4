//! Throwaway Redis servers for respload's tests: real `redis-server` processes on free
//! loopback ports ([`Server`]), with TLS ([`TlsServer`], certificates from [`Certs`]), a
//! primary with a replica ([`primary_and_replica`]) and a Redis Cluster ([`Cluster`]). Each is
//! killed, and its directory removed, when dropped.
//!
//! The core's integration tests use it today; the Python and Node `testing` modules and
//! `scripts/bench.py` are to move onto it, so that every language starts its servers the same
//! way. It needs `redis-server` and `redis-cli` on `PATH` (`make test` installs them).
#![warn(missing_docs)]

mod certs;
mod cluster;
mod server;

pub use certs::Certs;
pub use cluster::Cluster;
pub use server::{primary_and_replica, Server, TlsServer};

use std::net::TcpListener;

/// A free TCP port on 127.0.0.1 (bound, then released).
///
/// Another process may take it before it is used: [`Server::start`] tries again on another
/// port when a server does not come up.
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}
