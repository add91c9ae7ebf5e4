//! A shell that holds a pipe from this process and cleans up when it closes: when the owner
//! is dropped, or this process exits, crashes or is killed (even with SIGKILL), the pipe
//! closes and the shell kills its server and removes its directory. Nothing outlives the
//! process that started it, whatever language that process is written in.

use crate::Error;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};

/// Runs the command in the background (its output to files of the directory), prints its
/// pid, and on end of input kills it and removes the directory.
const SERVER: &str = r#"
dir=$1; shift
"$@" >/dev/null 2>"$dir/stderr.log" &
pid=$!
echo "$pid"
cleanup() { kill -9 "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; rm -rf "$dir"; }
trap cleanup EXIT
trap 'exit 143' HUP INT TERM
read -r _ || true
"#;

/// Removes the directory on end of input.
const DIR: &str = r#"
trap 'rm -rf "$1"' EXIT
trap 'exit 143' HUP INT TERM
read -r _ || true
"#;

/// The shell; dropping it closes the pipe and waits for the shell to have cleaned up.
#[derive(Debug)]
pub(crate) struct Watchdog {
    shell: Child,
    pipe: Option<ChildStdin>,
}

impl Watchdog {
    /// Run `argv` in `dir` under a watchdog; with the command's pid.
    pub(crate) fn server(dir: &Path, argv: &[String]) -> Result<(Watchdog, u32), Error> {
        let mut shell = Command::new("sh")
            .args(["-c", SERVER, "respload-watchdog"])
            .arg(dir)
            .args(argv)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()?;
        let mut line = String::new();
        let out = shell.stdout.take().expect("piped");
        BufReader::new(out).read_line(&mut line)?;
        let pipe = shell.stdin.take();
        let dog = Watchdog { shell, pipe };
        match line.trim().parse() {
            Ok(pid) => Ok((dog, pid)),
            Err(_) => Err(Error::Start(format!(
                "the watchdog shell did not start {}",
                argv[0]
            ))),
        }
    }

    /// Remove `dir` when this is dropped or the process ends.
    pub(crate) fn dir(dir: &Path) -> Result<Watchdog, Error> {
        let mut shell = Command::new("sh")
            .args(["-c", DIR, "respload-watchdog"])
            .arg(dir)
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()?;
        let pipe = shell.stdin.take();
        Ok(Watchdog { shell, pipe })
    }
}

impl Drop for Watchdog {
    fn drop(&mut self) {
        drop(self.pipe.take());
        let _ = self.shell.wait();
    }
}
