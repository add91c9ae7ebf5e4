//! `respload redis-benchmark ARGS...` (and `respload valkey-benchmark ARGS...`):
//! redis-benchmark's command line, respload's engine, redis-benchmark's output.

use super::{output_error, partial, Console, Interrupt};
use crate::output::write_json;
use crate::tools::redis_benchmark::{
    error_lines, error_replies, idle_banner, parse_tool_args, render, Format, Progress, Tool,
};
use crate::Runner;
use clap::Args;
use std::time::Duration;

/// redis-benchmark's options, then optionally a command with its arguments.
#[derive(Args)]
pub(crate) struct RedisBenchmarkArgs {
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

/// Run it; an interrupt stops the run in progress, keeps its partial results and ends `-l`.
pub(crate) fn run(
    args: RedisBenchmarkArgs,
    tool: Tool,
    console: &mut Console<'_>,
    interrupt: &Interrupt,
) -> crate::Result<u8> {
    // `-x` reads the command's last argument from the process's standard input.
    let rb = parse_tool_args(tool, &args.args, Some(&mut std::io::stdin().lock()))?;
    for w in &rb.warnings {
        let _ = writeln!(console.stderr, "{w}");
    }
    let live = console.stderr_is_terminal && rb.output.format != Format::Csv;
    if let Some(n) = rb.output.idle {
        console
            .stdout
            .write_all(idle_banner(n).as_bytes())
            .and_then(|()| console.stdout.flush())
            .map_err(output_error)?;
    }
    let _claimed = rb
        .output
        .json
        .as_deref()
        .map(|path| crate::output::paths::claim(&[("--json", path)]))
        .transpose()?;
    loop {
        let runner = Runner::start(rb.workload.clone())?;
        interrupt.watch(&runner);
        let mut progress = Progress::new();
        while !runner.is_finished() {
            if let Some(s) = runner.next_snapshot(Duration::from_millis(200)) {
                if live {
                    let _ = write!(console.stderr, "{}\r", progress.line(&s));
                }
            }
        }
        if live {
            let _ = write!(console.stderr, "\x1b[2K\r");
        }
        let report = runner.wait()?;
        console
            .stdout
            .write_all(render(&report, &rb.output).as_bytes())
            .and_then(|()| console.stdout.flush())
            .map_err(output_error)?;
        if rb.output.show_errors {
            for line in error_replies(&report) {
                let _ = writeln!(console.stderr, "{line}");
            }
        }
        for line in error_lines(&report) {
            let _ = writeln!(console.stderr, "respload: {line}");
        }
        if let Some(path) = &rb.output.json {
            write_json(&report, path)?;
        }
        if report.interrupted {
            return Ok(partial(
                &report,
                console.stderr,
                "the results above are partial",
            ));
        }
        if !rb.output.repeat {
            return Ok(0);
        }
    }
}
