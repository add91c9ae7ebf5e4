//! The redis-benchmark and memtier_benchmark command-line readers on any text: a workload
//! or an error, never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(line) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(rb) = respload::tools::redis_benchmark::parse_line(line) {
        let _ = rb.into_workload();
    }
    let _ = respload::tools::memtier::workload(line);
});
