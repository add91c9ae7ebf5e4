//! Secrets never shown (issue 29 item 3): every command-line entry point run with a server
//! password, an ACL user's password, URLs carrying them (in the user info and as a
//! `password=` query parameter), and a TLS client key's file and passphrase; no output
//! (stdout, stderr, JSON, HDR log, memtier and redis-benchmark files, check, compare and merge
//! outputs, error messages) holds a secret.

mod common;

use common::{Certs, Server, TlsServer};
use std::path::Path;
use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_respload");
/// The server's `requirepass`.
const SERVER_PW: &str = "S3cret-server-pw";
/// An ACL user's password, with characters a URL must encode.
const USER_PW: &str = "Us3r/pw?%x";
const USER_PW_URL: &str = "Us3r%2Fpw%3F%25x";
/// memtier's front end sending 50 requests from one connection.
const MEMTIER_50: [&str; 6] = ["-n", "50", "-c", "1", "-t", "1"];
/// A wrong password: refused by the server, never echoed either.
const WRONG_PW: &str = "Wr0ng-pw-guess";

/// Run respload with `args` in `dir`; every byte it printed, and its exit status.
fn run(dir: &Path, args: &[&str]) -> (String, Option<i32>) {
    let out = Command::new(BIN)
        .current_dir(dir)
        .args(args)
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (text, out.status.code())
}

fn assert_no_secret(what: &str, text: &str) {
    for secret in [
        SERVER_PW,
        USER_PW,
        USER_PW_URL,
        WRONG_PW,
        "Us3r",
        "S3cret",
        "Wr0ng",
    ] {
        assert!(!text.contains(secret), "{what} shows `{secret}`:\n{text}");
    }
}

