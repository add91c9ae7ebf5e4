//! The crate's servers as the bindings and scripts use them: options, errors, the watchdog.

use respload_testing::{
    Certs, Client, ClientOptions, ClientTls, Error, Reply, Server, ServerOptions, Tls,
};
use std::io::{BufRead, BufReader};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Whether `check` holds within 5 s.
fn eventually(check: impl Fn() -> bool) -> bool {
    let deadline = Instant::now() + Duration::from_secs(5);
    while Instant::now() < deadline {
        if check() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    false
}

fn refused(port: u16) -> bool {
    TcpStream::connect(("127.0.0.1", port)).is_err()
}

#[test]
fn a_tls_only_server_with_a_password_has_no_plain_port() {
    let certs = Certs::generate();
    let server = Server::launch(&ServerOptions {
        password: Some("pw".into()),
        tls: Some(Tls::new(&certs, "yes", true)),
        args: vec!["--maxmemory".into(), "10mb".into()],
        ..ServerOptions::default()
    })
    .unwrap();
    assert_eq!(server.tls_port, Some(server.port));
    assert_eq!(server.url(), format!("rediss://127.0.0.1:{}", server.port));
    // The harness's redis-cli speaks TLS with the client certificate, and authenticates.
    assert_eq!(server.cli(&["CONFIG", "GET", "port"]), "port\n0");
    assert_eq!(
        server.cli(&["CONFIG", "GET", "requirepass"]),
        "requirepass\npw"
    );
    assert_eq!(
        server.cli(&["CONFIG", "GET", "masterauth"]),
        "masterauth\npw"
    );
    assert_eq!(
        server.cli(&["CONFIG", "GET", "tls-auth-clients"]),
        "tls-auth-clients\nyes"
    );
    assert_eq!(server.info("maxmemory"), (10 << 20).to_string());
    assert_eq!(server.info("process_id"), server.pid().to_string());
}

#[test]
fn kill_is_a_crash_and_stop_removes_the_directory() {
    let mut server = Server::start(&[]);
    let dir = server.dir.clone();
    assert!(server.running() && dir.is_dir());
    server.kill();
    assert!(!server.running());
    assert!(refused(server.port));
    assert!(dir.is_dir(), "a crash leaves the directory");
    server.stop();
    assert!(!dir.exists());
}

#[test]
fn a_server_that_cannot_start_says_why() {
    let bad = ServerOptions {
        args: vec!["--no-such-directive".into(), "x".into()],
        ..ServerOptions::default()
    };
    match Server::launch(&bad) {
        Err(Error::Start(m)) => {
            assert!(m.contains("exited at start"), "{m}");
            assert!(m.contains("no-such-directive"), "{m}");
        }
        other => panic!("expected a start error, got {other:?}"),
    }
    let missing = ServerOptions {
        redis_server: Some("/nonexistent/redis-server".into()),
        ..ServerOptions::default()
    };
    match Server::launch(&missing) {
        Err(Error::NotFound(m)) => {
            assert!(
                m.contains("/nonexistent/redis-server is not on PATH"),
                "{m}"
            );
            assert!(m.contains("RESPLOAD_REDIS_SERVER"), "{m}");
        }
        other => panic!("expected a not-found error, got {other:?}"),
    }
}

#[test]
fn nothing_outlives_respload_servers_killed_with_sigkill() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_respload-servers"))
        .args(["--tls", "--", "--maxclients", "100"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let number = |key: &str| -> u16 {
        let rest = &line[line.find(&format!("\"{key}\": ")).unwrap() + key.len() + 4..];
        rest[..rest.find([',', '}']).unwrap()].parse().unwrap()
    };
    let (port, tls_port) = (number("port"), number("tls_port"));
    let ca = &line[line.find("\"ca_file\": \"").unwrap() + 12..];
    let ca = Path::new(&ca[..ca.find('"').unwrap()]).to_path_buf();
    assert!(ca.is_file(), "{line}");
    assert!(!refused(port) && !refused(tls_port));
    // SIGKILL: no cleanup code of the program runs; the watchdogs see their pipes close.
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(eventually(|| refused(port) && refused(tls_port)));
    assert!(eventually(|| !ca.parent().unwrap().exists()), "{ca:?} left");
}

#[test]
fn the_client_speaks_tls_with_a_client_certificate_and_authenticates() {
    let certs = Certs::generate();
    let server = Server::launch(&ServerOptions {
        password: Some("pw".into()),
        tls: Some(Tls::new(&certs, "yes", true)),
        ..ServerOptions::default()
    })
    .unwrap();
    let options = ClientOptions {
        host: "127.0.0.1".into(),
        port: server.port,
        tls: Some(ClientTls {
            ca_file: Some(certs.path("ca.crt")),
            cert: Some(certs.path("client.crt")),
            key: Some(certs.path("client.key")),
        }),
        user: None,
        password: Some("pw".into()),
        db: 2,
        timeout: Duration::from_secs(5),
    };
    let mut client = Client::connect(&options).unwrap();
    let call = |c: &mut Client, args: &[&str]| {
        let args: Vec<&[u8]> = args.iter().map(|a| a.as_bytes()).collect();
        c.call(&args).unwrap()
    };
    assert_eq!(
        call(&mut client, &["SET", "k", "v\r\nw"]),
        Reply::Status("OK".into())
    );
    assert_eq!(
        call(&mut client, &["GET", "k"]),
        Reply::Bulk(b"v\r\nw".to_vec())
    );
    assert_eq!(call(&mut client, &["GET", "missing"]), Reply::Nil);
    assert_eq!(call(&mut client, &["RPUSH", "l", "a", "b"]), Reply::Int(2));
    assert_eq!(
        call(&mut client, &["LRANGE", "l", "0", "-1"]),
        Reply::Array(vec![Reply::Bulk(b"a".to_vec()), Reply::Bulk(b"b".to_vec())])
    );
    assert!(matches!(call(&mut client, &["NOSUCH"]), Reply::Error(e) if e.starts_with("ERR")));
    // It selected database 2: the key is there, not in 0 (which the harness's redis-cli uses).
    assert_eq!(server.cli(&["DBSIZE"]), "0");
    assert_eq!(server.cli(&["-n", "2", "DBSIZE"]), "2");
    // A wrong password is an error reply; no client certificate, a failed connection.
    let wrong = ClientOptions {
        password: Some("nope".into()),
        ..options.clone()
    };
    assert!(matches!(Client::connect(&wrong), Err(Error::Reply(e)) if e.contains("WRONGPASS")));
    let anonymous = ClientOptions {
        tls: Some(ClientTls {
            ca_file: Some(certs.path("ca.crt")),
            ..ClientTls::default()
        }),
        ..options.clone()
    };
    assert!(matches!(Client::connect(&anonymous), Err(Error::Io(_))));
    let plain = ClientOptions {
        tls: None,
        ..options
    };
    assert!(Client::connect(&plain).is_err(), "plain text to a TLS port");
}

#[test]
fn a_primary_with_two_replicas_over_tls_with_a_password() {
    let certs = Certs::generate();
    let options = ServerOptions {
        password: Some("pw".into()),
        tls: Some(Tls::new(&certs, "no", true)),
        ..ServerOptions::default()
    };
    let (primary, replicas) = respload_testing::primary_with_replicas(2, &options).unwrap();
    assert_eq!(replicas.len(), 2);
    assert_eq!(primary.info("connected_slaves"), "2");
    for r in &replicas {
        assert_eq!(r.info("master_link_status"), "up");
        assert_eq!(r.info("master_port"), primary.port.to_string());
        assert_eq!(r.tls_port, Some(r.port), "TLS only, as asked");
    }
    // What the primary holds reaches both replicas.
    assert_eq!(primary.cli(&["SET", "k", "v"]), "OK");
    assert!(eventually(|| replicas
        .iter()
        .all(|r| r.cli(&["GET", "k"]) == "v")));
}
