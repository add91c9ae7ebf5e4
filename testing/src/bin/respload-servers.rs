//! `respload-servers`: throwaway servers for scripts in any language (scripts/bench.py,
//! scripts/demo.sh), from the same code as the tests'.
//!
//! ```text
//! respload-servers [--tls] [--cluster PRIMARIES] [-- REDIS-SERVER ARGUMENTS]
//! ```
//!
//! Starts one redis-server (with `--tls`, a TLS port beside its plain one, and throwaway
//! certificates) and, with `--cluster`, a cluster of that many primaries without replicas;
//! the arguments after `--` go to the first server. Prints one JSON line once they answer:
//! `{"port": P, "tls_port": T or null, "ca_file": PATH or null, "cluster": [PORTS]}`. Stops
//! them all and removes their files when its standard input closes (or it is killed).

use respload_testing::{Certs, Cluster, ClusterOptions, Server, ServerOptions, Tls};
use std::io::Read;

fn main() {
    if let Err(e) = run() {
        eprintln!("respload-servers: {e}");
        std::process::exit(1);
    }
}

fn run() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let (mut tls, mut primaries, mut extra) = (false, 0usize, Vec::new());
    while let Some(a) = args.next() {
        match a.as_str() {
            "--tls" => tls = true,
            "--cluster" => {
                let n = args.next().unwrap_or_default();
                primaries = n
                    .parse()
                    .map_err(|_| format!("--cluster {n:?}: expected a number of primaries"))?;
            }
            "--" => extra.extend(args.by_ref()),
            other => {
                return Err(format!(
                    "unknown argument {other:?}; allowed: --tls, --cluster N, -- ARGS"
                )
                .into())
            }
        }
    }
    let certs = if tls {
        Some(Certs::try_generate()?)
    } else {
        None
    };
    let server = Server::launch(&ServerOptions {
        args: extra,
        tls: certs.as_ref().map(|c| Tls::new(c, "no", false)),
        ..ServerOptions::default()
    })?;
    let cluster = match primaries {
        0 => None,
        n => Some(Cluster::launch(&ClusterOptions {
            primaries: n,
            replicas: 0,
            server: ServerOptions::default(),
        })?),
    };
    let nodes: Vec<String> = cluster
        .iter()
        .flat_map(|c| c.nodes.iter().map(|s| s.port.to_string()))
        .collect();
    let or_null = |v: Option<String>| v.unwrap_or_else(|| "null".into());
    println!(
        r#"{{"port": {}, "tls_port": {}, "ca_file": {}, "cluster": [{}]}}"#,
        server.port,
        or_null(server.tls_port.map(|p| p.to_string())),
        or_null(certs.map(|c| format!("{:?}", c.path("ca.crt")))),
        nodes.join(", ")
    );
    // Until the caller closes our input (or goes away).
    let _ = std::io::stdin().read_to_end(&mut Vec::new());
    Ok(())
}
