//! memtier_benchmark's per-client statistics files (`--client-stats=PREFIX`, a phase's
//! `output.client_stats`): one CSV per connection, `PREFIX-RUN-THREAD-CLIENT.csv`, with a
//! row per second in which it finished requests, as memtier's `run_stats::save_csv` writes
//! its per-second part.

use crate::plan::Phase;
use crate::report::{ClientCounts, PhaseReport};
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// The files of one phase's connections: (path, contents), for each connection that
/// finished requests (memtier skips the clients that never started). `run` is the phase's
/// number from 1.
pub fn client_stats_files(
    phase: &Phase,
    report: &PhaseReport,
    prefix: &str,
    run: usize,
) -> Vec<(String, String)> {
    let labels: Vec<&str> = phase.commands.iter().map(|c| c.label.as_str()).collect();
    // Per connection, per second, per command: rows of one second added up.
    let mut clients: BTreeMap<(u32, u32), BTreeMap<u64, Vec<ClientCounts>>> = BTreeMap::new();
    for row in &report.client_seconds {
        let seconds = clients.entry((row.thread, row.client)).or_default();
        let cells = seconds
            .entry(row.second)
            .or_insert_with(|| vec![ClientCounts::default(); labels.len()]);
        if let Some(cell) = cells.get_mut(row.command as usize) {
            cell.add(&row.counts);
        }
    }
    let set_get = labels
        .iter()
        .all(|l| matches!(*l, "SET" | "GET" | "MGET" | "WAIT"));
    clients
        .into_iter()
        .map(|((thread, client), seconds)| {
            let path = format!("{prefix}-{run}-{thread}-{client}.csv");
            let body = match set_get {
                true => set_get_csv(&labels, &seconds),
                false => commands_csv(&labels, &seconds),
            };
            (path, body)
        })
        .collect()
}

/// memtier's average latency: whole microseconds, printed as seconds with 6 decimals.
fn average(c: &ClientCounts) -> String {
    let us = match c.ops {
        0 => 0,
        n => c.latency_ns / n / 1000,
    };
    format!("{}.{:06}", us / 1_000_000, us % 1_000_000)
}

/// The SET/GET workload's file: SET, GET and WAIT columns.
fn set_get_csv(labels: &[&str], seconds: &BTreeMap<u64, Vec<ClientCounts>>) -> String {
    let mut out = String::from("Per-Second Benchmark Data\n");
    out.push_str(
        "Second,SET Requests,SET Average Latency,SET Total Bytes,SET Total Bytes TX,\
         SET Total Bytes RX,GET Requests,GET Average Latency,GET Total Bytes,GET Total Bytes TX,\
         GET Total Bytes RX,GET Misses,GET Hits,WAIT Requests,WAIT Average Latency\n",
    );
    for (second, cells) in seconds {
        let of = |names: &[&str]| {
            let mut c = ClientCounts::default();
            for (label, cell) in labels.iter().zip(cells) {
                if names.contains(label) {
                    c.add(cell);
                }
            }
            c
        };
        let (set, get, wait) = (of(&["SET"]), of(&["GET", "MGET"]), of(&["WAIT"]));
        let _ = writeln!(
            out,
            "{second},{},{},{},{},{},{},{},{},{},{},{},{},{},{}",
            set.ops,
            average(&set),
            set.bytes_sent + set.bytes_received,
            set.bytes_sent,
            set.bytes_received,
            get.ops,
            average(&get),
            get.bytes_sent + get.bytes_received,
            get.bytes_sent,
            get.bytes_received,
            get.misses,
            get.hits,
            wait.ops,
            average(&wait),
        );
    }
    out
}

/// A `--command` workload's file: five columns per command, in the commands' order (each
/// row ends with a comma, as memtier writes it).
fn commands_csv(labels: &[&str], seconds: &BTreeMap<u64, Vec<ClientCounts>>) -> String {
    let mut out = String::from("Per-Second Benchmark Arbitrary Commands Data\nSecond");
    for l in labels {
        let _ = write!(
            out,
            ",{l} Requests,{l} Average Latency,{l} Total Bytes,{l} Total Bytes TX,{l} Total Bytes RX"
        );
    }
    out.push('\n');
    for (second, cells) in seconds {
        let _ = write!(out, "{second},");
        for c in cells {
            let _ = write!(
                out,
                "{},{},{},{},{},",
                c.ops,
                average(c),
                c.bytes_sent + c.bytes_received,
                c.bytes_sent,
                c.bytes_received
            );
        }
        out.push('\n');
    }
    out
}
