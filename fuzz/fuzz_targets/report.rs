//! Report loading and merging on any text: a report or an error, never a panic; its JSON reads
//! back as itself; merged with itself, or with the other shards of its workload when it is a
//! shard, it gives a report holding every part's requests and listing every part as a host.
#![no_main]

use libfuzzer_sys::fuzz_target;
use respload::Report;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(report) = Report::from_json_str(text) else {
        return;
    };
    let back = Report::from_json_str(&report.to_json()).expect("a report's JSON reads back");
    // A shard of a few hosts is merged with its siblings (the shard path), any other report
    // with itself.
    let parts: Vec<Report> = match &report.shard {
        Some(of) if (1..=4).contains(&of.count) => (0..of.count)
            .map(|i| {
                let mut r = report.clone();
                if let Some(s) = r.shard.as_mut() {
                    s.index = i;
                }
                r
            })
            .collect(),
        _ => vec![report, back],
    };
    let Ok(merged) = Report::merge(&parts) else {
        return;
    };
    assert_eq!(merged.hosts.len(), parts.len(), "a host per part");
    let ops = parts
        .iter()
        .try_fold(0u64, |sum, r| sum.checked_add(r.totals.ops));
    if let Some(ops) = ops {
        assert_eq!(merged.totals.ops, ops, "the parts' requests, summed");
    }
});
