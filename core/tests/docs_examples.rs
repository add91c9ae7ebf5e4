//! The Rust example that docs/guide.md and docs/getting-started.md show (the part between the
//! snippet markers, included by the docs build), run here against a real redis-server so that
//! it cannot rot.

mod common;

use common::Server;

#[test]
fn the_documented_rust_example_runs() -> respload::Result<()> {
    let server = Server::start(&[]);
    let url = server.url();
    // --8<-- [start:rust]
    use respload::{run, Runner, Workload};
    use std::time::Duration;

    let workload = Workload::from_toml_str(&format!(
        r#"
        [target]
        url = "{url}"
        [load]
        connections = 8
        requests = 20000
        [keys]
        prefix = "user:"
        range = [0, 9999]
        "#
    ))?; // or Workload::from_file("spec.toml"), from_json_str, from_json_value
    let report = run(&workload)?; // blocks until done
    println!(
        "{:.0} ops/s, p99 {} ms",
        report.totals.ops_per_sec, report.totals.latency_ms.p99
    );

    // In the background: a snapshot per second, stopped early.
    let long = Workload::from_toml_str(&format!(
        r#"
        target = {{ url = "{url}" }}
        load = {{ duration = "1h" }}
        "#
    ))?;
    let runner = Runner::start(long)?;
    let mut seen = 0;
    while let Some(s) = runner.next_snapshot(Duration::from_secs(5)) {
        println!(
            "{} ops/s, p99 {} ms",
            s.row.ops_per_sec, s.row.latency_ms.p99
        );
        seen += 1;
        if seen == 2 {
            break;
        }
    }
    let partial = runner.stop()?; // the partial report: interrupted = true
                                  // --8<-- [end:rust]

    assert_eq!(report.totals.ops, 20_000);
    assert_eq!(report.totals.errors, 0);
    assert_eq!(seen, 2, "two interval snapshots before stopping");
    assert!(partial.interrupted, "stopped early");
    assert!(partial.totals.ops > 0 && partial.duration_s < 60.0);
    Ok(())
}
