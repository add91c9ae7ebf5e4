//! `respload capture URL --out FILE`: MONITOR into a trace file, the summary printed; and
//! `respload model FILE`: a spec fitted to a trace.

use super::args::{CaptureArgs, ModelArgs};
use super::{output_error, Console, Interrupt};
use crate::capture::{capture, CaptureControl, CaptureReport, CaptureSpec};
use serde_json::json;
use std::sync::Arc;
use std::time::Duration;

/// Capture on a thread of its own, this one passing a Ctrl-C on as the capture's stop.
pub(super) fn run(
    args: CaptureArgs,
    console: &mut Console<'_>,
    interrupt: &Interrupt,
) -> crate::Result<u8> {
    let mut spec = json!({ "target": { "url": args.url }, "out": args.out });
    if args.cluster {
        spec["target"]["cluster"] = json!(true);
    }
    if let Some(d) = &args.duration {
        spec["duration"] = json!(d);
    }
    if let Some(n) = args.max_commands {
        spec["max_commands"] = json!(n);
    }
    let spec = CaptureSpec::from_json_value(spec)?;
    if let Some(path) = &args.json {
        crate::output::paths::distinct(&[("--out", &spec.out), ("--json", path)])?;
    }
    let control = Arc::new(CaptureControl::default());
    let flag = Arc::clone(&control);
    let worker = std::thread::Builder::new()
        .name("respload-capture".into())
        .spawn(move || capture(&spec, &flag))
        .map_err(|e| crate::Error::Internal(format!("cannot start the capture: {e}")))?;
    let mut told = false;
    while !worker.is_finished() {
        if interrupt.is_interrupted() {
            control.stop();
        }
        // Said once MONITOR is on, so a script driving traffic knows when to begin.
        if !told && !args.quiet && control.is_started() {
            told = true;
            let _ = writeln!(console.stderr, "capturing: MONITOR is on (Ctrl-C to stop)");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    let report = worker
        .join()
        .map_err(|_| crate::Error::Internal("the capture thread failed".into()))??;
    write!(console.stdout, "{}", summary(&report)).map_err(output_error)?;
    if let Some(path) = &args.json {
        let text = serde_json::to_string_pretty(&report).unwrap_or_default();
        std::fs::write(path, text + "\n").map_err(|e| crate::Error::File {
            path: path.clone(),
            source: e,
        })?;
    }
    Ok(0)
}

/// The capture's summary as text.
pub(crate) fn summary(r: &CaptureReport) -> String {
    let mut out = format!(
        "Captured {} commands in {:.2} s into {}{}\n",
        r.commands,
        r.duration_s,
        r.out,
        if r.interrupted { " (interrupted)" } else { "" }
    );
    if r.redacted > 0 {
        out += &format!("Redacted {} secret arguments\n", r.redacted);
    }
    if r.malformed > 0 {
        out += &format!("Skipped {} unreadable MONITOR lines\n", r.malformed);
    }
    let pct = |v: Option<f64>| v.map_or("n/a".to_string(), |v| format!("{v:.1}%"));
    for n in &r.nodes {
        out += &format!(
            "{}: {} commands; server CPU {} before, {} during the capture (MONITOR's cost \
             included)\n",
            n.address,
            n.commands,
            pct(n.cpu_before_percent),
            pct(n.cpu_during_percent)
        );
    }
    out
}

/// `respload model FILE`: the fit's summary on stdout, the spec into `--out` (or after it).
pub(super) fn model(args: ModelArgs, console: &mut Console<'_>) -> crate::Result<u8> {
    for (flag, x) in [("--rate-x", args.rate_x), ("--keys-x", args.keys_x)] {
        if !(x.is_finite() && x > 0.0) {
            return Err(crate::Error::spec(
                flag,
                format!("{x}: allowed is a number above 0, e.g. 10"),
            ));
        }
    }
    let opts = crate::trace::model::ModelOptions {
        rate_x: args.rate_x,
        keys_x: args.keys_x,
        target_url: args.url.clone(),
        ..Default::default()
    };
    let model = crate::trace::fit_file(&args.file, args.format.as_deref(), &opts)?;
    let toml = model.to_toml();
    // The spec must load as it is written: a model that cannot run is an error here.
    crate::Workload::from_toml_str(&toml)?;
    write!(console.stdout, "{}", model.summary()).map_err(output_error)?;
    let write = |path: &str, text: String| {
        std::fs::write(path, text).map_err(|e| crate::Error::File {
            path: path.to_string(),
            source: e,
        })
    };
    match &args.out {
        Some(path) => write(path, toml)?,
        None => write!(console.stdout, "\n{toml}").map_err(output_error)?,
    }
    if let Some(path) = &args.json {
        write(
            path,
            serde_json::to_string_pretty(&model).unwrap_or_default() + "\n",
        )?;
    }
    Ok(0)
}