#[test]
fn no_output_of_any_entry_point_holds_a_password() {
    let server = Server::start(&["--requirepass", SERVER_PW]);
    let port = server.port.to_string();
    let acl = format!(">{USER_PW}");
    let set = server.cli(&[
        "-a", SERVER_PW, "ACL", "SETUSER", "alice", "on", &acl, "~*", "+@all",
    ]);
    assert_eq!(set, "OK");
    let dir = server.dir.join("secrets");
    std::fs::create_dir_all(&dir).unwrap();
    let user_url = format!("redis://alice:{USER_PW_URL}@127.0.0.1:{port}");
    let query_url = format!("redis://127.0.0.1:{port}/0?user=alice&password={USER_PW_URL}");
    std::fs::write(
        dir.join("spec.toml"),
        format!("[target]\nport = {port}\npassword = \"{SERVER_PW}\"\n[load]\nrequests = 200\n"),
    )
    .unwrap();
    let mut outputs: Vec<(String, String)> = Vec::new();
    let mut ran = |name: &str, args: &[&str], code: i32| {
        let (text, status) = run(&dir, args);
        assert_eq!(status, Some(code), "{name}: {text}");
        outputs.push((name.to_string(), text));
    };
    // Runs that work: text, JSON, HDR log, a threshold's message, the live line.
    ran(
        "run --url (user info)",
        &[
            "run",
            "--url",
            &user_url,
            "-n",
            "300",
            "--json",
            "a.json",
            "--hdr-log",
            "a.hdr",
        ],
        0,
    );
    ran(
        "run --url (query) --check",
        &[
            "run",
            "--url",
            &query_url,
            "-n",
            "300",
            "--json",
            "b.json",
            "--check",
            "p99_ms=0.0000001",
        ],
        1,
    );
    ran(
        "run -a",
        &["run", "-p", &port, "-a", SERVER_PW, "-n", "200"],
        0,
    );
    ran("run SPEC", &["run", "spec.toml", "--json", "c.json"], 0);
    ran("check SPEC", &["check", "spec.toml"], 0);
    ran(
        "memtier",
        &[
            "memtier",
            "-p",
            &port,
            "-a",
            SERVER_PW,
            "-n",
            "100",
            "-c",
            "2",
            "-t",
            "1",
            "--json-out-file",
            "m.json",
            "--hdr-file-prefix",
            "mh",
        ],
        0,
    );
    ran(
        "redis-benchmark",
        &[
            "redis-benchmark",
            "-p",
            &port,
            "-a",
            SERVER_PW,
            "-n",
            "500",
            "-t",
            "get,set",
        ],
        0,
    );
    ran(
        "redis-benchmark --csv --json",
        &[
            "redis-benchmark",
            "-p",
            &port,
            "-a",
            SERVER_PW,
            "-n",
            "500",
            "-t",
            "get",
            "--csv",
            "--json",
            "rb.json",
        ],
        0,
    );
    ran(
        "compare",
        &[
            "compare", "a.json", "b.json", "c.json", "--json", "cmp.json",
        ],
        0,
    );
    ran(
        "merge",
        &["merge", "a.json", "a.json", "--json", "merged.json"],
        0,
    );
    let memtier_uri = format!("redis://:{SERVER_PW}@127.0.0.1:{port}");
    let uri = [
        "memtier",
        "--uri",
        &memtier_uri,
        "--json-out-file",
        "mu.json",
    ];
    ran("memtier --uri", &[&uri[..], &MEMTIER_50[..]].concat(), 0);
    // Runs that fail: a wrong password, bad URLs carrying one, a server that is not there.
    let bad_scheme = format!("http://:{SERVER_PW}@127.0.0.1:{port}");
    ran(
        "memtier --uri, bad scheme",
        &["memtier", "--uri", &bad_scheme],
        2,
    );
    let no_scheme = format!(":{SERVER_PW}@127.0.0.1:{port}");
    ran(
        "memtier --uri, no scheme",
        &["memtier", "--uri", &no_scheme],
        2,
    );
    let wrong = format!("redis://alice:{WRONG_PW}@127.0.0.1:{port}");
    ran("wrong password", &["run", "--url", &wrong, "-n", "10"], 2);
    ran(
        "wrong -a",
        &["run", "-p", &port, "-a", WRONG_PW, "-n", "10"],
        2,
    );
    let bad_port = format!("redis://alice:{USER_PW_URL}@127.0.0.1:notaport");
    ran("bad port in URL", &["run", "--url", &bad_port], 2);
    let bad_escape = format!("redis://alice:{WRONG_PW}%zz@127.0.0.1:{port}");
    ran("bad escape in password", &["run", "--url", &bad_escape], 2);
    let typo = format!("redis://127.0.0.1:{port}/?pasword={WRONG_PW}");
    ran("misspelt password parameter", &["run", "--url", &typo], 2);
    let scheme = format!("http://alice:{USER_PW_URL}@127.0.0.1:{port}");
    ran("unknown scheme", &["run", "--url", &scheme], 2);
    let closed = format!("redis://alice:{USER_PW_URL}@127.0.0.1:1");
    ran(
        "nothing listening",
        &["run", "--url", &closed, "-n", "10"],
        2,
    );
    let replica = format!(
        "[target]\nport = {port}\npassword = \"{SERVER_PW}\"\n[load]\nduration = \"2s\"\n\
         [[events]]\nat = \"1s\"\ndrill = \"replica-resync\"\n\
         replica = \"redis://:{WRONG_PW}@127.0.0.1:notaport\"\n"
    );
    std::fs::write(dir.join("replica.toml"), replica).unwrap();
    ran("bad replica URL", &["run", "replica.toml"], 2);

    for (name, text) in &outputs {
        assert_no_secret(name, text);
    }
    // Every file written: reports, logs, the compat front ends' files.
    let mut files = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "toml") {
            continue;
        }
        let text = String::from_utf8_lossy(&std::fs::read(&path).unwrap()).into_owned();
        assert_no_secret(&path.display().to_string(), &text);
        files += 1;
    }
    assert!(files >= 10, "{files} files written");
    // The runs did reach the server as the ACL user: the secrets were used, not dropped.
    let report: respload::Report =
        serde_json::from_str(&std::fs::read_to_string(dir.join("b.json")).unwrap()).unwrap();
    assert_eq!(report.totals.ops, 300);
    assert_eq!(report.totals.errors, 0);
    assert_eq!(
        report.workload["target"]["url"],
        format!("redis://127.0.0.1:{port}/0?user=alice&password=***")
    );
}

