//! memtier_benchmark's JSON file (`--json-out-file`), keys in memtier's order (its
//! json_handler writes them as it goes).

use super::report::*;
use super::text::{distribution, per_sec};
use crate::report::{decode_histogram, percentile, Report, TimelineRow};
use hdrhistogram::serialization::{Serializer as _, V2DeflateSerializer};
use hdrhistogram::Histogram;
use serde_json::Value as Json;

/// A JSON value whose objects keep their keys in the order written.
pub(super) enum OrderedJson {
    Obj(Vec<(String, OrderedJson)>),
    Arr(Vec<OrderedJson>),
    Raw(String),
    Str(String),
    Null,
}

pub(super) fn num(x: f64, decimals: usize) -> OrderedJson {
    OrderedJson::Raw(if x.is_finite() {
        format!("{x:.decimals$}")
    } else {
        "0".into()
    })
}

pub(super) fn int(n: u64) -> OrderedJson {
    OrderedJson::Raw(n.to_string())
}

fn from_json(v: &Json) -> OrderedJson {
    match v {
        Json::Null => OrderedJson::Null,
        Json::String(s) => OrderedJson::Str(s.clone()),
        Json::Number(n) => match n.as_f64() {
            Some(x) if !x.is_finite() => OrderedJson::Raw("0".into()),
            _ => OrderedJson::Raw(n.to_string()),
        },
        Json::Bool(b) => OrderedJson::Raw(b.to_string()),
        Json::Array(a) => OrderedJson::Arr(a.iter().map(from_json).collect()),
        Json::Object(o) => {
            OrderedJson::Obj(o.iter().map(|(k, v)| (k.clone(), from_json(v))).collect())
        }
    }
}

pub(super) fn write_json(out: &mut String, j: &OrderedJson, depth: usize) {
    let tabs = |n: usize| "\t".repeat(n);
    match j {
        OrderedJson::Null => out.push_str("null"),
        OrderedJson::Raw(r) => out.push_str(r),
        OrderedJson::Str(s) => {
            out.push_str(&serde_json::to_string(s).unwrap_or_else(|_| "\"\"".into()))
        }
        OrderedJson::Arr(items) => {
            if items.is_empty() {
                out.push_str("[]");
                return;
            }
            out.push_str("[\n");
            for (i, item) in items.iter().enumerate() {
                out.push_str(&tabs(depth + 1));
                write_json(out, item, depth + 1);
                out.push_str(if i + 1 < items.len() { ",\n" } else { "\n" });
            }
            out.push_str(&tabs(depth));
            out.push(']');
        }
        OrderedJson::Obj(fields) => {
            if fields.is_empty() {
                out.push_str("{}");
                return;
            }
            out.push_str("{\n");
            for (i, (k, v)) in fields.iter().enumerate() {
                out.push_str(&tabs(depth + 1));
                out.push_str(&serde_json::to_string(k).unwrap_or_else(|_| "\"\"".into()));
                out.push_str(": ");
                write_json(out, v, depth + 1);
                out.push_str(if i + 1 < fields.len() { ",\n" } else { "\n" });
            }
            out.push_str(&tabs(depth));
            out.push('}');
        }
    }
}

/// memtier's percentile keys: `p%.3f` (or `p%.2f` per second) cut to 6 characters, as its
/// 7-byte buffer cuts them (`p50.00`, `p99.90`).
pub(super) fn pct_key(p: f64, decimals: usize) -> String {
    format!("p{p:.decimals$}").chars().take(6).collect()
}

/// A microsecond histogram like memtier's (10 us to 60 s, 3 significant digits).
pub(super) fn to_micros(h: &Histogram<u64>) -> Histogram<u64> {
    let mut us = Histogram::<u64>::new_with_bounds(10, 60_000_000, 3)
        .expect("constant histogram bounds are valid");
    for v in h.iter_recorded() {
        let ns = h.median_equivalent(v.value_iterated_to());
        us.saturating_record_n(ns / 1000, v.count_at_value());
    }
    us
}

