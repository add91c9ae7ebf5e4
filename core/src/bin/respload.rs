//! The `respload` command line: the library's [`respload::cli::main`] on this process's
//! arguments and streams, plus the Ctrl-C handling only a binary may install.

use respload::cli::{Console, Interrupt};
use std::io::IsTerminal;
use std::process::ExitCode;

fn main() -> ExitCode {
    let interrupt = Interrupt::new();
    let on_ctrl_c = interrupt.clone();
    // The CLI owns its process, so it may handle Ctrl-C: the first press stops the run and
    // keeps the partial report (and ends redis-benchmark's -l); a second exits at once.
    let _ = ctrlc::set_handler(move || {
        if on_ctrl_c.interrupt() > 1 {
            std::process::exit(130);
        }
    });
    let (mut stdout, mut stderr) = (std::io::stdout(), std::io::stderr());
    let mut console = Console {
        stdout_is_terminal: stdout.is_terminal(),
        stderr_is_terminal: stderr.is_terminal(),
        stdout: &mut stdout,
        stderr: &mut stderr,
    };
    ExitCode::from(respload::cli::main(
        std::env::args_os(),
        &mut console,
        &interrupt,
    ))
}
