//! Cluster mode against a real 6-node Redis Cluster (3 primaries, 3 replicas).

mod common;

use common::{workload, Cluster};
use respload::run;
use serde_json::json;

/// One cluster at a time: six servers per test racing for free ports (and for two CPU
/// cores, with the failover timing) would make these tests flaky.
fn start(primaries: usize, replicas: usize) -> (std::sync::MutexGuard<'static, ()>, Cluster) {
    let guard = common::one_at_a_time();
    (guard, Cluster::start(primaries, replicas))
}

#[test]
fn sets_are_routed_to_the_node_owning_each_key() {
    let (_one, cluster) = start(3, 1);
    let report = run(&workload(json!({
        "target": { "port": cluster.port(), "cluster": true },
        "load": { "connections": 2, "pipeline": 4, "requests": 3000, "threads": 2 },
        "keys": { "range": [0, 2999], "distribution": "sequential" },
        "values": { "size": 8 },
        "commands": [{ "name": "set" }],
    })))
    .unwrap();
    assert_eq!(report.totals.ops, 3000);
    assert_eq!(
        report.totals.errors, 0,
        "{:?}",
        report.totals.errors_by_kind
    );
    assert_eq!(report.totals.redirects, 0);
    let primaries = cluster.primaries();
    assert_eq!(primaries.len(), 3);
    assert_eq!(report.nodes.len(), 3, "{:?}", report.nodes.keys());
    let mut owners = vec![0; 3000];
    let mut total = 0;
    for p in &primaries {
        let name = format!("127.0.0.1:{}", p.port);
        let node = &report.nodes[&name];
        // Every SET the node saw came from the run, and the report says which node got what.
        assert_eq!(node.ops, p.calls("set"), "{name}");
        assert!(node.ops > 500, "{name}: {}", node.ops);
        // Each node's latency, from its own replies.
        let l = &node.latency_ms;
        assert!(
            l.min > 0.0 && l.p50 >= l.min && l.max >= l.p99,
            "{name}: {l:?}"
        );
        assert_eq!(p.dbsize(), node.ops, "{name}");
        // A node stores a key only when it owns the key's slot (else it answers MOVED).
        let stored = p.cli(&["KEYS", "*"]);
        for (k, key) in stored.lines().enumerate() {
            let i: usize = key.strip_prefix("key:").unwrap().parse().unwrap();
            owners[i] += 1;
            // And the node answers for it directly (a sample: redis-cli is slow to start).
            if k % 50 == 0 {
                assert_eq!(p.cli(&["EXISTS", key]), "1");
            }
        }
        total += node.ops;
    }
    assert_eq!(total, 3000);
    // `connections` counts per primary: 2 logical clients, each with one connection to each
    // of the 3 primaries.
    let most = report.timeline.iter().map(|r| r.connections).max();
    assert_eq!(most, Some(6), "{:?}", report.timeline);
    // Each key is on exactly one primary: the one owning its slot.
    assert!(owners.iter().all(|&n| n == 1));
    assert_eq!(report.phases[0].nodes.len(), 3);
}

#[test]
fn the_slot_map_is_read_from_the_first_seed_that_answers() {
    let (_one, cluster) = start(3, 0);
    let dead = common::free_port();
    let live = cluster.primaries()[1].port;
    let spec = |target: u16| {
        workload(json!({
            "target": { "port": target, "cluster": true,
                        "cluster_seeds": [format!("127.0.0.1:{dead}"), format!("127.0.0.1:{live}")] },
            "load": { "connections": 1, "requests": 300 },
            "keys": { "range": [0, 299], "distribution": "sequential" },
            "commands": [{ "name": "set" }],
        }))
    };
    // The first seed does not answer: the map comes from the second.
    let report = run(&spec(cluster.port())).unwrap();
    assert_eq!((report.totals.ops, report.totals.errors), (300, 0));
    assert_eq!(report.nodes.len(), 3, "{:?}", report.nodes.keys());
    assert_eq!(
        report.server.address,
        format!("127.0.0.1:{}", cluster.port())
    );
    let stored: u64 = cluster.primaries().iter().map(|p| p.dbsize()).sum();
    assert_eq!(stored, 300);

    // The target itself is down too: the server's facts come from the live seed.
    for p in cluster.primaries() {
        assert_eq!(p.cli(&["FLUSHALL"]), "OK");
    }
    let report = run(&spec(dead)).unwrap();
    assert_eq!((report.totals.ops, report.totals.errors), (300, 0));
    assert_eq!(report.server.address, format!("127.0.0.1:{live}"));
    assert_eq!(report.server.mode, "cluster");
    let stored: u64 = cluster.primaries().iter().map(|p| p.dbsize()).sum();
    assert_eq!(stored, 300);

    // Nothing answers: the target's own error, before any traffic.
    let none = workload(json!({
        "target": { "port": dead, "cluster": true,
                    "cluster_seeds": [format!("127.0.0.1:{dead}")] },
        "load": { "requests": 10 },
    }));
    let err = run(&none).unwrap_err().to_string();
    assert!(err.contains(&format!("127.0.0.1:{dead}")), "{err}");
}

/// The primary serving `key` now: the one that answers a GET for it without MOVED.
fn owner<'a>(primaries: &[&'a common::Server], key: &str) -> &'a common::Server {
    primaries
        .iter()
        .find(|p| !p.cli(&["GET", key]).starts_with("MOVED"))
        .unwrap()
}

