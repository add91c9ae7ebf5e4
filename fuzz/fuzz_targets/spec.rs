//! The spec loaders on any text, as TOML and as JSON, and a target URL of any text: a
//! workload or an error, never a panic; a workload's normalized form reads back as itself.
#![no_main]

use libfuzzer_sys::fuzz_target;
use respload::Workload;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    for parsed in [Workload::from_toml_str(text), Workload::from_json_str(text)] {
        if let Ok(w) = parsed {
            let again = Workload::from_json_value(w.to_json_value())
                .expect("a workload's normalized spec reads back");
            assert_eq!(again.to_json_value(), w.to_json_value());
        }
    }
    let url = serde_json::json!({ "target": { "url": text } });
    let _ = Workload::from_json_value(url);
});
