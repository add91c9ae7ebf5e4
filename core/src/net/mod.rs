//! Transports and the connection handshake.

mod client;
pub mod cluster;
mod stream;
mod tls;
mod tls_stream;
#[cfg(target_os = "linux")]
pub mod uring;

pub use client::{Client, Value};
pub use stream::Stream;

use crate::plan::ConnectOptions;

/// The commands that set a connection up, in order: HELLO 3 (with AUTH inside) or AUTH,
/// then SELECT, CLIENT SETNAME and CLIENT TRACKING ON when asked for, and READONLY on
/// cluster connections that may read from replicas. Sent pipelined; any error reply fails
/// the connection before traffic.
pub fn handshake_commands(c: &ConnectOptions) -> Vec<Vec<Vec<u8>>> {
    let mut cmds: Vec<Vec<Vec<u8>>> = Vec::new();
    let auth: Vec<Vec<u8>> = match (&c.user, &c.password) {
        (Some(u), Some(p)) => vec![u.as_bytes().to_vec(), p.as_bytes().to_vec()],
        (None, Some(p)) => vec![p.as_bytes().to_vec()],
        (Some(u), None) => vec![u.as_bytes().to_vec(), Vec::new()],
        (None, None) => Vec::new(),
    };
    if c.protocol == 3 {
        let mut hello = vec![b"HELLO".to_vec(), b"3".to_vec()];
        if !auth.is_empty() {
            hello.push(b"AUTH".to_vec());
            if auth.len() == 1 {
                hello.push(b"default".to_vec());
            }
            hello.extend(auth);
        }
        cmds.push(hello);
    } else if !auth.is_empty() {
        let mut cmd = vec![b"AUTH".to_vec()];
        cmd.extend(auth);
        cmds.push(cmd);
    }
    if c.db != 0 {
        cmds.push(vec![b"SELECT".to_vec(), c.db.to_string().into_bytes()]);
    }
    if !c.client_name.is_empty() {
        cmds.push(vec![
            b"CLIENT".to_vec(),
            b"SETNAME".to_vec(),
            c.client_name.as_bytes().to_vec(),
        ]);
    }
    if c.tracking {
        cmds.push(vec![
            b"CLIENT".to_vec(),
            b"TRACKING".to_vec(),
            b"ON".to_vec(),
        ]);
    }
    // Every node connection, primaries too (harmless there): a node's role may change
    // during the run, and a replica without READONLY answers reads with MOVED.
    if c.cluster.is_some() && c.read_from != crate::spec::ReadFrom::Primary {
        cmds.push(vec![b"READONLY".to_vec()]);
    }
    cmds
}
