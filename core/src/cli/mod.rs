//! The `respload` command line as a library function, so the binary and the language bindings
//! (`python -m respload`) run the same code.
//!
//! [`main`] takes the arguments, the streams to write to and an [`Interrupt`], and returns the
//! exit code. It installs no signal handler and never exits the process: the host decides
//! what Ctrl-C does and calls [`Interrupt::interrupt`] (the `respload` binary does so from its
//! Ctrl-C handler, and exits with 130 on a second press).

mod args;
mod capture;
mod redis_benchmark;

use crate::output::{progress_line, table, write_hdr_log, write_json};
use crate::tools::redis_benchmark::Tool;
use crate::{Runner, StopHandle, Workload};
use args::{Cli, Command, MemtierArgs, ReplayArgs, RunArgs, SchemaOf};
use clap::Parser;
use serde_json::json;
use std::ffi::OsString;
use std::io::Write;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Where the command line writes.
pub struct Console<'a> {
    /// Reports and tables (the process's stdout for the binary).
    pub stdout: &'a mut dyn Write,
    /// Live progress, warnings and errors (the process's stderr for the binary).
    pub stderr: &'a mut dyn Write,
    /// Whether stdout is a terminal: `--help` and usage errors are then coloured.
    pub stdout_is_terminal: bool,
    /// Whether stderr is a terminal: `respload redis-benchmark` then shows a live line.
    pub stderr_is_terminal: bool,
}

/// A Ctrl-C from the host, passed on to the command running: the run in progress stops at
/// once and its partial report is printed (and `redis-benchmark -l` ends). Clones share the
/// same state, so one can be moved into a signal handler and another given to [`main`].
#[derive(Clone, Default)]
pub struct Interrupt {
    inner: Arc<InterruptState>,
}

#[derive(Default)]
struct InterruptState {
    /// Presses and the run to stop, under one lock so a press never misses a run starting.
    current: Mutex<(u32, Option<StopHandle>)>,
}

impl Interrupt {
    /// A fresh interrupt, never pressed.
    pub fn new() -> Interrupt {
        Interrupt::default()
    }

    /// Stop the run in progress (or the next one to start), as a Ctrl-C does. Returns how many
    /// times it was pressed, this one included, so a host can give up on the second.
    pub fn interrupt(&self) -> u32 {
        let mut current = self.lock();
        current.0 += 1;
        if let Some(stop) = &current.1 {
            stop.stop();
        }
        current.0
    }

    /// Whether [`Interrupt::interrupt`] was called.
    pub fn is_interrupted(&self) -> bool {
        self.lock().0 > 0
    }

