//! What can go wrong starting servers, and finding the programs that start them.

use std::path::{Path, PathBuf};

/// Why a server, a cluster or the certificates could not be had.
#[derive(Debug)]
pub enum Error {
    /// A program is not installed (`redis-server`, `redis-cli`): the message says how to get
    /// it and which environment variable names another binary.
    NotFound(String),
    /// The options are wrong (a field and what it allows).
    Invalid(String),
    /// A server did not come up (with the tail of its log), or a cluster did not form.
    Start(String),
    /// An error reply where none was expected (`AUTH`, `SELECT` of [`Client::connect`](crate::Client::connect)).
    Reply(String),
    /// The system refused a file, a process or a connection.
    Io(std::io::Error),
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Error::NotFound(m) | Error::Invalid(m) | Error::Start(m) | Error::Reply(m) => {
                f.write_str(m)
            }
            Error::Io(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for Error {}

impl From<std::io::Error> for Error {
    fn from(e: std::io::Error) -> Self {
        Error::Io(e)
    }
}

/// The program to run: `given`, else `$ENV`, else `name`, looked up on `PATH` unless it is a
/// path; `package` is the Debian package that installs it.
pub(crate) fn program(
    given: Option<&str>,
    env: &str,
    name: &str,
    package: &str,
) -> Result<PathBuf, Error> {
    let from_env = std::env::var(env).ok().filter(|v| !v.is_empty());
    let exe = given
        .map(str::to_string)
        .or(from_env)
        .unwrap_or(name.into());
    let found = if exe.contains('/') {
        Some(PathBuf::from(&exe)).filter(|p| executable(p))
    } else {
        std::env::var_os("PATH").and_then(|path| {
            std::env::split_paths(&path)
                .map(|d| d.join(&exe))
                .find(|p| executable(p))
        })
    };
    found.ok_or_else(|| {
        Error::NotFound(format!(
            "{exe} is not on PATH: install it (Debian/Ubuntu: apt-get install -y {package}; \
             macOS: brew install redis) or set {env} to the binary"
        ))
    })
}

#[cfg(unix)]
fn executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    p.metadata()
        .map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        .unwrap_or(false)
}

#[cfg(not(unix))]
fn executable(p: &Path) -> bool {
    p.is_file()
}