/// The owner of `key:0`'s slot, another primary, and the slot.
fn key0_slot<'a>(
    primaries: &[&'a common::Server],
) -> (&'a common::Server, &'a common::Server, String) {
    let from = owner(primaries, "key:0");
    let to = primaries.iter().find(|p| p.port != from.port).unwrap();
    let slot = from.cli(&["CLUSTER", "KEYSLOT", "key:0"]);
    (from, to, slot)
}

/// Start moving `slot` from `from` to `to`: `from` answers ASK (or TRYAGAIN) for keys it
/// does not hold.
fn start_migration(from: &common::Server, to: &common::Server, slot: &str) {
    let (from_id, to_id) = (from.node_id(), to.node_id());
    assert_eq!(
        to.cli(&["CLUSTER", "SETSLOT", slot, "IMPORTING", &from_id]),
        "OK"
    );
    assert_eq!(
        from.cli(&["CLUSTER", "SETSLOT", slot, "MIGRATING", &to_id]),
        "OK"
    );
}

#[test]
fn moved_slots_are_followed_and_counted_as_redirects() {
    // Batches too: a retry goes out when due and the batch still completes.
    for refill in ["eager", "batch"] {
        let (_one, cluster) = start(3, 0);
        let primaries = cluster.primaries();
        let (from, to, slot) = key0_slot(&primaries);
        // GETs only: the slot stays empty, so it may move while the run goes on.
        let runner = respload::Runner::start(workload(json!({
            "target": { "port": cluster.port(), "cluster": true },
            "load": { "connections": 2, "pipeline": 2, "duration": "2s", "threads": 1,
                      "refill": refill },
            "keys": { "range": [0, 9] },
            "commands": [{ "name": "get" }],
        })))
        .unwrap();
        std::thread::sleep(std::time::Duration::from_millis(600));
        let id = to.node_id();
        // The new owner first, then the old one (which then answers MOVED), then the rest.
        assert_eq!(to.cli(&["CLUSTER", "SETSLOT", &slot, "NODE", &id]), "OK");
        assert_eq!(from.cli(&["CLUSTER", "SETSLOT", &slot, "NODE", &id]), "OK");
        for p in &primaries {
            if p.port != from.port && p.port != to.port {
                p.cli(&["CLUSTER", "SETSLOT", &slot, "NODE", &id]);
            }
        }
        let report = runner.wait().unwrap();
        assert_eq!(owner(&primaries, "key:0").port, to.port);
        assert_eq!(
            report.totals.errors, 0,
            "{refill}: {:?}",
            report.totals.errors_by_kind
        );
        assert!(report.totals.redirects >= 1, "no redirect counted");
        assert_eq!(report.commands["GET"].redirects, report.totals.redirects);
        // Each redirect is counted on the node that answered MOVED: the old owner.
        let from_name = format!("127.0.0.1:{}", from.port);
        assert_eq!(
            report.nodes[&from_name].redirects, report.totals.redirects,
            "{:?}",
            report.nodes
        );
        // The map was refreshed: a handful of redirects, not one per request after the move.
        assert!(report.totals.redirects < 100, "{}", report.totals.redirects);
        let served: u64 = primaries.iter().map(|p| p.calls("get")).sum();
        // Every request is answered once, by the node owning its key when it arrived (a MOVED
        // reply is a rejected call, not counted in commandstats), plus the test's own 2 GETs
        // answered by an owner.
        assert_eq!(served, report.totals.ops + 2);
    }
}

/// Successes per second in a timeline row.
fn successes_per_sec(r: &respload::report::TimelineRow) -> f64 {
    (r.ops - r.errors) as f64 / r.interval_s.max(1e-3)
}

