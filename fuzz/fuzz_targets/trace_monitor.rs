//! The trace reader on any bytes as MONITOR logs (see common/trace.rs).
#![no_main]

#[path = "../common/trace.rs"]
mod trace;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| trace::check(data, respload::trace::Format::Monitor));
