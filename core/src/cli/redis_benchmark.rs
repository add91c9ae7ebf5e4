//! `respload redis-benchmark ARGS...`: redis-benchmark's command line, respload's engine,
//! redis-benchmark's output.

use clap::Args;
use respload::compat::redis_benchmark::parse_args;
use respload::output::redis_benchmark::{error_lines, render, Format, Progress};
use respload::output::write_json;
use respload::{Runner, StopHandle};
use std::io::{IsTerminal, Write};
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// redis-benchmark's options, then optionally a command with its arguments.
#[derive(Args)]
pub struct RedisBenchmarkArgs {
    /// Exactly as redis-benchmark takes them, e.g. `-h HOST -a PASS -t get -d 1024 -P 50 -c 4`
    /// or `-r 1000 -n 10000 lpush mylist __rand_int__`. Also `--json FILE` (respload's report).
    #[arg(
        trailing_var_arg = true,
        allow_hyphen_values = true,
        num_args = 0..,
        value_name = "ARGS"
    )]
    args: Vec<String>,
}

pub fn run(args: RedisBenchmarkArgs) -> respload::Result<()> {
    let rb = parse_args(&args.args)?;
    for w in &rb.warnings {
        eprintln!("{w}");
    }
    let live = std::io::stderr().is_terminal() && rb.output.format != Format::Csv;
    // The CLI owns its process, so it may handle Ctrl-C, as `respload run` does: the first
    // press stops the run and keeps the partial report (and ends -l); a second exits at once.
    let current: Arc<Mutex<Option<StopHandle>>> = Arc::default();
    let interrupted = Arc::new(AtomicBool::new(false));
    {
        let (current, interrupted) = (Arc::clone(&current), Arc::clone(&interrupted));
        let presses = AtomicU32::new(0);
        let _ = ctrlc::set_handler(move || {
            if presses.fetch_add(1, Ordering::SeqCst) > 0 {
                std::process::exit(130);
            }
            interrupted.store(true, Ordering::SeqCst);
            if let Some(stop) = current.lock().ok().and_then(|c| c.clone()) {
                stop.stop();
            }
        });
    }
    loop {
        let runner = Runner::start(rb.workload.clone())?;
        if let Ok(mut c) = current.lock() {
            *c = Some(runner.stop_handle());
        }
        if interrupted.load(Ordering::SeqCst) {
            runner.stop_handle().stop();
        }
        let mut progress = Progress::new();
        while !runner.is_finished() {
            if let Some(s) = runner.next_snapshot(Duration::from_millis(200)) {
                if live {
                    eprint!("{}\r", progress.line(&s));
                }
            }
        }
        if live {
            eprint!("\x1b[2K\r");
        }
        let report = runner.wait()?;
        let mut stdout = std::io::stdout().lock();
        let _ = stdout.write_all(render(&report, &rb.output).as_bytes());
        let _ = stdout.flush();
        for line in error_lines(&report) {
            eprintln!("respload: {line}");
        }
        if let Some(path) = &rb.output.json {
            write_json(&report, path)?;
        }
        if report.interrupted {
            eprintln!("respload: interrupted, the results above are partial");
            return Ok(());
        }
        if !rb.output.repeat {
            return Ok(());
        }
    }
}
