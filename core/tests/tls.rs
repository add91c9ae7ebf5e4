//! TLS against real redis-server processes (Debian's build speaks TLS), with certificates made
//! in-process (respload-testing's `Certs`): verified runs, mutual TLS, every way verification
//! fails, the insecure opt-in, rediss:// URLs, spec errors and the CLI flags.

mod common;

use common::{workload, Certs, TlsServer};
use respload::{run, Error, Report};
use serde_json::{json, Value};
use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_respload");

/// A SET:GET run of `n` requests against `target`.
fn traffic(target: Value, n: u64) -> respload::Result<Report> {
    run(&workload(json!({
        "target": target,
        "load": { "connections": 4, "pipeline": 8, "requests": n },
        "keys": { "range": [0, 99] },
        "values": { "size": 2000 },
        "commands": [{ "name": "set" }, { "name": "get", "weight": 3 }],
        "seed": 11,
    })))
}

/// The error of a run expected to fail, checking it is a TLS error sent before any traffic.
fn tls_failure(server: &TlsServer, target: Value) -> String {
    let err = traffic(target, 100).unwrap_err();
    assert!(matches!(err, Error::Tls { .. }), "not a TLS error: {err:?}");
    assert_eq!(err.code(), "ERR_RESPLOAD_TLS");
    let s = &server.server;
    // CLIENT SETNAME opens every connection's set-up: not even that arrived.
    assert_eq!(
        (s.calls("client|setname"), s.calls("set"), s.calls("get")),
        (0, 0, 0),
        "traffic was sent"
    );
    err.to_string()
}

fn tls_target(server: &TlsServer, tls: Value) -> Value {
    json!({ "host": "127.0.0.1", "port": server.tls_port, "tls": tls })
}

#[test]
fn a_run_over_tls_completes_and_matches_the_servers_commandstats() {
    let certs = Certs::generate();
    let server = TlsServer::start(&certs, "server", "no");
    let target = tls_target(
        &server,
        json!({ "enabled": true, "ca_file": certs.path("ca.crt") }),
    );
    let report = traffic(target, 4000).unwrap();
    assert_eq!((report.totals.ops, report.totals.errors), (4000, 0));
    let (sets, gets) = (&report.commands["SET"], &report.commands["GET"]);
    assert_eq!(sets.ops + gets.ops, 4000);
    assert_eq!(server.server.calls("set"), sets.ops);
    assert_eq!(server.server.calls("get"), gets.ops);
    // 2000-byte values went both ways through TLS.
    assert!(
        gets.hits > 0 && gets.bytes_received > gets.hits * 2000,
        "{gets:?}"
    );
    let text = respload::output::table(&report);
    assert!(
        text.contains("TLS: on (server certificate verified)"),
        "{text}"
    );
    // TLS 1.2 only is a setting, and works too.
    let target = tls_target(
        &server,
        json!({ "enabled": true, "ca_file": certs.path("ca.crt"), "versions": ["1.2"] }),
    );
    assert_eq!(traffic(target, 200).unwrap().totals.errors, 0);
}

#[test]
fn mutual_tls_works_and_a_missing_or_foreign_client_certificate_fails_before_traffic() {
    let certs = Certs::generate();
    let server = TlsServer::start(&certs, "server", "yes");
    let ca = certs.path("ca.crt");
    // TLS 1.3 (the server says so only after the handshake) and TLS 1.2 (during it).
    for versions in [json!(["1.3"]), json!(["1.2"])] {
        let target = tls_target(
            &server,
            json!({ "enabled": true, "ca_file": ca, "versions": versions }),
        );
        let e = tls_failure(&server, target);
        assert!(
            e.contains("client certificate") && e.contains("tls.cert"),
            "{versions}: {e}"
        );
    }
    let target = tls_target(
        &server,
        json!({ "enabled": true, "ca_file": ca,
                "cert": certs.path("other-client.crt"), "key": certs.path("other-client.key") }),
    );
    let e = tls_failure(&server, target);
    assert!(e.contains("refused the client certificate"), "{e}");

    let target = tls_target(
        &server,
        json!({ "enabled": true, "ca_file": ca,
                "cert": certs.path("client.crt"), "key": certs.path("client.key") }),
    );
    let report = traffic(target, 1000).unwrap();
    assert_eq!((report.totals.ops, report.totals.errors), (1000, 0));
    assert_eq!(
        server.server.calls("set") + server.server.calls("get"),
        1000
    );
}