#[test]
fn a_killed_primary_fails_its_requests_and_the_run_recovers_after_failover() {
    let (_one, mut cluster) = start(3, 1);
    let before: Vec<u16> = cluster.primaries().iter().map(|p| p.port).collect();
    let victim = cluster
        .nodes
        .iter()
        .position(|s| s.port == before[0])
        .unwrap();
    let victim_name = format!("127.0.0.1:{}", cluster.nodes[victim].port);
    let runner = respload::Runner::start(workload(json!({
        "target": { "port": cluster.nodes[(victim + 1) % 6].port, "cluster": true },
        "load": { "connections": 2, "pipeline": 2, "duration": "12s", "threads": 1 },
        "keys": { "range": [0, 9999] },
        "values": { "size": 8 },
        "commands": [{ "name": "set" }],
    })))
    .unwrap();
    // Two full intervals before the kill give the level to come back to.
    std::thread::sleep(std::time::Duration::from_millis(2500));
    cluster.nodes[victim].kill();
    let report = runner.wait().unwrap();
    let t = &report.totals;
    let rows: Vec<_> = report
        .timeline
        .iter()
        .map(|r| (r.t, r.ops, r.errors, r.connections))
        .collect();
    assert!(t.errors > 0, "the kill went unnoticed");
    assert!(
        t.errors_by_kind.contains_key("CONNECTION"),
        "{:?}",
        t.errors_by_kind
    );
    // Every request issued is either a success or an error, counted once: in the totals, in
    // the timeline and on one node.
    let by_node: u64 = report.nodes.values().map(|n| n.ops).sum();
    assert_eq!(by_node, t.ops);
    let node_errors: u64 = report.nodes.values().map(|n| n.errors).sum();
    assert_eq!(node_errors, t.errors);
    assert_eq!(report.timeline.iter().map(|r| r.ops).sum::<u64>(), t.ops);
    assert_eq!(
        report.timeline.iter().map(|r| r.errors).sum::<u64>(),
        t.errors
    );
    // Only the killed node failed requests.
    assert_eq!(report.nodes[&victim_name].errors, t.errors, "{rows:?}");
    // The servers agree: a primary that stayed up executed exactly the SETs the report says
    // it answered; the promoted replica executed its own plus what it replicated from the
    // killed primary: at most what that primary answered, plus the requests in flight when
    // it died (executed, reply lost: errors), at most connections x pipeline = 4.
    let after: Vec<u16> = cluster.primaries().iter().map(|p| p.port).collect();
    let promoted = after
        .iter()
        .find(|p| !before.contains(p))
        .expect("no failover");
    for node in cluster.nodes.iter().filter(|n| after.contains(&n.port)) {
        let stats = &report.nodes[&format!("127.0.0.1:{}", node.port)];
        let answered = stats.ops - stats.errors;
        if node.port == *promoted {
            let v = &report.nodes[&victim_name];
            let replicated_at_most = v.ops - v.errors + 4;
            let calls = node.calls("set");
            assert!(
                calls >= answered && calls <= answered + replicated_at_most,
                "{calls} {answered} {replicated_at_most}"
            );
        } else {
            assert_eq!(node.calls("set"), answered, "{}", node.port);
        }
    }
    // The observer kept sampling every live node each interval, the dead one holding none
    // of them back, and saw the replica become a primary.
    for node in cluster.nodes.iter().filter(|n| n.port != before[0]) {
        let samples = &report.server_nodes[&format!("127.0.0.1:{}", node.port)].server_timeline;
        assert!(samples.len() >= 11, "{}: {}", node.port, samples.len());
        if node.port == *promoted {
            assert_eq!(samples[0].role, "slave");
            assert_eq!(samples.last().unwrap().role, "master");
        }
    }
    assert!(report.server_nodes[&victim_name].server_timeline.len() <= 3);
    // While the primary is dead its requests fail at once, and the live nodes keep their
    // load: the median interval with errors keeps 30% of the successes per second it had
    // before (two thirds of the keys live on; a client stalling on the dead node keeps ~5%).
    let mut outage: Vec<f64> = report
        .timeline
        .iter()
        .filter(|r| r.errors > 0)
        .map(successes_per_sec)
        .collect();
    outage.sort_by(f64::total_cmp);
    let before_kill = report.timeline[..2]
        .iter()
        .map(successes_per_sec)
        .fold(0.0, f64::max);
    let median = outage[outage.len() / 2];
    assert!(
        median >= 0.3 * before_kill,
        "during the outage {median:.0}/s, before {before_kill:.0}/s: {rows:?}"
    );
    // After the failover (node timeout 2 s), traffic flows again without errors ...
    let tail = &report.timeline[report.timeline.len() - 2..];
    assert!(tail.iter().all(|r| r.ops > 0 && r.errors == 0), "{rows:?}");
    // Connections: 2 clients to 3 primaries; the dead primary's 2 are counted out while it
    // is down, and the promoted replica's counted in.
    assert_eq!(report.timeline[0].connections, 6, "{rows:?}");
    assert!(rows.iter().any(|r| r.2 > 0 && r.3 == 4), "{rows:?}");
    assert!(tail.iter().all(|r| r.connections == 6), "{rows:?}");
    // ... with the promoted replica serving the dead primary's third of the keys: what it
    // answered (all after its promotion) is at least a quarter of the requests after the
    // last error, however busy the machine ...
    let last_error = rows.iter().rposition(|r| r.2 > 0).unwrap();
    let after_ops: u64 = rows[last_error + 1..].iter().map(|r| r.1).sum();
    let promoted_ops = report.nodes[&format!("127.0.0.1:{promoted}")].ops;
    assert!(
        promoted_ops as f64 >= 0.25 * after_ops as f64,
        "the promoted replica answered {promoted_ops} of {after_ops}: {rows:?}"
    );
    // ... and at a level near the one before the kill: the best of the last three full
    // intervals against the best of the two before it. The margin is wide because another
    // process taking a core during the run (CI on a shared machine) halves the client's
    // share of the CPU; a client stuck on the lost node keeps far less (5%, as above).
    let full: Vec<_> = report
        .timeline
        .iter()
        .filter(|r| r.interval_s > 0.99)
        .collect();
    let pre = successes_per_sec(full[0]).max(successes_per_sec(full[1]));
    assert!(full[1].errors == 0 && full[1].t <= 2.5, "{rows:?}");
    let post = full[full.len() - 3..]
        .iter()
        .map(|r| successes_per_sec(r))
        .fold(0.0, f64::max);
    assert!(
        post >= 0.4 * pre,
        "after the failover {post:.0}/s, before {pre:.0}/s: {rows:?}"
    );
}

#[test]
fn the_slot_map_is_read_again_periodically() {
    let (_one, cluster) = start(3, 0);
    let slots_calls = || -> u64 { cluster.nodes.iter().map(|n| n.calls("cluster|slots")).sum() };
    let spec = |duration: &str| {
        workload(json!({
            "target": { "port": cluster.port(), "cluster": true },
            "load": { "connections": 1, "duration": duration, "threads": 1, "rate": 500 },
            "keys": { "range": [0, 99] },
            "commands": [{ "name": "get" }],
        }))
    };
    // The same run short and long: the long one reads the map once more (every 5 s), with
    // no MOVED or error to prompt it.
    let c0 = slots_calls();
    let short = run(&spec("1s")).unwrap();
    let c1 = slots_calls();
    let long = run(&spec("6500ms")).unwrap();
    let c2 = slots_calls();
    for r in [&short, &long] {
        assert_eq!(r.totals.errors, 0, "{:?}", r.totals.errors_by_kind);
        assert_eq!(r.totals.redirects, 0);
    }
    let (once, periodic) = (c1 - c0, c2 - c1);
    assert!(once >= 1, "{once}");
    assert!(periodic > once && periodic <= once + 2, "{once} {periodic}");
}