    /// Route presses to this run; stop it at once if one already came.
    fn watch(&self, runner: &Runner) {
        let mut current = self.lock();
        let stop = runner.stop_handle();
        if current.0 > 0 {
            stop.stop();
        }
        current.1 = Some(stop);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, (u32, Option<StopHandle>)> {
        self.inner.current.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Run the command line `args` (the first is the program name, as in `std::env::args_os`),
/// writing to `console`; returns the exit code: 0 on success (an interrupted run included,
/// its partial report printed), 1 when a `run --check` budget was not met, 2 on errors
/// (usage, spec, connection: the message on stderr; a later phase that failed too, after
/// the earlier phases' partial report), and clap's codes for `--help` / `--version` (0).
pub fn main<I, T>(args: I, console: &mut Console<'_>, interrupt: &Interrupt) -> u8
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(e) => {
            let (out, colour) = if e.use_stderr() {
                (&mut *console.stderr, console.stderr_is_terminal)
            } else {
                (&mut *console.stdout, console.stdout_is_terminal)
            };
            let text = e.render();
            let _ = if colour && std::env::var_os("NO_COLOR").is_none() {
                write!(out, "{}", text.ansi())
            } else {
                write!(out, "{text}")
            };
            let _ = out.flush();
            return u8::try_from(e.exit_code()).unwrap_or(2);
        }
    };
    let result = match cli.command {
        Command::Run(args) => run(*args, console, interrupt),
        Command::Replay(args) => replay(*args, console, interrupt),
        Command::Capture(args) => capture::run(args, console, interrupt),
        Command::Model(args) => capture::model(args, console),
        Command::RedisBenchmark(args) => {
            redis_benchmark::run(args, Tool::RedisBenchmark, console, interrupt)
        }
        Command::ValkeyBenchmark(args) => {
            redis_benchmark::run(args, Tool::ValkeyBenchmark, console, interrupt)
        }
        Command::Memtier(args) => memtier(args, console, interrupt),
        Command::Check { spec, vars } => Workload::from_file_with(&spec, &vars.params())
            .and_then(|w| {
                let text = serde_json::to_string_pretty(&w.redacted()).unwrap_or_default();
                writeln!(console.stdout, "{text}").map_err(output_error)
            })
            .map(|()| 0),
        Command::Merge { reports, json } => merge(&reports, json.as_deref(), console),
        Command::Report {
            reports,
            html,
            labels,
        } => show(&reports, html.as_deref(), &labels, console),
        Command::Schema { of } => {
            let schema = match of {
                SchemaOf::Spec => crate::spec::json_schema(),
                SchemaOf::Report => crate::report::json_schema(),
                SchemaOf::Bindings => crate::report::bindings_schema(),
            };
            let text = serde_json::to_string_pretty(&schema).unwrap_or_default();
            writeln!(console.stdout, "{text}")
                .map_err(output_error)
                .map(|()| 0)
        }
        Command::Compare {
            reports,
            fail_on,
            json,
            hgrm,
        } => compare(
            &reports,
            &fail_on,
            (json.as_deref(), hgrm.as_deref()),
            console,
        ),
    };
    let _ = console.stdout.flush();
    match result {
        Ok(code) => code,
        Err(e) => {
            let _ = writeln!(console.stderr, "respload: {e}");
            let _ = console.stderr.flush();
            2
        }
    }
}

/// Say on stderr why a printed report is partial (`what`: "the report above is partial");
/// the exit code: 2 when a later phase failed, 0 otherwise (an interrupted run is a result).
fn partial(report: &crate::Report, stderr: &mut dyn Write, what: &str) -> u8 {
    if let Some(error) = &report.error {
        let _ = writeln!(stderr, "respload: {error}; {what}");
        return 2;
    }
    if report.interrupted {
        let _ = writeln!(stderr, "respload: interrupted, {what}");
    }
    0
}

/// A failed write to the console (a closed pipe).
fn output_error(e: std::io::Error) -> crate::Error {
    crate::Error::File {
        path: "<stdout>".into(),
        source: e,
    }
}

fn run(args: RunArgs, console: &mut Console<'_>, interrupt: &Interrupt) -> crate::Result<u8> {
    let budget = args.report.budget()?;
    let base = match &args.spec {
        Some(path) => Workload::from_file_with(path, &args.vars.params())?,
        None if !args.vars.params().is_empty() => {
            return Err(crate::Error::spec(
                "",
                "--scale and --var need a spec file (they set its [vars])",
            ))
        }
        None => Workload::from_json_value(json!({}))?,
    };
    let (target, rest) = args.overrides.to_json();
    // Seeds and targets given on the command line apply everywhere.
    let mut workload = if target.is_some() || rest.is_some() {
        base.with_overrides(target, rest)?
    } else {
        base
    };
    if let Some((index, count)) = args.shard {
        workload = workload.shard(index, count)?;
    }
    if let Some(at) = args.start_at {
        workload = workload.starting_at(at)?;
    }
    if let Some(url) = &args.barrier {
        workload = workload.with_barrier(url, args.barrier_id.as_deref(), args.barrier_timeout)?;
    }
    if let Some(b) = &budget {
        workload.add_thresholds(b, "check")?;
    }
    let out = Outputs::of(&args.report);
    run_workload(workload, out, console, interrupt)
}

/// Where a run's report goes besides the table on stdout.
struct Outputs<'a> {
    json: Option<&'a str>,
    hdr_log: Option<&'a str>,
    html: Option<&'a str>,
    quiet: bool,
}

impl<'a> Outputs<'a> {
    fn of(flags: &'a args::ReportFlags) -> Self {
        Outputs {
            json: flags.json.as_deref(),
            hdr_log: flags.hdr_log.as_deref(),
            html: flags.html.as_deref(),
            quiet: flags.quiet,
        }
    }
}

/// Run `workload`, its progress on stderr (unless quiet), its report as a table on stdout
/// and into the files asked for; the exit code.
fn run_workload(
    mut workload: Workload,
    args: Outputs<'_>,
    console: &mut Console<'_>,
    interrupt: &Interrupt,
) -> crate::Result<u8> {
    if args.hdr_log.is_some() {
        // The log is written from the timeline's interval histograms.
        for p in &mut workload.phases {
            p.spec.output.interval_histograms = true;
        }
    }
    // The spec's own files (created by the runner) count against the command line's.
    let mut files: Vec<(String, &str)> = Vec::new();
    for p in &workload.phases {
        if let Some(path) = &p.spec.output.memtier {
            files.push((format!("{}output.memtier", p.prefix), path));
        }
    }
    let specs = files.len();
    files.extend(args.json.iter().map(|p| ("--json".to_string(), *p)));
    files.extend(args.hdr_log.iter().map(|p| ("--hdr-log".to_string(), *p)));
    files.extend(args.html.iter().map(|p| ("--html".to_string(), *p)));
    let named: Vec<(&str, &str)> = files.iter().map(|(o, p)| (o.as_str(), *p)).collect();
    crate::output::paths::distinct(&named)?;
    let _claimed = crate::output::paths::claim(&named[specs..])?;
    let dashboard = workload.dashboard().map(|(address, _)| address.to_string());
    let runner = Runner::start(workload)?;
    interrupt.watch(&runner);
    if let (Some(address), false) = (dashboard, args.quiet) {
        let _ = writeln!(
            console.stderr,
            "respload: live dashboard at http://{address}/ while the run lasts"
        );
    }
    while !runner.is_finished() {
        if let Some(s) = runner.next_snapshot(Duration::from_millis(200)) {
            if !args.quiet {
                let _ = writeln!(console.stderr, "{}", progress_line(&s));
            }
        }
    }
    let report = runner.wait()?;
    write!(console.stdout, "{}", table(&report)).map_err(output_error)?;
    if let Some(path) = args.json {
        write_json(&report, path)?;
    }
    if let Some(path) = args.hdr_log {
        write_hdr_log(&report, path)?;
    }
    if let Some(path) = args.html {
        crate::report::html::write_html(&report, path)?;
    }
    let code = partial(&report, console.stderr, "the report above is partial");
    Ok(thresholds_verdict(&report, code, console.stderr))
}

/// `respload replay FILE`: a spec of one replay phase made from the flags, run as `run` runs
/// one. `--rate` and `-c` are the replay's (its mean rate; connections to hash the
/// recorded clients onto).
fn replay(args: ReplayArgs, console: &mut Console<'_>, interrupt: &Interrupt) -> crate::Result<u8> {
    let budget = args.report.budget()?;
    let (target, rest) = args.overrides.to_json();
    let mut spec = json!({ "replay": args.replay_json() });
    if let Some(t) = target {
        crate::spec::merge(&mut spec, t);
    }
    if let Some(mut rest) = rest {
        if let Some(load) = rest.get_mut("load").and_then(|l| l.as_object_mut()) {
            for field in ["rate", "connections"] {
                if let Some(v) = load.remove(field) {
                    spec["replay"][field] = v;
                }
            }
        }
        crate::spec::merge(&mut spec, rest);
    }
    let mut workload = Workload::from_json_value(spec)?;
    if let Some(b) = &budget {
        workload.add_thresholds(b, "check")?;
    }
    let out = Outputs::of(&args.report);
    run_workload(workload, out, console, interrupt)
}

/// The exit code of a report with thresholds: 1 when one failed (named on stderr), else
/// `code`. A report that could not finish (2) says so already.
fn thresholds_verdict(report: &crate::Report, code: u8, stderr: &mut dyn Write) -> u8 {
    let judged = !report.thresholds.is_empty();
    if let Some(warning) = report.validity.warning().filter(|_| judged) {
        // Thresholds checked against figures the client distorted: said, not failed.
        let _ = writeln!(stderr, "{warning}");
    }
    match report.threshold_failures().filter(|_| judged) {
        Some(failed) if code == 0 => {
            let _ = writeln!(stderr, "respload: {failed}");
            1
        }
        _ => code,
    }
}

/// `respload merge`: the hosts' reports read, merged, printed as `run` prints one.
fn merge(paths: &[String], json: Option<&str>, console: &mut Console<'_>) -> crate::Result<u8> {
    let reports = crate::Report::from_files(paths)?;
    let merged = crate::Report::merge(&reports).map_err(|e| match e {
        // `reports[1]` means the second file given: name it.
        crate::Error::Spec { path, reason } => {
            let named = paths.iter().enumerate().fold(path, |p, (i, file)| {
                p.replace(&format!("reports[{i}]"), &format!("{file} (reports[{i}])"))
            });
            crate::Error::Spec {
                path: named,
                reason,
            }
        }
        other => other,
    })?;
    let _claimed = json
        .map(|path| crate::output::paths::claim(&[("--json", path)]))
        .transpose()?;
    write!(console.stdout, "{}", table(&merged)).map_err(output_error)?;
    if let Some(path) = json {
        write_json(&merged, path)?;
    }
    let code = partial(
        &merged,
        console.stderr,
        "the merged report above is partial",
    );
    // The hosts' thresholds, judged again on the merged figures.
    Ok(thresholds_verdict(&merged, code, console.stderr))
}

/// `respload report`: one report printed as `run` prints it, several compared as `compare`
/// prints them; `--html` writes them as one page.
fn show(
    paths: &[String],
    html: Option<&str>,
    labels: &[String],
    console: &mut Console<'_>,
) -> crate::Result<u8> {
    if labels.len() > paths.len() {
        return Err(crate::Error::spec(
            "--label",
            format!(
                "{} labels for {} reports: give at most one per report",
                labels.len(),
                paths.len()
            ),
        ));
    }
    let _claimed = html
        .map(|path| crate::output::paths::claim(&[("--html", path)]))
        .transpose()?;
    let reports = crate::Report::from_files(paths)?;
    // Each report named by its label, else its file's name.
    let names: Vec<String> = paths
        .iter()
        .enumerate()
        .map(|(i, p)| {
            labels.get(i).cloned().unwrap_or_else(|| {
                std::path::Path::new(p)
                    .file_name()
                    .map_or_else(|| p.clone(), |n| n.to_string_lossy().into_owned())
            })
        })
        .collect();
    let text = match reports.as_slice() {
        [one] => table(one),
        _ => crate::report::Comparison::of(&reports, &names, &[])?.text(),
    };
    write!(console.stdout, "{text}").map_err(output_error)?;
    if let Some(path) = html {
        let page = crate::report::html::reports_html(&reports, &names)?;
        std::fs::write(path, page).map_err(|source| crate::Error::File {
            path: path.to_string(),
            source,
        })?;
    }
    Ok(0)
}

/// `respload compare`: the reports read, compared, printed; exit status 1 when a limit was
/// crossed. `--json` writes the comparison, `--hgrm` each report's latency distribution.
fn compare(
    paths: &[String],
    fail_on: &[String],
    (json, hgrm): (Option<&str>, Option<&str>),
    console: &mut Console<'_>,
) -> crate::Result<u8> {
    let limits = fail_on
        .iter()
        .map(|l| crate::report::Limit::parse(l))
        .collect::<crate::Result<Vec<_>>>()
        .map_err(|e| match e {
            crate::Error::Spec { reason, .. } => crate::Error::spec("--fail-on", reason),
            other => other,
        })?;
    let _claimed = json
        .map(|path| crate::output::paths::claim(&[("--json", path)]))
        .transpose()?;
    let reports = paths
        .iter()
        .map(crate::Report::from_file)
        .collect::<crate::Result<Vec<_>>>()?;
    let comparison = crate::report::Comparison::of(&reports, paths, &limits)?;
    write!(console.stdout, "{}", comparison.text()).map_err(output_error)?;
    let write = |path: &str, text: String| {
        std::fs::write(path, text).map_err(|source| crate::Error::File {
            path: path.to_string(),
            source,
        })
    };
    if let Some(path) = json {
        write(
            path,
            serde_json::to_string_pretty(&comparison).unwrap_or_default(),
        )?;
    }
    if let Some(dir) = hgrm {
        std::fs::create_dir_all(dir).map_err(|source| crate::Error::File {
            path: dir.to_string(),
            source,
        })?;
        for (i, (path, report)) in paths.iter().zip(&reports).enumerate() {
            let name = std::path::Path::new(path).file_stem().map_or_else(
                || format!("report{i}"),
                |s| s.to_string_lossy().into_owned(),
            );
            // A report without requests has no histogram: its file is left empty.
            let text = report.percentile_distribution(None)?;
            let file = std::path::Path::new(dir).join(format!("{i}-{name}.hgrm"));
            write(&file.to_string_lossy(), text)?;
        }
    }
    Ok(if comparison.passed() { 0 } else { 1 })
}

fn memtier(
    args: MemtierArgs,
    console: &mut Console<'_>,
    interrupt: &Interrupt,
) -> crate::Result<u8> {
    use crate::tools::memtier::{self, Invocation};
    let (args, json) = args.split();
    let m = match memtier::parse(&args)? {
        Invocation::Help => {
            write!(console.stdout, "{}", memtier::usage()).map_err(output_error)?;
            return Ok(0);
        }
        Invocation::Version => {
            writeln!(console.stdout, "{}", memtier::version()).map_err(output_error)?;
            return Ok(0);
        }
        Invocation::Run(m) => *m,
    };
    let options = m.options;
    let err = &mut *console.stderr;
    if options.show_config {
        let _ = writeln!(err, "============== Configuration values: ==============");
        let _ = write!(err, "{}", options.config_text());
        let _ = writeln!(err, "===================================================");
    }
    let mut files = Vec::new();
    for (option, path) in [
        ("--out-file", &options.out_file),
        ("--json-out-file", &options.json_out_file),
        ("--json", &json),
    ] {
        files.extend(path.as_deref().map(|p| (option, p)));
    }
    let _claimed = crate::output::paths::claim(&files)?;
    if let Some(prefix) = &options.hdr_file_prefix {
        crate::output::paths::claim_prefix("--hdr-file-prefix", prefix)?;
    }
    let verify = options.data_verify.clone();
    if let (Some(v), Some(_)) = (&verify, &json) {
        if v.only {
            return Err(crate::Error::spec(
                "--json",
                "--verify-only runs no benchmark: there is no respload report to write",
            ));
        }
    }
    let connect = m.workload.phases.first().map(|p| p.connect.clone());
    // --verify-only: memtier runs no benchmark, only the verification.
    let report = match &verify {
        Some(v) if v.only => None,
        _ => {
            let runner = Runner::start(m.workload)?;
            interrupt.watch(&runner);
            while !runner.is_finished() {
                if let Some(s) = runner.next_snapshot(Duration::from_millis(200)) {
                    let _ = writeln!(console.stderr, "{}", progress_line(&s));
                }
            }
            Some(runner.wait()?)
        }
    };
    let verification = match (&verify, &connect) {
        (Some(v), Some(connect)) => Some(verify_data(connect, &v.items, console.stderr)?),
        _ => None,
    };
    let printed = memtier::finish_verified(report.as_ref(), &options, verification.as_ref())?;
    write!(console.stdout, "{}", printed.stdout).map_err(output_error)?;
    for line in &printed.stderr {
        let _ = writeln!(console.stderr, "{line}");
    }
    let Some(report) = report else {
        return Ok(0);
    };
    if let Some(path) = &json {
        write_json(&report, path)?;
    }
    Ok(partial(
        &report,
        console.stderr,
        "the report above is partial",
    ))
}

/// memtier's `--data-verify`: read the imported keys back; each key that fails is named on
/// stderr (the first 100), as memtier logs each.
fn verify_data(
    connect: &crate::plan::ConnectOptions,
    items: &[(Vec<u8>, Vec<u8>)],
    stderr: &mut dyn Write,
) -> crate::Result<crate::tools::memtier::Verification> {
    const SHOWN: usize = 100;
    let found = crate::engine::verify(connect, items)?;
    for m in found.mismatched.iter().take(SHOWN) {
        let _ = writeln!(stderr, "error: key [{}]: {}", m.key.escape_ascii(), m.found);
    }
    if found.mismatched.len() > SHOWN {
        let more = found.mismatched.len() - SHOWN;
        let _ = writeln!(stderr, "error: ... and {more} more keys failed");
    }
    Ok(crate::tools::memtier::Verification {
        verified: found.matched,
        failed: found.mismatched.len() as u64,
    })
}