#[test]
fn an_unknown_ca_is_refused_with_a_hint_to_pass_the_ca() {
    let certs = Certs::generate();
    let server = TlsServer::start(&certs, "server", "no");
    let e = tls_failure(
        &server,
        tls_target(
            &server,
            json!({ "enabled": true, "ca_file": certs.path("other-ca.crt") }),
        ),
    );
    assert!(
        e.contains("unknown issuer") && e.contains("tls.ca_file") && e.contains("--cacert"),
        "{e}"
    );
    // Without a CA of its own the built-in public roots are used: they do not know ours.
    let e = tls_failure(&server, tls_target(&server, json!({ "enabled": true })));
    assert!(e.contains("unknown issuer"), "{e}");
}

#[test]
fn a_certificate_for_another_name_is_refused_and_sni_picks_the_name() {
    let certs = Certs::generate();
    let server = TlsServer::start(&certs, "wrongname", "no");
    let ca = certs.path("ca.crt");
    let e = tls_failure(
        &server,
        tls_target(&server, json!({ "enabled": true, "ca_file": ca })),
    );
    assert!(
        e.contains("not valid for the name `127.0.0.1`") && e.contains("other.example"),
        "{e}"
    );
    let report = traffic(
        tls_target(
            &server,
            json!({ "enabled": true, "ca_file": ca, "sni": "other.example" }),
        ),
        300,
    )
    .unwrap();
    assert_eq!(report.totals.ops, 300);
}

#[test]
fn an_expired_certificate_is_refused() {
    let certs = Certs::generate();
    let server = TlsServer::start(&certs, "expired", "no");
    let e = tls_failure(
        &server,
        tls_target(
            &server,
            json!({ "enabled": true, "ca_file": certs.path("ca.crt") }),
        ),
    );
    assert!(
        e.contains("has expired (not valid after 2020-02-01 00:00:00 UTC)") && e.contains("renew"),
        "{e}"
    );
}

#[test]
fn insecure_connects_without_verification_and_the_report_says_so() {
    let certs = Certs::generate();
    let server = TlsServer::start(&certs, "expired", "no");
    let report = traffic(
        tls_target(&server, json!({ "enabled": true, "insecure": true })),
        500,
    )
    .unwrap();
    assert_eq!((report.totals.ops, report.totals.errors), (500, 0));
    assert_eq!(report.workload["target"]["tls"]["insecure"], json!(true));
    let text = respload::output::table(&report);
    assert!(
        text.contains("TLS: insecure (certificate not verified)"),
        "{text}"
    );
}

#[test]
fn a_rediss_url_turns_tls_on_and_ca_dir_holds_the_ca() {
    let certs = Certs::generate();
    let server = TlsServer::start(&certs, "server", "no");
    let cas = certs.dir.join("cas");
    std::fs::create_dir_all(&cas).unwrap();
    std::fs::copy(certs.dir.join("other-ca.crt"), cas.join("a.pem")).unwrap();
    std::fs::copy(certs.dir.join("ca.crt"), cas.join("b.pem")).unwrap();
    std::fs::write(cas.join("README"), "not a certificate").unwrap();
    // A host name, checked against the certificate's DNS name.
    let url = format!("rediss://localhost:{}/2", server.tls_port);
    let report = traffic(
        json!({ "url": url, "tls": { "ca_dir": cas.display().to_string() } }),
        400,
    )
    .unwrap();
    assert_eq!(report.totals.ops, 400);
    assert_eq!(
        report.server.address,
        format!("localhost:{}", server.tls_port)
    );
    assert_ne!(server.server.cli(&["-n", "2", "DBSIZE"]), "0");
    // rediss:// with an IP address, too.
    let report = traffic(
        json!({ "url": server.url(), "tls": { "ca_file": certs.path("ca.crt") } }),
        100,
    )
    .unwrap();
    assert_eq!(report.totals.errors, 0);
}