#[test]
fn read_from_replica_sends_reads_to_replicas_and_writes_to_primaries() {
    let (_one, cluster) = start(3, 1);
    let primaries: Vec<u16> = cluster.primaries().iter().map(|p| p.port).collect();
    let report = run(&workload(json!({
        "target": { "port": cluster.port(), "cluster": true, "read_from": "replica" },
        "load": { "connections": 2, "pipeline": 4, "requests": 6000, "threads": 2 },
        "keys": { "range": [0, 999] },
        "values": { "size": 8 },
        "commands": [{ "name": "get", "weight": 2 }, { "name": "set" }],
    })))
    .unwrap();
    let t = &report.totals;
    assert_eq!(t.errors, 0, "{:?}", t.errors_by_kind);
    assert_eq!(t.redirects, 0);
    assert_eq!(report.nodes.len(), 6, "{:?}", report.nodes.keys());
    let (gets, sets) = (report.commands["GET"].ops, report.commands["SET"].ops);
    let (mut on_replicas, mut on_primaries) = (0, 0);
    for node in &cluster.nodes {
        let stats = &report.nodes[&format!("127.0.0.1:{}", node.port)];
        if primaries.contains(&node.port) {
            // Writes only: no GET reached a primary.
            assert_eq!(node.calls("get"), 0, "{}", node.port);
            assert_eq!(node.calls("set"), stats.ops, "{}", node.port);
            on_primaries += stats.ops;
        } else {
            // Every request a replica answered was a GET (it executed SETs only as
            // replicated from its primary), and it answered its share of them.
            assert_eq!(node.calls("get"), stats.ops, "{}", node.port);
            assert!(stats.ops > gets / 6, "{}: {}", node.port, stats.ops);
            assert!(node.calls("readonly") >= 2, "{}", node.port);
            on_replicas += stats.ops;
        }
    }
    assert_eq!((on_replicas, on_primaries), (gets, sets));
}

#[test]
fn read_from_replica_needs_replicas_and_prefer_replica_falls_back() {
    let (_one, cluster) = start(3, 0);
    let spec = |read_from: &str| {
        workload(json!({
            "target": { "port": cluster.port(), "cluster": true, "read_from": read_from },
            "load": { "connections": 1, "requests": 300 },
            "keys": { "range": [0, 99] },
            "commands": [{ "name": "get" }],
        }))
    };
    let err = run(&spec("replica")).unwrap_err().to_string();
    assert!(
        err.contains("target.read_from") && err.contains("no replica"),
        "{err}"
    );
    let gets = || -> u64 { cluster.nodes.iter().map(|n| n.calls("get")).sum() };
    assert_eq!(gets(), 0, "traffic before the error");
    let report = run(&spec("prefer-replica")).unwrap();
    assert_eq!(report.totals.errors, 0);
    assert_eq!(report.totals.redirects, 0);
    assert_eq!(gets(), 300);
}

#[test]
fn ask_redirections_send_asking_first_and_leave_the_map_alone() {
    // In batches too: each ASK's retry goes to the other node connection while the asking
    // node's batch is still unanswered, and the batches still complete.
    for (refill, pipeline) in [("eager", 1), ("batch", 4)] {
        let (_one, cluster) = start(3, 0);
        let primaries = cluster.primaries();
        let (from, to, slot) = key0_slot(&primaries);
        // A migration under way: the old owner answers ASK for keys it does not hold.
        start_migration(from, to, &slot);
        let report = run(&workload(json!({
            "target": { "port": cluster.port(), "cluster": true },
            "load": { "connections": 1, "requests": 200, "pipeline": pipeline,
                      "refill": refill },
            "keys": { "range": [0, 0] },
            "commands": [{ "name": "get" }],
        })))
        .unwrap();
        assert_eq!(
            report.totals.errors, 0,
            "{refill}: {:?}",
            report.totals.errors_by_kind
        );
        assert_eq!(report.totals.misses, 200, "{refill}");
        // Every request was asked along: the map still says the old owner.
        assert_eq!(report.totals.redirects, 200, "{refill}");
        let name = format!("127.0.0.1:{}", to.port);
        assert_eq!(report.nodes[&name].ops, 200, "{:?}", report.nodes.keys());
        // The old owner answered ASK to each: it shows them, and no requests of its own.
        let asked = &report.nodes[&format!("127.0.0.1:{}", from.port)];
        assert_eq!((asked.redirects, asked.ops), (200, 0), "{refill}");
        assert_eq!(to.calls("asking"), 200, "{refill}");
        // An ASK reply is a rejected call: the old owner ran only the test's own lookup.
        assert_eq!(from.calls("get"), 1, "{refill}");
        assert_eq!(to.calls("get"), 200, "{refill}");
    }
}

#[test]
fn open_loop_keeps_its_rate_across_the_nodes() {
    let (_one, cluster) = start(3, 0);
    let report = run(&workload(json!({
        "target": { "port": cluster.port(), "cluster": true },
        "load": { "connections": 2, "duration": "2s", "rate": 3000 },
        "keys": { "range": [0, 9999] },
    })))
    .unwrap();
    let t = &report.totals;
    assert_eq!(t.errors, 0, "{:?}", t.errors_by_kind);
    assert!((t.ops_per_sec - 3000.0).abs() < 60.0, "{}", t.ops_per_sec);
    assert!(t.service_ms.is_some());
    assert_eq!(report.nodes.len(), 3);
    let by_node: u64 = report.nodes.values().map(|n| n.ops).sum();
    assert_eq!(by_node, t.ops);
    // 2 connections per primary: 6. Nothing due after the 2 s is sent (at 3,000/s the
    // workers' 20 ms tick would have let up to 60 more go).
    let unsent = report.unsent.as_ref().map_or(0, |u| u.requests);
    assert!(
        (t.ops + unsent).abs_diff(6000) <= 6,
        "ops {} + unsent {unsent}",
        t.ops
    );
}

