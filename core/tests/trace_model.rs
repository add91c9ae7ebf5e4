//! Fitting a spec to a trace (`respload::trace::model`), on synthetic traces made here: the
//! Zipf exponent and the mix recovered, sizes and TTLs, the scales, and specs that load.
//! No server: the end-to-end run is elsewhere.

use respload::spec::{Distribution, ValueSize};
use respload::trace::model::{Model, ModelBuilder, ModelOptions};
use respload::trace::Record;
use respload::Workload;
use std::collections::HashMap;

/// xorshift64*: deterministic and good enough for drawing keys.
struct XorShift(u64);

impl XorShift {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    /// Uniform in [0, 1).
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// Ranks 0..n drawn with weight (rank + 1)^-s, by inverse CDF.
struct ZipfDraw(Vec<f64>);

impl ZipfDraw {
    fn new(n: usize, s: f64) -> Self {
        let mut cdf = Vec::with_capacity(n);
        let mut acc = 0.0;
        for r in 1..=n {
            acc += (r as f64).powf(-s);
            cdf.push(acc);
        }
        for c in &mut cdf {
            *c /= acc;
        }
        ZipfDraw(cdf)
    }
    fn draw(&self, rng: &mut XorShift) -> usize {
        let u = rng.unit();
        self.0.partition_point(|&c| c < u).min(self.0.len() - 1)
    }
}

struct Trace {
    builder: ModelBuilder,
    counts: HashMap<&'static str, u64>,
    records: u64,
}

/// 200,000 commands over 100 s, GET:SET 9:1 on Zipf(0.99) keys over 10,000 keys; SET values
/// of 100 bytes (70%) or 1000 bytes (30%), each with `EX 60`.
fn synthetic() -> Trace {
    let mut rng = XorShift(0x9e37_79b9_7f4a_7c15);
    let zipf = ZipfDraw::new(10_000, 0.99);
    let mut builder = ModelBuilder::new();
    let mut counts = HashMap::new();
    let mut rec = Record::default();
    let value_small = vec![b'v'; 100];
    let value_large = vec![b'v'; 1000];
    for i in 0..200_000u64 {
        rec.clear();
        rec.t_us = 1_700_000_000_000_000 + i * 500;
        rec.client = "10.0.0.1:5000".into();
        let key = format!("user:{}", zipf.draw(&mut rng));
        let write = rng.next() % 10 == 0;
        if write {
            rec.push_bytes(b"set");
            rec.push_bytes(key.as_bytes());
            rec.push_bytes(if rng.next() % 10 < 7 {
                &value_small
            } else {
                &value_large
            });
            rec.push_bytes(b"EX");
            rec.push_bytes(b"60");
            *counts.entry("SET").or_default() += 1;
        } else {
            rec.push_bytes(b"GET");
            rec.push_bytes(key.as_bytes());
            *counts.entry("GET").or_default() += 1;
        }
        builder.observe(&rec);
    }
    Trace {
        builder,
        counts,
        records: 200_000,
    }
}

fn loads(model: &Model) -> Workload {
    let w = Workload::from_json_str(&model.spec.to_string())
        .unwrap_or_else(|e| panic!("{e}\n{}", model.spec));
    Workload::from_toml_str(&model.to_toml())
        .unwrap_or_else(|e| panic!("{e}\n{}", model.to_toml()));
    w
}

#[test]
fn a_zipf_trace_gives_its_exponent_mix_sizes_and_ttls() {
    let trace = synthetic();
    let model = trace.builder.fit(&ModelOptions::default());
    // Shown when the test fails.
    eprintln!("{}", model.to_toml());
    let fit = &model.fit;
    assert_eq!(fit.commands, trace.records);
    let s = fit.zipf_exponent.expect("an exponent");
    assert!((s - 0.99).abs() < 0.05, "exponent {s}");
    assert_eq!(fit.popularity, "zipf");
    assert!(fit.popularity_error < 0.02, "{}", fit.popularity_error);
    assert!(fit.distinct_keys > 9_000 && fit.distinct_keys <= 10_000);

    assert_eq!(fit.mix.len(), 2);
    for m in &fit.mix {
        let want = trace.counts[m.name.as_str()] as f64 / trace.records as f64;
        assert!((m.trace_share - want).abs() < 1e-12, "{}", m.name);
        assert!(
            (m.model_share - m.trace_share).abs() < 0.01,
            "{}: trace {} model {}",
            m.name,
            m.trace_share,
            m.model_share
        );
    }
    assert_eq!(fit.mix[0].modelled_as, "get");

    // Sizes and TTLs.
    assert_eq!(fit.sizes.len(), 2, "{:?}", fit.sizes);
    assert_eq!((fit.sizes[0].0, fit.sizes[1].0), (100, 1000));
    assert!((fit.sizes[0].1 - 0.7).abs() < 0.02, "{:?}", fit.sizes);
    assert_eq!(fit.ttls, vec![(60, 1.0)]);

    // Rate: 2,000 ops/s, steady.
    assert!(
        (fit.duration_s - 99.9995).abs() < 1e-6,
        "{}",
        fit.duration_s
    );
    assert!((fit.mean_rate - 2000.0).abs() < 1.0, "{}", fit.mean_rate);
    assert_eq!(fit.rate_profile.len(), 100);
    assert!(fit.notes.is_empty(), "{:?}", fit.notes);

    // The spec, as the engine reads it.
    let w = loads(&model);
    let spec = &w.phases[0].spec;
    assert_eq!(spec.keys.prefix, "user:");
    assert_eq!(spec.keys.range, [0, fit.distinct_keys - 1]);
    match &spec.keys.distribution {
        Distribution::Zipf { exponent } => assert!((exponent - s).abs() < 1e-4, "{exponent}"),
        other => panic!("{other:?}"),
    }
    let rate = spec.load.rate.unwrap();
    assert!((rate - fit.mean_rate).abs() < 1e-3, "{rate}");
    assert!(spec.load.rate_ramp.is_none());
    assert_eq!(spec.values.expiry, Some([60, 60]));
    match &spec.values.size {
        ValueSize::List(list) => {
            assert_eq!(list.len(), 2);
            assert_eq!((list[0][0], list[1][0]), (100, 1000));
            let share = list[0][1] as f64 / (list[0][1] + list[1][1]) as f64;
            assert!((share - fit.sizes[0].1).abs() < 1e-5);
        }
        other => panic!("{other:?}"),
    }
    let names: Vec<_> = spec
        .commands
        .iter()
        .map(|c| c.name.as_deref().unwrap_or(""))
        .collect();
    assert_eq!(names, ["get", "set"]);

    let text = model.to_toml();
    assert!(text.starts_with("# respload model of a trace: 200000 commands"));
    let summary = model.summary();
    for want in [
        "GET",
        "SET",
        "zipf exponent",
        "sizes: 100 B",
        "ttls: 60 s",
        "rate: mean",
    ] {
        assert!(summary.contains(want), "{want} not in\n{summary}");
    }
}

#[test]
fn rate_x_and_keys_x_scale_the_rate_and_the_key_range() {
    let trace = synthetic();
    let base = trace.builder.fit(&ModelOptions::default());
    let scaled = trace.builder.fit(&ModelOptions {
        rate_x: 2.5,
        keys_x: 3.0,
        target_url: Some("redis://10.1.2.3:6380/2".into()),
        top_keys: 1000,
    });
    let rate = |m: &Model| m.spec["load"]["rate"].as_f64().unwrap();
    assert!((rate(&scaled) - 2.5 * rate(&base)).abs() < 1e-2);
    let n = base.fit.distinct_keys;
    assert_eq!(base.spec["keys"]["range"], serde_json::json!([0, n - 1]));
    assert_eq!(
        scaled.spec["keys"]["range"],
        serde_json::json!([0, 3 * n - 1])
    );
    // The fit describes the trace, whatever the scales.
    assert_eq!(scaled.fit.zipf_exponent, base.fit.zipf_exponent);
    assert_eq!(scaled.fit.mean_rate, base.fit.mean_rate);
    let w = loads(&scaled);
    assert_eq!(
        w.phases[0].spec.target.url.as_deref(),
        Some("redis://10.1.2.3:6380/2")
    );
    assert_eq!(w.phases[0].spec.keys.count(), 3 * n);
}

#[test]
fn sizes_only_traces_and_set_options_become_templates() {
    // Twitter-trace style: sizes without bytes, SET ... NX EX ttl, and a few other commands.
    let mut rng = XorShift(7);
    let mut b = ModelBuilder::new();
    let mut rec = Record::default();
    for i in 0..20_000u64 {
        rec.clear();
        rec.t_us = i * 5_000; // 200 ops/s
        let key = format!("obj/{}", rng.next() % 500);
        match i % 4 {
            0 | 1 => {
                rec.push_bytes(b"SET");
                rec.push_bytes(key.as_bytes());
                rec.push_size(if i % 8 < 2 { 40 } else { 5_000 });
                rec.push_bytes(b"NX");
                rec.push_bytes(b"EX");
                rec.push_bytes(if i % 3 == 0 { b"30" } else { b"300" });
            }
            2 => {
                rec.push_bytes(b"GET");
                rec.push_bytes(key.as_bytes());
            }
            _ => {
                rec.push_bytes(b"SETEX");
                rec.push_bytes(key.as_bytes());
                rec.push_bytes(b"120");
                rec.push_size(10);
            }
        }
        b.observe(&rec);
    }
    let model = b.fit(&ModelOptions::default());
    let w = loads(&model);
    let templates: Vec<String> = w.phases[0]
        .spec
        .commands
        .iter()
        .filter_map(|c| c.template.as_ref().map(|t| t.to_string()))
        .collect();
    assert!(
        templates.contains(&"SET {key} {value} NX EX {rand:30..300}".to_string()),
        "{templates:?}"
    );
    assert!(
        templates.contains(&"SETEX {key} {rand:120..120} {value}".to_string()),
        "{templates:?}"
    );
    // The built-in SET is not used, so no values.expiry.
    assert_eq!(w.phases[0].spec.values.expiry, None);
    assert_eq!(w.phases[0].spec.keys.prefix, "obj/");
    let sizes: Vec<u64> = model.fit.sizes.iter().map(|s| s.0).collect();
    assert_eq!(sizes, [10, 40, 5_000]);
    let ttls: Vec<u64> = model.fit.ttls.iter().map(|s| s.0).collect();
    assert_eq!(ttls, [30, 120, 300]);
    assert!((model.fit.mean_rate - 200.0).abs() < 0.1);
    // 500 keys drawn uniformly: uniform (or a flat zipf) is the closest.
    assert!(
        model.fit.popularity_error < 0.05,
        "{}",
        model.fit.popularity_error
    );
}
