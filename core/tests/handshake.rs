//! Transports and connection set-up against real servers: Unix sockets, IPv6, host names,
//! AUTH with a password or an ACL user, SELECT, CLIENT SETNAME, RESP3, CLIENT TRACKING.

mod common;

use common::{workload, Server};
use respload::{run, Error, Runner};
use serde_json::json;
use std::time::Duration;

fn sets(target: serde_json::Value, n: u64) -> respload::Result<respload::Report> {
    run(&workload(json!({
        "target": target,
        "load": { "connections": 2, "requests": n },
        "keys": { "range": [0, n - 1], "distribution": "sequential" },
        "commands": [{ "name": "set" }],
    })))
}

#[test]
fn unix_socket_ipv6_and_host_names_carry_traffic() {
    let server = Server::start(&[]);
    let r = sets(json!({ "unix": server.socket() }), 300).unwrap();
    assert_eq!((r.totals.ops, r.totals.errors), (300, 0));
    assert_eq!(server.dbsize(), 300);
    server.cli(&["FLUSHALL"]);
    let r = sets(
        json!({ "url": format!("redis://[::1]:{}", server.port) }),
        400,
    )
    .unwrap();
    assert_eq!(r.server.address, format!("[::1]:{}", server.port));
    assert_eq!(server.dbsize(), 400);
    server.cli(&["FLUSHALL"]);
    sets(json!({ "host": "localhost", "port": server.port }), 500).unwrap();
    assert_eq!(server.dbsize(), 500);
}

#[test]
fn password_auth_works_and_bad_credentials_fail_before_traffic() {
    let server = Server::start(&["--requirepass", "s3cret"]);
    let r = sets(json!({ "port": server.port, "password": "s3cret" }), 200).unwrap();
    assert_eq!(r.totals.ops, 200);
    assert!(
        !r.workload.to_string().contains("s3cret"),
        "password leaked into the report"
    );
    let count = server.cli(&["-a", "s3cret", "--no-auth-warning", "DBSIZE"]);
    assert_eq!(count, "200");

    let wrong = sets(json!({ "port": server.port, "password": "nope" }), 10).unwrap_err();
    assert!(matches!(wrong, Error::Auth { .. }), "{wrong}");
    assert!(wrong.to_string().contains("WRONGPASS"), "{wrong}");
    let missing = sets(json!({ "port": server.port }), 10).unwrap_err();
    assert!(missing.to_string().contains("NOAUTH"), "{missing}");
    // The hint is the password, not the command that happened to go first.
    assert!(
        missing
            .to_string()
            .contains("the server requires a password: target.password")
            && !missing.to_string().contains("client_name"),
        "{missing}"
    );

    // RESP3: the password goes inside HELLO 3, with the same errors.
    let r3 = sets(
        json!({ "port": server.port, "password": "s3cret", "protocol": 3 }),
        200,
    )
    .unwrap();
    assert_eq!((r3.totals.ops, r3.totals.errors), (200, 0));
    let stats = server.cli(&["-a", "s3cret", "--no-auth-warning", "INFO", "commandstats"]);
    assert!(stats.contains("cmdstat_hello:calls="), "{stats}");
    let wrong3 = sets(
        json!({ "port": server.port, "password": "nope", "protocol": 3 }),
        10,
    )
    .unwrap_err();
    assert!(matches!(wrong3, Error::Auth { .. }), "{wrong3}");
    assert!(wrong3.to_string().contains("WRONGPASS"), "{wrong3}");
}

#[test]
fn acl_users_authenticate_and_their_limits_show_as_counted_errors() {
    let server = Server::start(&[]);
    server.cli(&["ACL", "SETUSER", "bench", "on", ">pw", "~bench:*", "+@all"]);
    let url = format!("redis://bench:pw@127.0.0.1:{}", server.port);
    let report = run(&workload(json!({
        "target": { "url": url },
        "load": { "connections": 2, "requests": 600 },
        "commands": [
            { "template": "SET bench:{rand:1..50} {value}" },
            { "template": "SET other:{rand:1..50} {value}", "label": "forbidden" },
        ],
    })))
    .unwrap();
    assert!(
        !report.workload.to_string().contains(":pw@"),
        "password leaked"
    );
    assert_eq!(report.commands["SET"].errors, 0);
    let forbidden = &report.commands["FORBIDDEN"];
    assert!(forbidden.ops > 0);
    assert_eq!(forbidden.errors_by_kind["NOPERM"], forbidden.ops);
    assert_eq!(server.cli(&["KEYS", "other:*"]), "");
}