#[test]
fn an_open_loop_client_waiting_for_its_next_request_ends_with_the_run() {
    let (_one, cluster) = start(3, 0);
    // One request every 20 s per client, the second client's first 10 s in: when the run's
    // second ends, both clients are asleep until their next, 9 s away or more. The end of
    // the run must wake them.
    let (report, took, gets) = timed_gets(
        &cluster,
        json!({ "connections": 2, "duration": "1s", "rate": 0.1, "threads": 1 }),
    );
    assert!(took < 5.0, "the run took {took:.1} s");
    let t = &report.totals;
    assert_eq!(t.errors, 0, "{:?}", t.errors_by_kind);
    assert!(t.ops >= 1 && t.ops <= 2, "{}", t.ops);
    assert_eq!(gets, t.ops);
}

/// A run of GETs on `cluster` with `load`: its report, how long it took (s), and the GETs
/// the primaries served.
fn timed_gets(cluster: &Cluster, load: serde_json::Value) -> (respload::Report, f64, u64) {
    let started = std::time::Instant::now();
    let report = run(&workload(json!({
        "target": { "port": cluster.port(), "cluster": true },
        "load": load,
        "keys": { "range": [0, 9999] },
        "commands": [{ "name": "get" }],
    })))
    .unwrap();
    let took = started.elapsed().as_secs_f64();
    let gets = cluster.primaries().iter().map(|p| p.calls("get")).sum();
    (report, took, gets)
}

#[test]
fn clients_waiting_for_their_next_request_end_once_the_requests_are_sent() {
    let (_one, cluster) = start(3, 0);
    // As the standalone test of the same name (open_loop.rs): 20 clients sharing 2 requests
    // a second, 2 requests in all; the 18 clients whose first request is not due yet sleep.
    let (report, took, gets) = timed_gets(
        &cluster,
        json!({ "connections": 20, "rate": 2, "requests": 2, "threads": 1 }),
    );
    assert!(took < 5.0, "the run took {took:.1} s");
    assert_eq!((report.totals.ops, report.totals.errors), (2, 0));
    assert_eq!(gets, 2);
}

#[test]
fn replies_longer_than_a_read_are_put_together_on_every_node() {
    let (_one, cluster) = start(3, 0);
    // 200 kB values: a node connection reads its replies first into the worker's shared
    // buffer, and each read ends inside a reply that must be kept for the next one.
    let spec = |cmd: &str, n: u64| {
        workload(json!({
            "target": { "port": cluster.port(), "cluster": true },
            "load": { "connections": 3, "pipeline": 4, "requests": n, "threads": 1 },
            "keys": { "range": [0, 29], "distribution": "sequential" },
            "values": { "size": 200000 },
            "commands": [{ "name": cmd }],
        }))
    };
    let set = run(&spec("set", 30)).unwrap();
    assert_eq!(set.totals.errors, 0, "{:?}", set.totals.errors_by_kind);
    for node in cluster.primaries() {
        assert!(node.calls("set") > 0, "{}", node.port);
    }
    let get = run(&spec("get", 300)).unwrap();
    let t = &get.totals;
    assert_eq!(t.errors, 0, "{:?}", t.errors_by_kind);
    assert_eq!((t.ops, t.hits, t.misses), (300, 300, 0));
    // Every reply whole: "$200000\r\n", the value, "\r\n".
    assert_eq!(t.bytes_received, 300 * (9 + 200_000 + 2));
    assert_eq!(get.nodes.len(), 3);
}

#[test]
fn stop_gives_a_partial_report_with_every_request_accounted_for() {
    let (_one, cluster) = start(3, 0);
    let runner = respload::Runner::start(workload(json!({
        "target": { "port": cluster.port(), "cluster": true },
        "load": { "connections": 3, "pipeline": 8, "duration": "20s", "threads": 2 },
        "keys": { "range": [0, 999] },
        "commands": [{ "name": "set" }],
    })))
    .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(700));
    let report = runner.stop().unwrap();
    assert!(report.interrupted);
    assert!(report.duration_s < 5.0, "{}", report.duration_s);
    let t = &report.totals;
    assert!(t.ops > 1000, "{}", t.ops);
    // Requests cut off by the stop are errors (ABORTED), never lost.
    assert_eq!(
        t.errors,
        t.errors_by_kind.get("ABORTED").copied().unwrap_or(0)
    );
    let sets: u64 = cluster.primaries().iter().map(|p| p.calls("set")).sum();
    assert!(
        sets >= t.ops - t.errors && sets <= t.ops,
        "{sets} {}",
        t.ops
    );
}

