//! Histograms as merging reads them: any bytes taken as a V2 encoding, compressed and in
//! base64 as a report carries it, never panic, and a histogram the `hdrhistogram` crate
//! reads merges to exactly the crate's sum (the merge reads it by its non-zero buckets,
//! `report/sparse.rs`); what respload reads, the crate's own reader reads the same.
#![no_main]

use base64::Engine as _;
use libfuzzer_sys::fuzz_target;
use respload::report::{decode_histogram, encode_histogram};
use respload::Report;
use std::io::Write as _;

/// A small real report (fuzz/corpus/report/small.json) to carry the histogram.
const BASE: &str = include_str!("../corpus/report/small.json");

fuzz_target!(|data: &[u8]| {
    let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::fast());
    z.write_all(data).unwrap();
    let zlib = z.finish().unwrap();
    let mut bytes = 0x1c84_9314u32.to_be_bytes().to_vec();
    bytes.extend_from_slice(&(zlib.len() as u32).to_be_bytes());
    bytes.extend_from_slice(&zlib);
    let text = base64::engine::general_purpose::STANDARD.encode(&bytes);
    let mut report = Report::from_json_str(BASE).expect("the base report reads");
    report.totals.histogram = text.clone();
    let merged = Report::merge(&[report.clone(), report]).expect("a report merges with itself");
    if let Some(h) = decode_histogram(&text) {
        // What respload reads, the crate's own reader reads the same.
        let crates: hdrhistogram::Histogram<u64> = hdrhistogram::serialization::Deserializer::new()
            .deserialize(&mut bytes.as_slice())
            .expect("the crate reads what respload reads");
        assert_eq!(crates, h);
        let mut twice = h.clone();
        if twice.add(&h).is_ok() {
            assert_eq!(merged.totals.histogram, encode_histogram(&twice));
        }
    }
});