/// The passphrase of the encrypted client keys.
const KEY_PW: &str = "K3y-pass-phrase";

#[test]
fn an_encrypted_client_key_is_read_with_its_passphrase_and_neither_is_shown() {
    let certs = Certs::generate();
    let server = TlsServer::start(&certs, "server", "yes");
    let encrypted = certs.encrypted_client_key("enc.key", KEY_PW, false);
    let legacy = certs.encrypted_client_key("legacy.key", KEY_PW, true);
    let tls = |key: &str, password: Option<&str>| {
        let mut tls = json!({ "enabled": true, "ca_file": certs.path("ca.crt"),
                              "cert": certs.path("client.crt"), "key": key });
        if let Some(p) = password {
            tls["key_password"] = json!(p);
        }
        tls
    };
    let report = traffic(tls_target(&server, tls(&encrypted, Some(KEY_PW))), 500).unwrap();
    assert_eq!((report.totals.ops, report.totals.errors), (500, 0));
    let s = &server.server;
    assert_eq!(s.calls("set") + s.calls("get"), 500);
    // The report's spec hides the key's file and passphrase.
    let text = report.to_json();
    assert!(
        !text.contains(KEY_PW) && !text.contains("enc.key"),
        "{text}"
    );
    let shown = &report.workload["target"]["tls"];
    assert_eq!(
        (&shown["key"], &shown["key_password"]),
        (&json!("***"), &json!("***"))
    );
    // Each wrong way is an error at target.tls.key before any connection, naming neither.
    let plain = certs.path("client.key");
    for (key, password, want) in [
        (&encrypted, Some("wrong-pass"), "does not decrypt"),
        (
            &encrypted,
            None,
            "give its passphrase as target.tls.key_password",
        ),
        (&legacy, Some(KEY_PW), "openssl pkcs8 -topk8"),
        (&plain, Some(KEY_PW), "is not encrypted"),
    ] {
        let e = respload::Workload::from_json_value(json!({
            "target": tls_target(&server, tls(key, password)),
        }))
        .unwrap_err();
        let text = e.to_string();
        assert!(
            matches!(&e, Error::Spec { path, .. } if path == "target.tls.key"),
            "{text}"
        );
        assert!(text.contains(want), "{text}");
        for secret in [
            KEY_PW,
            "wrong-pass",
            key.as_str(),
            certs.dir.to_str().unwrap(),
        ] {
            assert!(!text.contains(secret), "shows `{secret}`: {text}");
        }
    }
    let e = respload::Workload::from_json_value(json!({
        "target": tls_target(&server, json!({ "enabled": true, "key_password": KEY_PW })),
    }))
    .unwrap_err();
    assert!(e.to_string().contains("target.tls.key_password"), "{e}");
    assert_eq!(s.calls("set") + s.calls("get"), 500);
}