#[test]
fn clusterdown_is_retried_after_a_backoff() {
    let (_one, cluster) = start(3, 0);
    let primaries = cluster.primaries();
    let from = owner(&primaries, "key:0");
    let slot = from.cli(&["CLUSTER", "KEYSLOT", "key:0"]);
    let runner = respload::Runner::start(workload(json!({
        "target": { "port": cluster.port(), "cluster": true },
        "load": { "connections": 2, "duration": "2s", "threads": 1 },
        "keys": { "range": [0, 99] },
        "commands": [{ "name": "get" }],
    })))
    .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(500));
    // One slot served by no node: the cluster is down (full coverage is required) ...
    for p in &primaries {
        p.cli(&["CLUSTER", "DELSLOTS", &slot]);
    }
    std::thread::sleep(std::time::Duration::from_millis(300));
    // ... until its owner takes it back.
    assert_eq!(from.cli(&["CLUSTER", "ADDSLOTS", &slot]), "OK");
    let report = runner.wait().unwrap();
    let t = &report.totals;
    assert!(t.redirects > 0, "no CLUSTERDOWN seen");
    assert_eq!(t.errors, 0, "{:?}", t.errors_by_kind);
}

#[test]
fn tryagain_is_retried_and_counted_as_an_error_only_when_the_tries_run_out() {
    let (_one, cluster) = start(3, 0);
    let primaries = cluster.primaries();
    let (from, to, slot) = key0_slot(&primaries);
    // One of the two keys of each MGET is on the old owner: during a migration a request
    // that finds some of its keys but not all gets TRYAGAIN (directly, or after ASK from
    // the importing node, depending on the server's version).
    assert_eq!(from.cli(&["SET", "{key:0}:a", "x"]), "OK");
    let spec = |load: serde_json::Value| {
        workload(json!({
            "target": { "port": cluster.port(), "cluster": true },
            "load": load,
            "keys": { "range": [0, 0] },
            "commands": [{ "template": "MGET {{key}}:a {{key}}:b" }],
        }))
    };
    let max_tries = respload::internals::MAX_TRIES as u64;

    // A migration that never ends: each request is tried 1 + MAX_TRIES times, then its last
    // reply counts as the error.
    start_migration(from, to, &slot);
    let report = run(&spec(json!({ "connections": 1, "requests": 4 }))).unwrap();
    let t = &report.totals;
    assert_eq!(t.ops, 4);
    assert_eq!(t.errors, 4, "{:?}", t.errors_by_kind);
    assert_eq!(
        t.errors_by_kind.get("TRYAGAIN"),
        Some(&4),
        "{:?}",
        t.errors_by_kind
    );
    assert_eq!(t.redirects, 4 * max_tries);
    assert_eq!(
        from.calls("mget") + to.calls("mget"),
        0,
        "no MGET was served"
    );

    // The migration is called off while requests are being retried: the request under
    // retry then succeeds. Each request that ran out of tries has exactly MAX_TRIES
    // redirects, so more than that means retried requests succeeded.
    let runner = respload::Runner::start(spec(
        json!({ "connections": 1, "duration": "1500ms", "threads": 1 }),
    ))
    .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(500));
    assert_eq!(from.cli(&["CLUSTER", "SETSLOT", &slot, "STABLE"]), "OK");
    assert_eq!(to.cli(&["CLUSTER", "SETSLOT", &slot, "STABLE"]), "OK");
    let report = runner.wait().unwrap();
    let t = &report.totals;
    let tryagain = t.errors_by_kind.get("TRYAGAIN").copied().unwrap_or(0);
    assert_eq!(t.errors, tryagain, "{:?}", t.errors_by_kind);
    assert!(
        t.redirects > max_tries * t.errors,
        "{} {}",
        t.redirects,
        t.errors
    );
    // Closed loop: requests waiting for a retry count as in flight, so the 500 ms of
    // migration cost a few requests' retries, not one per round trip (40,916 redirects
    // before they counted).
    assert!(t.redirects < 200, "{}", t.redirects);
    assert!(t.errors < 20, "{}", t.errors);
    // Every success was served by the owner, once: the retries did not send it twice.
    assert_eq!(from.calls("mget"), t.ops - t.errors);
    assert!(t.ops - t.errors > 100, "{}", t.ops);
}

#[test]
fn a_tls_cluster_is_loaded_over_rediss_on_its_tls_ports() {
    let _one = common::one_at_a_time();
    let certs = common::Certs::generate();
    let cluster = Cluster::start_tls(3, 1, &certs);
    let report = run(&workload(json!({
        "target": {
            "url": format!("rediss://127.0.0.1:{}", cluster.tls_ports[0]),
            "cluster": true,
            "read_from": "replica",
            "tls": { "ca_file": certs.path("ca.crt") },
        },
        "load": { "connections": 2, "pipeline": 4, "requests": 4000, "threads": 2 },
        "keys": { "range": [0, 999] },
        "values": { "size": 8 },
        "commands": [{ "name": "set" }, { "name": "get" }],
    })))
    .unwrap();
    let t = &report.totals;
    assert_eq!(t.errors, 0, "{:?}", t.errors_by_kind);
    assert_eq!(t.redirects, 0);
    // Over TLS the cluster names its nodes by their TLS ports (CLUSTER SLOTS answers a TLS
    // client with them): every node of the report is one, and its counts are what the node
    // executed (read on its plain port).
    assert_eq!(report.nodes.len(), 6, "{:?}", report.nodes.keys());
    let primaries: Vec<u16> = cluster.primaries().iter().map(|p| p.port).collect();
    let mut total = 0;
    for (node, tls_port) in cluster.nodes.iter().zip(&cluster.tls_ports) {
        let stats = &report.nodes[&format!("127.0.0.1:{tls_port}")];
        let command = if primaries.contains(&node.port) {
            "set"
        } else {
            "get"
        };
        assert_eq!(node.calls(command), stats.ops, "{} {command}", node.port);
        assert!(stats.ops > 100, "{}: {}", node.port, stats.ops);
        total += stats.ops;
    }
    assert_eq!(total, 4000);
    // The replicas were kept in sync over TLS (tls-replication): each comes to hold its
    // primary's keys.
    let counts = || -> (u64, u64) {
        let on = |primary: bool| -> u64 {
            cluster
                .nodes
                .iter()
                .filter(|n| primaries.contains(&n.port) == primary)
                .map(|n| n.dbsize())
                .sum()
        };
        (on(true), on(false))
    };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while counts().0 != counts().1 && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let (on_primaries, on_replicas) = counts();
    assert!(on_primaries > 500, "{on_primaries}");
    assert_eq!(on_replicas, on_primaries);
}