pub(super) fn encode(h: &Histogram<u64>) -> String {
    use base64::Engine as _;
    let mut bytes = Vec::new();
    match V2DeflateSerializer::new().serialize(h, &mut bytes) {
        Ok(_) => base64::engine::general_purpose::STANDARD.encode(&bytes),
        Err(_) => String::new(),
    }
}

fn per_second(timeline: &[TimelineRow], percentiles: &[f64]) -> OrderedJson {
    let mut fields = Vec::new();
    for (i, row) in timeline.iter().enumerate() {
        let mut sec = vec![("Count".to_string(), int(row.ops))];
        if row.ops > 0 {
            let h = decode_histogram(&row.histogram);
            let l = &row.latency_ms;
            let count = h.as_ref().map_or(0, |h| h.len());
            sec.push(("Average Latency".into(), num(l.mean, 3)));
            sec.push((
                "Accumulated Latency".into(),
                int((l.mean * count as f64).round() as u64),
            ));
            let min = h.as_ref().map_or(0.0, |h| h.min() as f64 / NS_PER_MS);
            sec.push(("Min Latency".into(), num(min, 3)));
            sec.push(("Max Latency".into(), num(l.max, 3)));
            for p in percentiles {
                let key = pct_key(*p, 2);
                if sec.iter().any(|(k, _)| *k == key) {
                    continue;
                }
                let v = h.as_ref().map_or(0.0, |h| {
                    (percentile(h, p / 100.0) as f64 / NS_PER_MS).min(l.max)
                });
                sec.push((key, num(v, 3)));
            }
        }
        fields.push((i.to_string(), OrderedJson::Obj(sec)));
    }
    OrderedJson::Obj(fields)
}

fn type_json(
    c: &Cell,
    kind: Kind,
    secs: f64,
    timeline: Option<&[TimelineRow]>,
    connection_errors: u64,
    percentiles: &[f64],
) -> OrderedJson {
    let wait = kind == Kind::Wait;
    let hits = if matches!(kind, Kind::Set | Kind::Wait) {
        0.0
    } else {
        per_sec(c.hits, secs)
    };
    let misses = if matches!(kind, Kind::Set | Kind::Wait) {
        0.0
    } else {
        per_sec(c.misses, secs)
    };
    let kb = |bytes: u64| {
        if wait {
            0.0
        } else {
            per_sec(bytes, secs) / 1024.0
        }
    };
    let mut f = vec![
        ("Count".to_string(), int(c.ops)),
        ("Ops/sec".into(), num(per_sec(c.ops, secs), 2)),
        ("Hits/sec".into(), num(hits, 2)),
        ("Misses/sec".into(), num(misses, 2)),
        (
            "Connection Errors/sec".into(),
            num(per_sec(connection_errors, secs), 2),
        ),
        ("Connection Errors".into(), int(connection_errors)),
        ("Latency".into(), num(c.mean_ms(), 3)),
        ("Average Latency".into(), num(c.mean_ms(), 3)),
        (
            "Accumulated Latency".into(),
            int(c.latency_sum_ms.max(0.0).round() as u64),
        ),
        ("Min Latency".into(), num(c.min_ms, 3)),
        ("Max Latency".into(), num(c.max_ms, 3)),
        ("KB/sec".into(), num(kb(c.sent + c.received), 2)),
        ("KB/sec RX/TX".into(), num(kb(c.sent + c.received), 2)),
        ("KB/sec RX".into(), num(kb(c.received), 2)),
        ("KB/sec TX".into(), num(kb(c.sent), 2)),
        (
            "Time-Serie".into(),
            timeline.map_or(OrderedJson::Obj(Vec::new()), |t| per_second(t, percentiles)),
        ),
    ];
    let mut pcts = Vec::new();
    for p in percentiles {
        let key = pct_key(*p, 3);
        if pcts.iter().any(|(k, _)| *k == key) {
            continue;
        }
        pcts.push((key, num(c.pct_ms(*p), 3)));
    }
    pcts.push((
        "Histogram log format".into(),
        OrderedJson::Obj(vec![(
            "Compressed Histogram".into(),
            OrderedJson::Str(encode(&to_micros(&c.hist))),
        )]),
    ));
    f.push(("Percentile Latencies".into(), OrderedJson::Obj(pcts)));
    OrderedJson::Obj(f)
}

