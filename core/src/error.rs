//! The library's error type: every failure a caller can act on, with enough context to act.

use std::fmt;

/// A failure of respload, before or during a run.
///
/// Error replies from the server during a run are not errors of this type: they are counted in
/// the report. These are the failures that stop a run from starting (or from continuing at all).
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The workload spec is invalid: `path` names the field (e.g. `load.connections`).
    #[error("invalid spec at `{path}`: {reason}")]
    Spec {
        /// Dotted field path, e.g. `phases[1].keys.range`.
        path: String,
        /// What is wrong and what is allowed, including the bad value.
        reason: String,
    },
    /// The server could not be reached.
    #[error("cannot connect to {address}: {source}")]
    Connect {
        /// The address that was tried.
        address: String,
        /// The operating system's error.
        #[source]
        source: std::io::Error,
    },
    /// The server refused the credentials (AUTH, HELLO) or the connection setup (SELECT, ...).
    #[error("the connection set-up failed at {address}: {reason}")]
    Auth {
        /// The address of the server.
        address: String,
        /// The server's error reply.
        reason: String,
    },
    /// The TLS handshake with the server failed (certificate not trusted, wrong name, expired,
    /// a client certificate required or refused, a plain-text port, ...), before any traffic.
    #[error("TLS with {address} failed: {reason}")]
    Tls {
        /// The address of the server.
        address: String,
        /// What went wrong and what to do about it.
        reason: String,
    },
    /// The server answered the connection setup with something other than what RESP allows.
    #[error("protocol error from {address}: {reason}")]
    Protocol {
        /// The address of the server.
        address: String,
        /// What was wrong.
        reason: String,
    },
    /// Reading a spec file, or writing an output file, failed.
    #[error("{path}: {source}")]
    File {
        /// The file.
        path: String,
        /// The operating system's error.
        #[source]
        source: std::io::Error,
    },
    /// The hosts of a run with phases in step (`--barrier`) did not all meet before a phase:
    /// a host never arrived within the timeout, one gave up or was interrupted, or another
    /// run uses the same barrier id. Nothing of the phase was sent.
    #[error("barrier before phase `{phase}`: {reason}")]
    Barrier {
        /// The phase the hosts were to start together.
        phase: String,
        /// What happened: how many hosts arrived, which shards were missing, the barrier.
        reason: String,
    },
    /// A failure inside the runner itself (a worker thread that could not start, ...).
    #[error("internal error: {0}")]
    Internal(String),
}

impl Error {
    /// A spec error at `path`.
    pub fn spec(path: impl Into<String>, message: impl fmt::Display) -> Self {
        Error::Spec {
            path: path.into(),
            reason: message.to_string(),
        }
    }

    /// A stable machine-readable code, used by the bindings (`ERR_RESPLOAD_SPEC`, ...).
    pub fn code(&self) -> &'static str {
        match self {
            Error::Spec { .. } => "ERR_RESPLOAD_SPEC",
            Error::Connect { .. } => "ERR_RESPLOAD_CONNECT",
            Error::Auth { .. } => "ERR_RESPLOAD_AUTH",
            Error::Tls { .. } => "ERR_RESPLOAD_TLS",
            Error::Protocol { .. } => "ERR_RESPLOAD_PROTOCOL",
            Error::File { .. } => "ERR_RESPLOAD_FILE",
            Error::Barrier { .. } => "ERR_RESPLOAD_BARRIER",
            Error::Internal(_) => "ERR_RESPLOAD_INTERNAL",
        }
    }
}

/// `Result` with respload's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