#[test]
fn every_node_is_sampled_with_info_aligned_with_the_timeline() {
    let (_one, cluster) = start(3, 1);
    let primaries: Vec<u16> = cluster.primaries().iter().map(|p| p.port).collect();
    let report = run(&workload(json!({
        "target": { "port": cluster.port(), "cluster": true, "read_from": "replica" },
        "load": { "connections": 2, "pipeline": 4, "duration": "3s", "threads": 1 },
        "keys": { "range": [0, 999] },
        "values": { "size": 8 },
        "commands": [{ "name": "get" }, { "name": "set" }],
    })))
    .unwrap();
    assert_eq!(
        report.totals.errors, 0,
        "{:?}",
        report.totals.errors_by_kind
    );
    // Per node, not one series for the seed node.
    assert!(report.server_timeline.is_empty());
    let names: Vec<&String> = report.server_nodes.keys().collect();
    assert_eq!(names, report.nodes.keys().collect::<Vec<_>>());
    for node in &cluster.nodes {
        let name = format!("127.0.0.1:{}", node.port);
        let series = &report.server_nodes[&name];
        let samples = &series.server_timeline;
        assert!(samples.len() >= 3, "{name}: {samples:?}");
        // Sampled at the timeline's instants, every node at the same ones.
        for (s, row) in samples.iter().zip(&report.timeline).take(2) {
            assert!((s.t - row.t).abs() < 0.05, "{name}: {} vs {}", s.t, row.t);
        }
        let primary = primaries.contains(&node.port);
        assert!(samples
            .iter()
            .all(|s| s.role == if primary { "master" } else { "slave" }));
        // What the node says it processed covers what the report says it answered (plus,
        // on a replica, the writes it replicated; plus INFO and the like).
        let mut processed = 0.0;
        let mut t0 = 0.0;
        for s in samples {
            processed += s.ops_per_sec * (s.t - t0);
            t0 = s.t;
        }
        let answered = report.nodes[&name].ops as f64;
        assert!(
            processed > 0.85 * answered,
            "{name}: {processed} vs {answered}"
        );
        if primary {
            assert!(
                processed < 1.15 * answered + 50.0,
                "{name}: {processed} vs {answered}"
            );
            assert!(samples[0].connected_slaves == 1 && samples[0].cpu_percent > 0.0);
        } else {
            assert_eq!(samples[0].master_link_status, "up");
        }
        let load = series.server_load.as_ref().unwrap();
        assert_eq!(load.samples, samples.len() as u64);
        assert!(load.peak_node.is_none());
    }
    // The summary flags the busiest node against the 80% line.
    let load = report.server_load.as_ref().unwrap();
    let busiest = report
        .server_nodes
        .iter()
        .map(|(n, s)| (n, s.server_load.as_ref().unwrap().peak_cpu_percent))
        .max_by(|a, b| a.1.total_cmp(&b.1))
        .unwrap();
    assert_eq!(load.peak_node.as_ref(), Some(busiest.0));
    assert_eq!(load.peak_cpu_percent, busiest.1);
    assert_eq!(load.cpu_over_limit, busiest.1 > 80.0);
    let all: u64 = report
        .server_nodes
        .values()
        .map(|s| s.server_timeline.len() as u64)
        .sum();
    assert_eq!(load.samples, all);
    assert_eq!(report.phases[0].server_nodes.len(), 6);
    // A timeline row's server CPU is its busiest node's in that interval.
    for row in report.timeline.iter().take(2) {
        let busiest = report
            .server_nodes
            .values()
            .filter_map(|n| {
                n.server_timeline
                    .iter()
                    .find(|s| (s.t - row.t).abs() < 0.05)
            })
            .map(|s| s.cpu_percent)
            .reduce(f64::max);
        assert!(busiest.is_some());
        assert_eq!(row.server_cpu_percent, busiest, "{row:?}");
    }
    assert_eq!(
        report.phases[0].server_load.as_ref().unwrap().peak_node,
        load.peak_node
    );
}