#[test]
fn a_refused_select_or_client_setname_fails_before_traffic_naming_the_field() {
    let server = Server::start(&[]);
    server.cli(&[
        "ACL", "SETUSER", "nosel", "on", ">pw", "~*", "+@all", "-select",
    ]);
    server.cli(&[
        "ACL", "SETUSER", "noname", "on", ">pw", "~*", "+@all", "-client",
    ]);
    server.cli(&["CONFIG", "RESETSTAT"]);
    let url = |user: &str, db: u32| format!("redis://{user}:pw@127.0.0.1:{}/{db}", server.port);
    for (target, says) in [
        (
            json!({ "url": url("nosel", 2) }),
            ["SELECT failed: NOPERM", "target.db"],
        ),
        (
            json!({ "url": url("noname", 0) }),
            ["CLIENT failed: NOPERM", "target.client_name"],
        ),
    ] {
        let err = sets(target, 10).unwrap_err();
        assert!(matches!(err, Error::Auth { .. }), "{err}");
        let text = err.to_string();
        assert!(says.iter().all(|s| text.contains(s)), "{text}");
    }
    let stats = server.cli(&["INFO", "commandstats"]);
    assert!(!stats.contains("cmdstat_set:"), "traffic was sent: {stats}");
    // What the errors point to works: no SELECT for database 0, no name.
    let unnamed = json!({ "url": url("noname", 0), "client_name": "" });
    assert_eq!(sets(unnamed, 10).unwrap().totals.errors, 0);
    assert_eq!(
        sets(json!({ "url": url("nosel", 0) }), 10)
            .unwrap()
            .totals
            .ops,
        10
    );
    assert_eq!(server.dbsize(), 10);
}

#[test]
fn select_puts_keys_in_the_chosen_database() {
    let server = Server::start(&[]);
    sets(json!({ "url": format!("{}/3", server.url()) }), 250).unwrap();
    assert_eq!(server.cli(&["-n", "3", "DBSIZE"]), "250");
    assert_eq!(server.dbsize(), 0);
}

#[test]
fn every_connection_carries_the_client_name() {
    let server = Server::start(&[]);
    let runner = Runner::start(workload(json!({
        "target": { "url": server.url(), "client_name": "loadtest-7" },
        "load": { "connections": 5, "duration": "2s" },
        "commands": [{ "name": "ping" }],
    })))
    .unwrap();
    runner
        .next_snapshot(Duration::from_secs(5))
        .expect("a first snapshot");
    let list = server.cli(&["CLIENT", "LIST"]);
    assert_eq!(list.matches("name=loadtest-7 ").count(), 5, "{list}");
    runner.wait().unwrap();
}

#[test]
fn resp3_replies_are_classified_like_resp2() {
    let server = Server::start(&[]);
    sets(json!({ "port": server.port }), 100).unwrap();
    let before = common::keyspace(&server);
    let report = run(&workload(json!({
        "target": { "port": server.port, "protocol": 3 },
        "load": { "connections": 2, "requests": 1000 },
        "keys": { "range": [0, 199] },
        "commands": [{ "name": "get" }, { "template": "HGETALL nohash" }],
    })))
    .unwrap();
    let after = common::keyspace(&server);
    let get = &report.commands["GET"];
    assert_eq!(get.hits + get.misses, get.ops);
    // Keys 0-99 of 0-199 exist: both kinds of reply are seen.
    assert!(get.hits > 0 && get.misses > 0, "{get:?}");
    // HGETALL of a missing key is an empty map in RESP3: a miss.
    let h = &report.commands["HGETALL"];
    assert_eq!((h.misses, h.errors), (h.ops, 0));
    // Exactly as the server counted its reads: every GET that found its key is a hit, every
    // GET or HGETALL that did not is a miss (the writes and INFO count neither).
    assert_eq!(
        (after.0 - before.0, after.1 - before.1),
        (get.hits, get.misses + h.misses),
        "the server's (keyspace_hits, keyspace_misses) against GET {get:?}, HGETALL {h:?}"
    );
}

