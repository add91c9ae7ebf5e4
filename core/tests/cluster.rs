//! Cluster mode against a real 6-node Redis Cluster (3 primaries, 3 replicas).

mod common;

use common::{workload, Cluster};
use respload::run;
use serde_json::json;

#[test]
fn sets_are_routed_to_the_node_owning_each_key() {
    let cluster = Cluster::start(3, 1);
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
    // Each key is on exactly one primary: the one owning its slot.
    assert!(owners.iter().all(|&n| n == 1));
    assert_eq!(report.phases[0].nodes.len(), 3);
}
