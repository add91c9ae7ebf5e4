//! `Cli`: the core's command line (`respload::cli::main`) on a thread of its own, writing to
//! Python file objects; the caller waits with the GIL released and passes Ctrl-C on.

use pyo3::prelude::*;
use respload::cli::{Console, Interrupt};
use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// A Python text stream (`sys.stdout`, `io.StringIO`, ...) as a `Write`: each write takes the
/// GIL (the waiting caller has released it) and calls `file.write(text)`.
struct PyWriter {
    file: Py<PyAny>,
    /// Set when the caller gave up on the command: from then on, output is dropped.
    silenced: Arc<AtomicBool>,
}

impl Write for PyWriter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if self.silenced.load(Ordering::SeqCst) {
            return Ok(buf.len());
        }
        let text = String::from_utf8_lossy(buf);
        // try_attach: never block on (or revive) an interpreter that is shutting down.
        match Python::try_attach(|py| self.file.call_method1(py, "write", (text.as_ref(),))) {
            Some(Ok(_)) | None => Ok(buf.len()),
            Some(Err(e)) => Err(std::io::Error::other(e.to_string())),
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        if self.silenced.load(Ordering::SeqCst) {
            return Ok(());
        }
        match Python::try_attach(|py| self.file.call_method0(py, "flush")) {
            Some(Ok(_)) | None => Ok(()),
            Some(Err(e)) => Err(std::io::Error::other(e.to_string())),
        }
    }
}

/// A command line running on its own thread.
#[pyclass(frozen, module = "respload._native", name = "Cli")]
pub struct Cli {
    interrupt: Interrupt,
    silenced: Arc<AtomicBool>,
    done: Mutex<Receiver<u8>>,
    code: Mutex<Option<u8>>,
}

#[pymethods]
impl Cli {
    /// Start `argv` (the program name first) writing to the `stdout` and `stderr` file
    /// objects; the `*_tty` flags say whether they are terminals (colours, live lines).
    #[staticmethod]
    fn start(
        argv: Vec<String>,
        stdout: Py<PyAny>,
        stderr: Py<PyAny>,
        stdout_tty: bool,
        stderr_tty: bool,
    ) -> Self {
        let interrupt = Interrupt::new();
        let silenced = Arc::new(AtomicBool::new(false));
        let (tx, rx) = std::sync::mpsc::channel();
        let (i, s) = (interrupt.clone(), Arc::clone(&silenced));
        // If the thread cannot start, `tx` is dropped and `wait` reports a failure.
        let _ = std::thread::Builder::new()
            .name("respload-cli".into())
            .spawn(move || {
                let mut out = PyWriter {
                    file: stdout,
                    silenced: Arc::clone(&s),
                };
                let mut err = PyWriter {
                    file: stderr,
                    silenced: s,
                };
                let mut console = Console {
                    stdout: &mut out,
                    stderr: &mut err,
                    stdout_is_terminal: stdout_tty,
                    stderr_is_terminal: stderr_tty,
                };
                // A panic is a bug: report it as exit code 101 (as Rust does) instead of
                // leaving the caller waiting.
                let code = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    respload::cli::main(argv, &mut console, &i)
                }))
                .unwrap_or(101);
                let _ = tx.send(code);
                // The file objects are released here without the GIL: PyO3 defers that.
            });
        Cli {
            interrupt,
            silenced,
            done: Mutex::new(rx),
            code: Mutex::new(None),
        }
    }

    /// Wait up to `timeout` seconds (GIL released) and return the exit code, or `None` if the
    /// command is still running.
    fn wait(&self, py: Python<'_>, timeout: f64) -> Option<u8> {
        if let Some(code) = *self.code.lock().unwrap_or_else(|e| e.into_inner()) {
            return Some(code);
        }
        let timeout = Duration::from_secs_f64(timeout.clamp(0.0, 3600.0));
        let got = py.detach(|| {
            let rx = self.done.lock().unwrap_or_else(|e| e.into_inner());
            match rx.recv_timeout(timeout) {
                Ok(code) => Some(code),
                Err(RecvTimeoutError::Timeout) => None,
                // The thread could not be spawned or died without a word: a failure.
                Err(RecvTimeoutError::Disconnected) => Some(101),
            }
        });
        if let Some(code) = got {
            *self.code.lock().unwrap_or_else(|e| e.into_inner()) = Some(code);
        }
        got
    }

    /// Pass a Ctrl-C on: the run in progress stops and its partial report is printed.
    /// Returns how many times this was called.
    fn interrupt(&self) -> u32 {
        self.interrupt.interrupt()
    }

    /// Give up on the command: stop its run and drop whatever it still writes.
    fn abandon(&self) {
        self.silenced.store(true, Ordering::SeqCst);
        self.interrupt.interrupt();
    }
}