#[test]
fn tls_spec_errors_name_the_field_before_any_connection() {
    let certs = Certs::generate();
    let spec = |tls: Value| {
        respload::Workload::from_json_value(json!({
            "target": { "url": "rediss://127.0.0.1:1", "tls": tls },
        }))
        .unwrap_err()
    };
    let missing = certs.path("missing.pem");
    let e = spec(json!({ "ca_file": missing }));
    assert!(
        matches!(&e, Error::Spec { path, reason } if path == "target.tls.ca_file" && reason.contains(&missing)),
        "{e}"
    );
    let e = spec(json!({ "ca_file": certs.path("ca.key") }));
    assert!(
        e.to_string().contains("target.tls.ca_file")
            && e.to_string().contains("no PEM certificate"),
        "{e}"
    );
    let e = spec(json!({ "cert": certs.path("client.crt") }));
    assert!(e.to_string().contains("target.tls.key"), "{e}");
    let e = spec(json!({ "cert": certs.path("client.crt"), "key": certs.path("server.key") }));
    assert!(
        e.to_string().contains("target.tls.key") && e.to_string().contains("does not go with"),
        "{e}"
    );
    let e = spec(json!({ "versions": ["1.0"] }));
    assert!(e.to_string().contains("target.tls.versions[0]"), "{e}");
    let e = spec(json!({ "verify": false }));
    assert!(
        e.to_string().contains("target.tls") && e.to_string().contains("verify"),
        "{e}"
    );
    let e = respload::Workload::from_json_value(json!({
        "target": { "port": 6379, "tls": { "insecure": true } },
    }))
    .unwrap_err();
    assert!(
        e.to_string().contains("target.tls.insecure") && e.to_string().contains("TLS is off"),
        "{e}"
    );
    let e = respload::Workload::from_json_value(json!({
        "target": { "unix": "/tmp/r.sock", "tls": { "enabled": true } },
    }))
    .unwrap_err();
    assert!(e.to_string().contains("Unix socket"), "{e}");
}

#[test]
fn tls_to_a_plain_port_and_plain_text_to_a_tls_port_fail_clearly() {
    let certs = Certs::generate();
    let server = TlsServer::start(&certs, "server", "no");
    let target = json!({
        "host": "127.0.0.1", "port": server.server.port, "connect_timeout": "2s",
        "tls": { "enabled": true, "ca_file": certs.path("ca.crt") },
    });
    let e = traffic(target, 10).unwrap_err();
    assert!(matches!(e, Error::Tls { .. }), "{e:?}");
    assert!(e.to_string().contains("plain-text"), "{e}");
    let target = json!({ "host": "127.0.0.1", "port": server.tls_port, "connect_timeout": "2s" });
    let e = traffic(target, 10).unwrap_err();
    assert!(e.to_string().contains("TLS"), "{e}");
}

#[test]
fn the_cli_speaks_tls_with_its_flags() {
    let certs = Certs::generate();
    let server = TlsServer::start(&certs, "server", "yes");
    let port = server.tls_port.to_string();
    let json_path = certs.dir.join("report.json");
    let out = Command::new(BIN)
        .args([
            "run",
            "-q",
            "-H",
            "127.0.0.1",
            "-p",
            &port,
            "-n",
            "600",
            "-c",
            "3",
        ])
        .args(["--tls", "--cacert", &certs.path("ca.crt")])
        .args([
            "--cert",
            &certs.path("client.crt"),
            "--key",
            &certs.path("client.key"),
        ])
        .args(["--json", json_path.to_str().unwrap()])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("TLS: on (server certificate verified)"),
        "{stdout}"
    );
    let report: Report =
        serde_json::from_str(&std::fs::read_to_string(&json_path).unwrap()).unwrap();
    assert_eq!(report.totals.ops, 600);
    assert_eq!(server.server.calls("set") + server.server.calls("get"), 600);

    // --insecure alone turns TLS on and is visible in the output.
    let out = Command::new(BIN)
        .args([
            "run",
            "-q",
            "--url",
            &server.url(),
            "-n",
            "50",
            "--insecure",
        ])
        .args([
            "--cert",
            &certs.path("client.crt"),
            "--key",
            &certs.path("client.key"),
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("TLS: insecure"));

    // Without the client certificate: exit code 2 and the reason, nothing sent.
    let before = server.server.calls("set") + server.server.calls("get");
    let out = Command::new(BIN)
        .args(["run", "-q", "--url", &server.url(), "-n", "50"])
        .args(["--cacert", &certs.path("ca.crt")])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("requires a client certificate") && stderr.contains("--cert"),
        "{stderr}"
    );
    assert_eq!(
        server.server.calls("set") + server.server.calls("get"),
        before
    );

    let help = Command::new(BIN).args(["run", "--help"]).output().unwrap();
    let help = String::from_utf8_lossy(&help.stdout);
    for flag in [
        "--tls",
        "--cacert",
        "--cacertdir",
        "--cert",
        "--key",
        "--sni",
        "--insecure",
    ] {
        assert!(help.contains(flag), "{flag} missing from:\n{help}");
    }
}

