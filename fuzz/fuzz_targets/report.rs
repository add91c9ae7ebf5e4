//! Report loading and merging on any text: a report or an error, never a panic; a report
//! merges with itself, and its JSON reads back as itself.
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
    let _ = Report::from_json_str(&report.to_json()).expect("a report's JSON reads back");
    let _ = Report::merge(&[report.clone(), report]);
});
