//! `Cli`: the core's command line (`respload::cli::main`) on a thread of its own, writing to
//! this process's stdout and stderr; JavaScript awaits its exit code and passes Ctrl-C on.
//!
//! `bindings-node/cli.js` (the npm package's `respload` bin) is its one user: a process of
//! its own, so writing straight to file descriptors 1 and 2 is what is asked for.

use napi::bindgen_prelude::*;
use napi_derive::napi;
use respload::cli::{Console, Interrupt};
use std::io::IsTerminal;
use std::sync::{Arc, Condvar, Mutex};

/// The exit code once the command is over, and a wake-up for whoever waits for it.
#[derive(Default)]
struct Exit {
    code: Mutex<Option<u8>>,
    over: Condvar,
}

impl Exit {
    fn set(&self, code: u8) {
        *self.code.lock().unwrap_or_else(|e| e.into_inner()) = Some(code);
        self.over.notify_all();
    }

    fn wait(&self) -> u8 {
        let mut code = self.code.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            if let Some(c) = *code {
                return c;
            }
            code = self.over.wait(code).unwrap_or_else(|e| e.into_inner());
        }
    }
}

/// A command line running on its own thread.
#[napi]
pub struct Cli {
    interrupt: Interrupt,
    exit: Arc<Exit>,
}

#[napi]
impl Cli {
    /// Start `argv` (the program name first), writing to this process's stdout and stderr.
    #[napi(factory)]
    pub fn start(argv: Vec<String>) -> Result<Cli> {
        let interrupt = Interrupt::new();
        let exit = Arc::new(Exit::default());
        let (i, done) = (interrupt.clone(), Arc::clone(&exit));
        std::thread::Builder::new()
            .name("respload-cli".into())
            .spawn(move || {
                let (mut out, mut err) = (std::io::stdout(), std::io::stderr());
                let mut console = Console {
                    stdout_is_terminal: out.is_terminal(),
                    stderr_is_terminal: err.is_terminal(),
                    stdout: &mut out,
                    stderr: &mut err,
                };
                // A panic is a bug: exit code 101 (as Rust gives) instead of a waiting caller.
                let code = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    respload::cli::main(argv, &mut console, &i)
                }))
                .unwrap_or(101);
                done.set(code);
            })
            .map_err(|e| Error::from_reason(format!("cannot start a thread: {e}")))?;
        Ok(Cli { interrupt, exit })
    }

    /// The exit code, once the command is over (waited for off the JS thread).
    #[napi(ts_return_type = "Promise<number>")]
    pub fn wait(&self) -> AsyncTask<WaitForExit> {
        AsyncTask::new(WaitForExit {
            exit: Arc::clone(&self.exit),
        })
    }

    /// Pass a Ctrl-C on: the run in progress stops and its partial report is printed.
    /// Returns how many times this was called, so the caller can give up on the second.
    #[napi]
    pub fn interrupt(&self) -> u32 {
        self.interrupt.interrupt()
    }
}

/// Waits on a libuv worker thread for the command's exit code.
pub struct WaitForExit {
    exit: Arc<Exit>,
}

impl Task for WaitForExit {
    type Output = u8;
    type JsValue = u32;

    fn compute(&mut self) -> Result<u8> {
        Ok(self.exit.wait())
    }

    fn resolve(&mut self, _env: Env, code: u8) -> Result<u32> {
        Ok(u32::from(code))
    }
}