/// What a rustls server in this process sends after the handshake.
#[derive(Clone, Copy)]
enum Ending {
    /// `len` bytes in writes of odd sizes (records of every length), then close_notify.
    DataThenClose(usize),
    /// Nothing: it requires a client certificate and refuses the handshake with an alert.
    CertificateRequired,
    /// TLS 1.3: `len` bytes as `DataThenClose`, with a key update (asking the client for one
    /// too) after every third write; then it reads `bye` (sent under the client's new key)
    /// and closes.
    KeyUpdates(usize),
    /// `len` bytes: the records of the first [`GOOD`] bytes, a pause, then the rest in one
    /// write with a byte of its first record flipped.
    Corrupted(usize),
    /// The other way: the server, with only this cipher suite, waits a moment (the client's
    /// writes fill the socket), reads `len` bytes that the client writes in pieces of odd
    /// sizes, checks them and the client's close_notify, then closes.
    Upload(usize, rustls::SupportedCipherSuite),
}

/// The bytes the tests send: `0, 1, ..., 250, 0, 1, ...`.
fn pattern(len: usize) -> Vec<u8> {
    (0..len).map(|i| (i % 251) as u8).collect()
}

/// What the server of [`Ending::Corrupted`] sends intact.
const GOOD: usize = 100_000;