#[test]
fn multi_key_templates_run_when_their_keys_share_a_hash_tag_and_are_refused_otherwise() {
    let (_one, cluster) = start(3, 0);
    let spec = |template: &str| {
        workload(json!({
            "target": { "port": cluster.port(), "cluster": true },
            "load": { "connections": 2, "requests": 600 },
            "keys": { "range": [0, 299], "distribution": "sequential" },
            "values": { "size": 8 },
            "commands": [{ "template": template }],
        }))
    };
    // Keys of unrelated slots: refused before any traffic, naming the field and the fix.
    let err = respload::Workload::from_json_value(json!({
        "target": { "port": cluster.port(), "cluster": true },
        "commands": [{ "name": "get" }, { "template": "MSET user:{key}:a {value} user:{key}:b {value}" }],
    }))
    .unwrap_err()
    .to_string();
    assert!(
        err.contains("commands[1].template")
            && err.contains("CROSSSLOT")
            && err.contains("hash tag"),
        "{err}"
    );
    // The request's key as the hash tag of both: one slot, on the node owning the key.
    let report = run(&spec("MSET user:{{key}}:a {value} user:{{key}}:b {value}")).unwrap();
    let t = &report.totals;
    assert_eq!(t.errors, 0, "{:?}", t.errors_by_kind);
    assert_eq!(t.redirects, 0);
    let primaries = cluster.primaries();
    let msets: u64 = primaries.iter().map(|p| p.calls("mset")).sum();
    assert_eq!(msets, 600);
    let stored: u64 = primaries.iter().map(|p| p.dbsize()).sum();
    assert_eq!(stored, 600);
    for i in [0, 137, 299] {
        let key = format!("key:{i}");
        let node = owner(&primaries, &key);
        assert_eq!(node.cli(&["EXISTS", &format!("user:{{{key}}}:a")]), "1");
        assert_eq!(node.cli(&["EXISTS", &format!("user:{{{key}}}:b")]), "1");
    }
}

#[test]
fn scripts_and_subcommands_are_routed_by_their_key_not_their_first_argument() {
    let (_one, cluster) = start(3, 0);
    let report = run(&workload(json!({
        "target": { "port": cluster.port(), "cluster": true },
        "load": { "connections": 1, "requests": 600, "threads": 1 },
        "keys": { "range": [0, 199], "distribution": "sequential" },
        "commands": [
            { "template": "EVAL 'return redis.call(\"SET\", KEYS[1], ARGV[1])' 1 {key} {value}",
              "label": "eval" },
            { "template": "OBJECT ENCODING {key}", "label": "object" },
            { "template": "PING", "label": "ping" },
        ],
    })))
    .unwrap();
    assert_eq!(
        report.totals.errors, 0,
        "{:?}",
        report.totals.errors_by_kind
    );
    // Each went straight to its key's owner: no MOVED to follow.
    assert_eq!(report.totals.redirects, 0, "{:?}", report.commands);
    let evals: u64 = cluster.primaries().iter().map(|p| p.calls("eval")).sum();
    assert_eq!(evals, report.commands["EVAL"].ops);
    assert!(report.commands["OBJECT"].ops > 100 && report.commands["PING"].ops > 100);
}

#[test]
fn batch_refill_applies_to_each_node_connection() {
    // A one-node cluster that announces a proxy's port, so that the client's node connection
    // goes through the proxy, which sees when requests are written.
    let bus = common::free_port().to_string();
    let node = common::Server::start(&[
        "--cluster-enabled",
        "yes",
        "--cluster-config-file",
        "nodes.conf",
        "--cluster-port",
        &bus,
        "--cluster-announce-ip",
        "127.0.0.1",
    ]);
    // Values of 20 kB: a batch's 8 replies (160 kB) reach the client in several reads.
    node.cli(&["CLUSTER", "ADDSLOTSRANGE", "0", "16383"]);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while !node.cli(&["CLUSTER", "INFO"]).contains("cluster_state:ok") {
        assert!(
            std::time::Instant::now() < deadline,
            "the cluster did not come up"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let value = "v".repeat(20_000);
    for k in 0..20 {
        node.cli(&["SET", &format!("key:{k}"), &value]);
    }
    let busy = common::writes_while_busy(node.port, [0, 19], |proxy| {
        let port = proxy.port.to_string();
        node.cli(&["CONFIG", "SET", "cluster-announce-port", &port]);
        let slots = node.cli(&["CLUSTER", "SLOTS"]);
        assert!(slots.contains(&port), "{slots}");
        json!({ "port": proxy.port, "cluster": true })
    });
    // Eager: requests follow each read while the rest of the pipeline is unanswered.
    // Batch: never before the last reply of the node connection's batch is in.
    assert!(busy[0] > 10, "eager: {}", busy[0]);
    assert_eq!(busy[1], 0, "batch");
}

#[test]
fn tracking_invalidations_between_replies_are_skipped_on_every_node() {
    let (_one, cluster) = start(3, 0);
    let primaries = cluster.primaries();
    let keyspace = || {
        primaries
            .iter()
            .map(|p| common::keyspace(p))
            .fold((0, 0), |(h, m), (a, b)| (h + a, m + b))
    };
    let before = keyspace();
    let report = run(&workload(json!({
        "target": { "port": cluster.port(), "cluster": true, "protocol": 3, "tracking": true },
        "load": { "connections": 2, "pipeline": 4, "requests": 3000, "threads": 1 },
        "keys": { "range": [0, 29] },
        "values": { "size": 10 },
        "commands": [{ "name": "get" }, { "name": "set" }],
    })))
    .unwrap();
    let t = &report.totals;
    assert_eq!((t.ops, t.errors), (3000, 0), "{:?}", t.errors_by_kind);
    let get = &report.commands["GET"];
    assert!(get.hits > 0, "{get:?}");
    // Hits and misses exactly as the nodes counted their reads (SET counts neither).
    let after = keyspace();
    assert_eq!(
        (after.0 - before.0, after.1 - before.1),
        (get.hits, get.misses),
        "the nodes' (keyspace_hits, keyspace_misses) against {get:?}"
    );
    // Each node's GET replies were GETs' (an invalidation taken for one would shift them).
    let served: u64 = primaries.iter().map(|p| p.calls("get")).sum();
    assert_eq!(served, get.ops);
    // Two load connections per primary asked for tracking; the slot map reads did not.
    for p in &primaries {
        assert_eq!(p.calls("client|tracking"), 2, "{}", p.port);
    }
}