fn view_json(v: &View, options: &Options) -> OrderedJson {
    let finish = v.start_ms + v.secs * 1000.0;
    let mut fields = vec![(
        "Runtime".to_string(),
        OrderedJson::Obj(vec![
            ("Start time".into(), int(v.start_ms.max(0.0) as u64)),
            ("Finish time".into(), int(finish.max(0.0) as u64)),
            (
                "Total duration".into(),
                int((finish - v.start_ms).max(0.0) as u64),
            ),
            ("Time unit".into(), OrderedJson::Str("MILLISECONDS".into())),
            (
                "Interrupted".into(),
                OrderedJson::Str(if v.interrupted { "true" } else { "false" }.into()),
            ),
        ]),
    )];
    // Per-second figures exist for all commands together only: a row gets them when it is
    // the only one with traffic.
    let busy = v.rows.iter().filter(|r| r.cell.ops > 0).count();
    let timeline = (!v.timeline.is_empty()).then_some(v.timeline.as_slice());
    for r in &v.rows {
        let t = if busy == 1 && r.cell.ops > 0 {
            timeline
        } else {
            None
        };
        fields.push((
            r.name.clone(),
            type_json(&r.cell, r.kind, v.secs, t, 0, &options.percentiles),
        ));
    }
    fields.push((
        "Totals".into(),
        type_json(
            &v.totals,
            Kind::Full,
            v.secs,
            timeline,
            v.connection_errors,
            &options.percentiles,
        ),
    ));
    if !options.hide_histogram {
        for r in &v.rows {
            let steps = distribution(&r.cell.hist)
                .into_iter()
                .map(|(ms, pct)| {
                    OrderedJson::Obj(vec![
                        ("<=msec".into(), num(ms, 3)),
                        ("percent".into(), num(pct, 3)),
                    ])
                })
                .collect();
            fields.push((r.command.clone(), OrderedJson::Arr(steps)));
        }
    }
    OrderedJson::Obj(fields)
}

/// The report in memtier's JSON layout (`--json-out-file`): `configuration`,
/// `run information` and one object per table (`ALL STATS`, or `BEST RUN RESULTS` ...).
/// Numbers are always finite.
pub fn json(report: &Report, options: &Options) -> String {
    json_verified(Some(report), options, None)
}

/// memtier's JSON file with its `client verifications results` (`--data-verify`) after the
/// run's tables; with `--verify-only` (no `report`), the configuration and the verification.
pub fn json_verified(
    report: Option<&Report>,
    options: &Options,
    verification: Option<&Verification>,
) -> String {
    let mut top = vec![(
        "configuration".to_string(),
        OrderedJson::Obj(
            options
                .config
                .iter()
                .map(|(k, v)| (k.clone(), from_json(v)))
                .collect(),
        ),
    )];
    if let Some(report) = report {
        let mut info = vec![
            ("Threads".to_string(), int(options.threads as u64)),
            ("Connections per thread".into(), int(options.clients as u64)),
        ];
        match options.requests_per_client {
            Some(n) => info.push(("Requests per client".into(), int(n))),
            None => info.push(("Seconds".into(), int(options.test_time.unwrap_or(0) as u64))),
        }
        info.push(("Format version".into(), int(2)));
        top.push(("run information".into(), OrderedJson::Obj(info)));
        for v in views(report, options) {
            top.push((v.title.clone(), view_json(&v, options)));
        }
    }
    if let Some(v) = verification {
        // memtier's keys, its spelling kept.
        top.push((
            "client verifications results".into(),
            OrderedJson::Obj(vec![
                ("keys verified successfuly".into(), int(v.verified)),
                ("keys failed".into(), int(v.failed)),
            ]),
        ));
    }
    let mut out = String::new();
    write_json(&mut out, &OrderedJson::Obj(top), 0);
    out.push('\n');
    out
}