/// One connection to a rustls server (the `Stream` alone, no Redis): returns what the client
/// read, with reads of `read_size` bytes, and how the stream ended (`None`: a clean EOF).
fn against_rustls(
    certs: &Certs,
    version: &'static rustls::SupportedProtocolVersion,
    ending: Ending,
    read_size: usize,
) -> (Vec<u8>, Option<std::io::Error>) {
    use rustls::pki_types::pem::PemObject;
    use rustls::pki_types::{CertificateDer, PrivateKeyDer};
    use std::io::{Read, Write};
    use std::sync::Arc;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    let mut provider = rustls::crypto::ring::default_provider();
    if let Ending::Upload(_, suite) = ending {
        provider.cipher_suites = vec![suite];
    }
    let provider = Arc::new(provider);
    let chain: Vec<CertificateDer> = CertificateDer::pem_file_iter(certs.path("server.crt"))
        .unwrap()
        .map(|c| c.unwrap())
        .collect();
    let key = PrivateKeyDer::from_pem_file(certs.path("server.key")).unwrap();
    let builder = rustls::ServerConfig::builder_with_provider(Arc::clone(&provider))
        .with_protocol_versions(&[version])
        .unwrap();
    let builder = match ending {
        Ending::CertificateRequired => {
            let mut roots = rustls::RootCertStore::empty();
            for c in CertificateDer::pem_file_iter(certs.path("ca.crt")).unwrap() {
                roots.add(c.unwrap()).unwrap();
            }
            let verifier =
                rustls::server::WebPkiClientVerifier::builder_with_provider(roots.into(), provider)
                    .build()
                    .unwrap();
            builder.with_client_cert_verifier(verifier)
        }
        _ => builder.with_no_client_auth(),
    };
    let config = Arc::new(builder.with_single_cert(chain, key).unwrap());
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let server = std::thread::spawn(move || {
        let (sock, _) = listener.accept().unwrap();
        // A client that sends less than it should fails the test rather than hang it.
        sock.set_read_timeout(Some(std::time::Duration::from_secs(20)))
            .unwrap();
        let conn = rustls::ServerConnection::new(config).unwrap();
        let mut tls = rustls::StreamOwned::new(conn, sock);
        let mut hello = [0u8; 5];
        if tls.read_exact(&mut hello).is_err() {
            return; // the refused handshake
        }
        let (len, updates) = match ending {
            Ending::Upload(len, _) => {
                std::thread::sleep(std::time::Duration::from_millis(100));
                let mut got = vec![0u8; len];
                tls.read_exact(&mut got).unwrap();
                assert!(got == pattern(len), "the server read other bytes");
                // Then the client's close_notify: a clean end, nothing after the data.
                let mut rest = Vec::new();
                assert_eq!(tls.read_to_end(&mut rest).unwrap(), 0);
                tls.conn.send_close_notify();
                tls.flush().unwrap();
                return;
            }
            Ending::DataThenClose(len) => (len, false),
            Ending::KeyUpdates(len) => (len, true),
            Ending::CertificateRequired => return,
            Ending::Corrupted(len) => {
                let data = pattern(len);
                let mut records = |plain: &[u8]| {
                    let mut out = Vec::new();
                    for piece in plain.chunks(16_384) {
                        tls.conn.writer().write_all(piece).unwrap();
                        while tls.conn.wants_write() {
                            tls.conn.write_tls(&mut out).unwrap();
                        }
                    }
                    out
                };
                let (good, mut bad) = (records(&data[..GOOD]), records(&data[GOOD..]));
                bad[100] ^= 1;
                tls.sock.write_all(&good).unwrap();
                std::thread::sleep(std::time::Duration::from_millis(200));
                // Records after the bad one arrive in the same read.
                let _ = tls.sock.write_all(&bad);
                return;
            }
        };
        let data = pattern(len);
        let mut at = 0;
        for (i, size) in [1, 100, 16_384, 16_385, 3_000, 40_000, 7]
            .iter()
            .cycle()
            .enumerate()
        {
            let end = (at + size).min(len);
            tls.write_all(&data[at..end]).unwrap();
            at = end;
            if at == len {
                break;
            }
            if updates && i % 3 == 2 {
                tls.conn.refresh_traffic_keys().unwrap();
            }
        }
        if updates {
            tls.flush().unwrap();
            let mut bye = [0u8; 3];
            tls.read_exact(&mut bye).unwrap();
            assert_eq!(&bye, b"bye");
        }
        tls.conn.send_close_notify();
        tls.flush().unwrap();
    });
    let versions = if version == &rustls::version::TLS13 {
        "1.3"
    } else {
        "1.2"
    };
    let target = json!({ "host": "127.0.0.1", "port": port,
                         "tls": { "enabled": true, "ca_file": certs.path("ca.crt"),
                                  "versions": [versions] } });
    let connect = workload(json!({ "target": target, "commands": [{ "name": "ping" }] }))
        .phases
        .remove(0)
        .connect;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let out = rt.block_on(async {
        let mut stream = respload::internals::Stream::connect_with(&connect)
            .await
            .unwrap();
        stream.write_all(b"hello").await.unwrap();
        if let Ending::Upload(len, _) = ending {
            // Writes of one byte to more than one write call takes (64 KiB).
            let data = pattern(len);
            let mut at = 0;
            for size in [1, 100, 16_384, 16_385, 3_000, 70_000, 7].iter().cycle() {
                let end = (at + size).min(len);
                stream.write_all(&data[at..end]).await.unwrap();
                at = end;
                if at == len {
                    break;
                }
            }
            stream.shutdown().await.unwrap();
        }
        let mut got = Vec::new();
        let mut buf = vec![0u8; read_size];
        // After a key update the server reads this, sent under our renewed key.
        let mut bye = match ending {
            Ending::KeyUpdates(len) => Some(len),
            _ => None,
        };
        loop {
            match stream.read(&mut buf).await {
                Ok(0) => return (got, None),
                Ok(n) => got.extend_from_slice(&buf[..n]),
                Err(e) => return (got, Some(e)),
            }
            if bye == Some(got.len()) {
                stream.write_all(b"bye").await.unwrap();
                bye = None;
            }
        }
    });
    server.join().unwrap();
    out
}