#[test]
fn no_output_holds_the_tls_keys_file_or_passphrase() {
    const KEY_PW: &str = "K3y-pass-phrase";
    let certs = Certs::generate();
    let server = TlsServer::start(&certs, "server", "yes");
    let encrypted = certs.encrypted_client_key("secret-enc.key", KEY_PW, false);
    // The front ends of other tools read plain keys only: a key file whose name is secret.
    let plain = certs.path("secret-plain.key");
    std::fs::copy(certs.path("client.key"), &plain).unwrap();
    let dir = certs.dir.join("out");
    std::fs::create_dir_all(&dir).unwrap();
    let port = server.tls_port.to_string();
    let (ca, cert) = (certs.path("ca.crt"), certs.path("client.crt"));
    std::fs::write(
        dir.join("tls.toml"),
        format!(
            "[target]\nhost = \"127.0.0.1\"\nport = {port}\n[target.tls]\nenabled = true\n\
             ca_file = \"{ca}\"\ncert = \"{cert}\"\nkey = \"{encrypted}\"\n\
             key_password = \"{KEY_PW}\"\n[load]\nrequests = 200\n"
        ),
    )
    .unwrap();
    let tls = ["--cacert", &ca, "--cert", &cert];
    let mut outputs: Vec<(String, String)> = Vec::new();
    let mut ran = |name: &str, args: &[&str], code: i32| {
        let (text, status) = run(&dir, args);
        assert_eq!(status, Some(code), "{name}: {text}");
        outputs.push((name.to_string(), text));
    };
    let key_args = ["--key", &encrypted, "--key-password", KEY_PW];
    let base = ["run", "-H", "127.0.0.1", "-p", &port];
    let out = ["-n", "300", "--json", "t.json", "--hdr-log", "t.hdr"];
    ran(
        "run --key --key-password",
        &[&base[..], &tls[..], &key_args[..], &out[..]].concat(),
        0,
    );
    ran("run SPEC", &["run", "tls.toml", "--json", "s.json"], 0);
    ran("check SPEC", &["check", "tls.toml"], 0);
    let wrong = [
        "--key",
        &encrypted,
        "--key-password",
        "Wr0ng-pw-guess",
        "-n",
        "10",
    ];
    ran(
        "wrong passphrase",
        &[&base[..], &tls[..], &wrong[..]].concat(),
        2,
    );
    let none = ["--key", &encrypted, "-n", "10"];
    ran(
        "no passphrase",
        &[&base[..], &tls[..], &none[..]].concat(),
        2,
    );
    let memtier = [
        "memtier",
        "-s",
        "127.0.0.1",
        "-p",
        &port,
        "--tls",
        "--key",
        &plain,
        "--json-out-file",
        "m.json",
    ];
    let args = [&memtier[..], &MEMTIER_50[..], &tls[..]].concat();
    ran("memtier --tls --key", &args, 0);
    let rb = [
        "redis-benchmark",
        "-h",
        "127.0.0.1",
        "-p",
        &port,
        "--tls",
        "--key",
        &plain,
        "-n",
        "200",
        "-t",
        "set",
        "--json",
        "rb.json",
    ];
    ran(
        "redis-benchmark --tls --key",
        &[&rb[..], &tls[..]].concat(),
        0,
    );
    ran("compare", &["compare", "t.json", "s.json"], 0);
    ran(
        "merge",
        &["merge", "t.json", "t.json", "--json", "merged.json"],
        0,
    );

    let secrets = [KEY_PW, "Wr0ng", "secret-enc", "secret-plain"];
    let mut files = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "toml") {
            continue;
        }
        let text = String::from_utf8_lossy(&std::fs::read(&path).unwrap()).into_owned();
        outputs.push((path.display().to_string(), text));
        files += 1;
    }
    assert!(files >= 6, "{files} files written");
    for (name, text) in &outputs {
        for secret in secrets {
            assert!(!text.contains(secret), "{name} shows `{secret}`:\n{text}");
        }
    }
    // The key was used: every run reached the server over mutual TLS.
    let s = &server.server;
    assert_eq!(s.calls("set") + s.calls("get"), 300 + 200 + 50 + 200);
}