#[test]
fn tracking_invalidations_are_pushed_in_resp3_and_skipped_between_replies() {
    let server = Server::start(&[]);
    for protocol in [3, 2] {
        let proxy = common::Proxy::start(server.port);
        let tracking_before = server.calls("client|tracking");
        let gets_before = server.calls("get");
        let keyspace_before = common::keyspace(&server);
        // Each connection reads keys and then writes them: the server tracks what it read
        // and, in RESP3, pushes an invalidation when a key it read is written (by itself).
        let report = run(&workload(json!({
            "target": { "port": proxy.port, "protocol": protocol, "tracking": true },
            "load": { "connections": 3, "pipeline": 4, "requests": 3000, "threads": 1 },
            "keys": { "range": [0, 19] },
            "values": { "size": 10 },
            "commands": [{ "name": "get" }, { "name": "set" }],
        })))
        .unwrap();
        let t = &report.totals;
        assert_eq!(
            (t.ops, t.errors),
            (3000, 0),
            "RESP{protocol}: {:?}",
            t.errors_by_kind
        );
        let get = &report.commands["GET"];
        assert_eq!(get.hits + get.misses, get.ops, "RESP{protocol}");
        assert!(get.hits > 0, "RESP{protocol}: {get:?}");
        // Hits and misses exactly as the server counted its reads (SET counts neither): an
        // invalidation taken for a reply would misclassify one.
        let keyspace = common::keyspace(&server);
        assert_eq!(
            (
                keyspace.0 - keyspace_before.0,
                keyspace.1 - keyspace_before.1
            ),
            (get.hits, get.misses),
            "RESP{protocol}: the server's (keyspace_hits, keyspace_misses) against {get:?}"
        );
        // Every GET reply was a GET's: as many as the server answered.
        assert_eq!(server.calls("get") - gets_before, get.ops, "RESP{protocol}");
        // Only the load connections asked for tracking, not the server probe.
        assert_eq!(
            server.calls("client|tracking") - tracking_before,
            3,
            "RESP{protocol}"
        );
        let pushes = proxy.pushes.load(std::sync::atomic::Ordering::SeqCst);
        if protocol == 3 {
            assert!(pushes > 100, "RESP3: {pushes} invalidations");
        } else {
            assert_eq!(pushes, 0, "RESP2 delivers no invalidations");
        }
    }
}

#[test]
fn a_refused_client_tracking_names_the_field() {
    let server = Server::start(&[]);
    server.cli(&[
        "ACL",
        "SETUSER",
        "notrack",
        "on",
        ">pw",
        "~*",
        "+@all",
        "-client|tracking",
    ]);
    let err = sets(
        json!({ "port": server.port, "user": "notrack", "password": "pw", "tracking": true }),
        10,
    )
    .unwrap_err()
    .to_string();
    assert!(err.contains("CLIENT failed: NOPERM"), "{err}");
    assert!(err.contains("target.tracking"), "{err}");
    assert_eq!(server.dbsize(), 0);
}

#[test]
fn a_server_whose_reply_never_ends_fails_the_run_before_traffic() {
    use std::io::{Read, Write};
    // Answers the connection set-up with a simple string that never ends: 1 MiB writes of
    // `a` without CRLF, until the client hangs up.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let server = std::thread::spawn(move || {
        let (mut sock, _) = listener.accept().unwrap();
        let mut first = [0u8; 64];
        let _ = sock.read(&mut first);
        let chunk = vec![b'a'; 1 << 20];
        sock.write_all(b"+").unwrap();
        while sock.write_all(&chunk).is_ok() {}
    });
    let err = sets(json!({ "port": port }), 10).unwrap_err();
    assert!(matches!(err, Error::Protocol { .. }), "{err}");
    // A line is refused at 1 MiB, long before the set-up's 64 MiB limit on a reply.
    assert!(err.to_string().contains("line too long"), "{err}");
    server.join().unwrap();
}