#[test]
fn the_tls_stream_reads_records_of_every_size_and_reports_alerts() {
    let certs = Certs::generate();
    let len = 300_000;
    let expected = pattern(len);
    for version in [&rustls::version::TLS13, &rustls::version::TLS12] {
        // 64 KiB reads decrypt in the caller's buffer (TLS 1.3), 4 KiB reads copy out of
        // the stream's own.
        for read_size in [64 * 1024, 4096] {
            let (got, err) = against_rustls(&certs, version, Ending::DataThenClose(len), read_size);
            assert!(err.is_none(), "{version:?} {read_size}: {err:?}");
            assert!(
                got == expected,
                "{version:?} {read_size}: {} bytes",
                got.len()
            );
        }
    }
    // TLS 1.3 key updates, each asking for ours: the records after each are read under the
    // server's next key, and ours is sent (the server reads `bye` under it).
    for read_size in [64 * 1024, 4096] {
        let (got, err) = against_rustls(
            &certs,
            &rustls::version::TLS13,
            Ending::KeyUpdates(len),
            read_size,
        );
        assert!(err.is_none(), "key updates, {read_size}: {err:?}");
        assert!(
            got == expected,
            "key updates, {read_size}: {} bytes",
            got.len()
        );
    }
    // A record that fails to decrypt, with more behind it in the same read: the data before
    // it, then the error (not a panic: the TLS 1.3 path used to keep what followed in a
    // buffer sized for one record).
    for version in [&rustls::version::TLS13, &rustls::version::TLS12] {
        let (got, err) = against_rustls(&certs, version, Ending::Corrupted(len), 64 * 1024);
        assert!(got == expected[..GOOD], "{version:?}: {} bytes", got.len());
        let err = err.expect("an error");
        let inner = err
            .get_ref()
            .and_then(|e| e.downcast_ref::<rustls::Error>());
        assert!(
            matches!(inner, Some(rustls::Error::DecryptError)),
            "{version:?}: {err:?}"
        );
    }
    // TLS 1.3: the server refuses the missing client certificate after the client finished
    // its handshake, with an alert the stream reports as rustls's error.
    let (got, err) = against_rustls(
        &certs,
        &rustls::version::TLS13,
        Ending::CertificateRequired,
        64 * 1024,
    );
    let err = err.expect("an error");
    let inner = err
        .get_ref()
        .and_then(|e| e.downcast_ref::<rustls::Error>());
    assert!(
        got.is_empty()
            && matches!(
                inner,
                Some(rustls::Error::AlertReceived(
                    rustls::AlertDescription::CertificateRequired
                ))
            ),
        "{err:?}"
    );
}

#[test]
fn the_tls_stream_writes_records_of_every_size_under_every_tls13_cipher_suite() {
    let certs = Certs::generate();
    // More than the socket buffers take while the server waits: some records are sent in
    // parts, the rest kept for the next write.
    let len = 8_000_000;
    for suite in rustls::crypto::ring::default_provider().cipher_suites {
        if suite.tls13().is_none() {
            continue;
        }
        let (got, err) = against_rustls(
            &certs,
            &rustls::version::TLS13,
            Ending::Upload(len, suite),
            64 * 1024,
        );
        assert!(
            got.is_empty() && err.is_none(),
            "{:?}: {} bytes back, {err:?}",
            suite.suite(),
            got.len()
        );
    }
}
