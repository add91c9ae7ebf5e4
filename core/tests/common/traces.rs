//! Trace helpers of the traffic tests: a trace written from `(client, offset, args)` rows,
//! and what the server ran by its own count.

use respload::trace::{jsonl, Record};
use respload_testing::Server;
use std::collections::BTreeMap;

/// Write `recs` (client, offset in ms, args) as a respload trace from an instant of 2023.
pub fn write_trace<C: AsRef<str>, A: AsRef<str>>(path: &str, recs: &[(C, u64, Vec<A>)]) {
    let mut w = jsonl::Writer::create(path).unwrap();
    let mut rec = Record::default();
    for (client, ms, args) in recs {
        rec.clear();
        rec.client = client.as_ref().to_string();
        rec.t_us = 1_700_000_000_000_000 + ms * 1000;
        for a in args {
            rec.push_bytes(a.as_ref().as_bytes());
        }
        w.write(&rec).unwrap();
    }
    w.finish().unwrap();
}

/// `calls` of each command in `INFO commandstats` (subcommands as `CONFIG|SET`).
pub fn commandstats(server: &Server) -> BTreeMap<String, u64> {
    let info = server.cli(&["INFO", "commandstats"]);
    info.lines()
        .filter_map(|l| {
            let (cmd, rest) = l.strip_prefix("cmdstat_")?.split_once(':')?;
            let calls = rest.split(',').find_map(|f| f.strip_prefix("calls="))?;
            Some((cmd.to_uppercase(), calls.parse().ok()?))
        })
        .collect()
}
