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
        self.kind().code()
    }

    /// Which kind of error this is (the bindings raise one class per kind).
    pub fn kind(&self) -> ErrorKind {
        match self {
            Error::Spec { .. } => ErrorKind::Spec,
            Error::Connect { .. } => ErrorKind::Connect,
            Error::Tls { .. } => ErrorKind::Tls,
            Error::Auth { .. } => ErrorKind::Auth,
            Error::Protocol { .. } => ErrorKind::Protocol,
            Error::File { .. } => ErrorKind::File,
            Error::Barrier { .. } => ErrorKind::Barrier,
            Error::Internal(_) => ErrorKind::Internal,
        }
    }

    /// The fields the bindings put on their error object beside its message and code, as
    /// [`ErrorKind::fields`] declares them: `errno` only when the operating system gave one.
    pub fn fields(&self) -> Vec<(&'static str, ErrorValue)> {
        let text = |s: &str| ErrorValue::Text(s.to_owned());
        let os = |source: &std::io::Error| source.raw_os_error().map(ErrorValue::Int);
        match self {
            Error::Spec { path, reason } => vec![("path", text(path)), ("reason", text(reason))],
            Error::Connect { address, source } => {
                let mut out = vec![
                    ("address", text(address)),
                    ("reason", ErrorValue::Text(source.to_string())),
                ];
                out.extend(os(source).map(|errno| ("errno", errno)));
                out
            }
            Error::Auth { address, reason }
            | Error::Tls { address, reason }
            | Error::Protocol { address, reason } => {
                vec![("address", text(address)), ("reason", text(reason))]
            }
            Error::File { path, source } => {
                let mut out = vec![
                    ("path", text(path)),
                    ("reason", ErrorValue::Text(source.to_string())),
                ];
                out.extend(os(source).map(|errno| ("errno", errno)));
                out
            }
            Error::Barrier { phase, reason } => {
                vec![("phase", text(phase)), ("reason", text(reason))]
            }
            Error::Internal(reason) => vec![("reason", text(reason))],
        }
    }
}

/// A value of an error's field ([`Error::fields`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ErrorValue {
    /// A text (a path, an address, a reason).
    Text(String),
    /// A number (the operating system's error number).
    Int(i32),
}

/// The kinds of [`Error`]: the one list the Python exception classes, the Node error classes
/// and both bindings' mappings are generated from (`respload schema bindings`, read by
/// scripts/gen_reference.py), so a new kind appears in every language without a hand edit.
/// Each kind's doc comment is its class's documentation there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub enum ErrorKind {
    /// The workload spec is invalid; raised before any traffic is sent.
    Spec,
    /// The server could not be reached (refused, unreachable, timed out).
    Connect,
    /// The TLS handshake failed: the server's certificate was not trusted (unknown CA, wrong
    /// name, expired), the server wants or refused a client certificate, or the port does not
    /// speak TLS. Raised before any traffic; a connect error too.
    Tls,
    /// The server refused the credentials or the connection setup (AUTH, HELLO, SELECT).
    Auth,
    /// The server answered the connection setup with something RESP does not allow.
    Protocol,
    /// Reading a spec file (or writing an output file) failed.
    File,
    /// The hosts of a run with phases in step (a barrier) did not all meet before a phase: one
    /// never arrived within the timeout, one gave up or was stopped, or another run uses the
    /// same barrier id. Nothing of that phase was sent.
    Barrier,
    /// A failure inside respload itself (please report it).
    Internal,
}

/// The type of an error's field ([`ErrorField`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorFieldType {
    /// A text, always present (empty when unknown).
    Text,
    /// An operating system's error number, absent when there is none.
    Errno,
}

/// One field an error of a kind carries into the bindings, beside its message and code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ErrorField {
    /// Its name, the same in Rust, Python and Node.
    pub name: &'static str,
    /// Its type.
    pub ty: ErrorFieldType,
    /// What it holds.
    pub doc: &'static str,
}

const fn field(name: &'static str, doc: &'static str) -> ErrorField {
    ErrorField {
        name,
        ty: ErrorFieldType::Text,
        doc,
    }
}

const ERRNO: ErrorField = ErrorField {
    name: "errno",
    ty: ErrorFieldType::Errno,
    doc: "The operating system's error number (positive, as in C), when there is one.",
};
const ADDRESS: ErrorField = field("address", "The server's address, e.g. `127.0.0.1:6379`.");

const SPEC_FIELDS: &[ErrorField] = &[
    field(
        "path",
        "The field's dotted path, e.g. `load.connections` or `phases[1].keys.range` (empty for \
         the spec as a whole).",
    ),
    field(
        "reason",
        "What is wrong and what is allowed, including the bad value.",
    ),
];
const CONNECT_FIELDS: &[ErrorField] = &[
    field(
        "address",
        "The address that was tried, e.g. `127.0.0.1:6379`.",
    ),
    ERRNO,
    field(
        "reason",
        "The operating system's text, e.g. `Connection refused (os error 111)`.",
    ),
];
const TLS_FIELDS: &[ErrorField] = &[
    ADDRESS,
    ERRNO,
    field(
        "reason",
        "What went wrong and which setting changes it (`target.tls.ca_file`, ...).",
    ),
];
const AUTH_FIELDS: &[ErrorField] = &[ADDRESS, field("reason", "The server's error reply.")];
const PROTOCOL_FIELDS: &[ErrorField] = &[ADDRESS, field("reason", "What was wrong.")];
const INTERNAL_FIELDS: &[ErrorField] = &[field("reason", "What failed.")];
const BARRIER_FIELDS: &[ErrorField] = &[
    field("phase", "The phase the hosts were to start together."),
    field(
        "reason",
        "How many hosts arrived, which shards were missing, the barrier's id and server.",
    ),
];
const FILE_FIELDS: &[ErrorField] = &[
    field("path", "The file."),
    ERRNO,
    field(
        "reason",
        "The operating system's text, e.g. `No such file or directory (os error 2)`.",
    ),
];

impl ErrorKind {
    /// Every kind, in the order the bindings list them.
    pub const ALL: [ErrorKind; 8] = [
        ErrorKind::Spec,
        ErrorKind::Connect,
        ErrorKind::Tls,
        ErrorKind::Auth,
        ErrorKind::Protocol,
        ErrorKind::File,
        ErrorKind::Barrier,
        ErrorKind::Internal,
    ];

    /// The stable code (`ERR_RESPLOAD_SPEC`, ...).
    pub fn code(self) -> &'static str {
        match self {
            ErrorKind::Spec => "ERR_RESPLOAD_SPEC",
            ErrorKind::Connect => "ERR_RESPLOAD_CONNECT",
            ErrorKind::Tls => "ERR_RESPLOAD_TLS",
            ErrorKind::Auth => "ERR_RESPLOAD_AUTH",
            ErrorKind::Protocol => "ERR_RESPLOAD_PROTOCOL",
            ErrorKind::File => "ERR_RESPLOAD_FILE",
            ErrorKind::Barrier => "ERR_RESPLOAD_BARRIER",
            ErrorKind::Internal => "ERR_RESPLOAD_INTERNAL",
        }
    }

    /// The name of its class in Python and Node (`SpecError`, ...).
    pub fn class_name(self) -> &'static str {
        match self {
            ErrorKind::Spec => "SpecError",
            ErrorKind::Connect => "ConnectError",
            ErrorKind::Tls => "TlsError",
            ErrorKind::Auth => "AuthError",
            ErrorKind::Protocol => "ProtocolError",
            ErrorKind::File => "FileError",
            ErrorKind::Barrier => "BarrierError",
            ErrorKind::Internal => "InternalError",
        }
    }

    /// The kind whose class its class extends (`None`: the base class of every error): a
    /// TLS error is a connect error too.
    pub fn parent(self) -> Option<ErrorKind> {
        match self {
            ErrorKind::Tls => Some(ErrorKind::Connect),
            _ => None,
        }
    }

    /// The fields its errors carry ([`Error::fields`] gives their values), `reason` last.
    pub fn fields(self) -> &'static [ErrorField] {
        match self {
            ErrorKind::Spec => SPEC_FIELDS,
            ErrorKind::Connect => CONNECT_FIELDS,
            ErrorKind::Tls => TLS_FIELDS,
            ErrorKind::Auth => AUTH_FIELDS,
            ErrorKind::Protocol => PROTOCOL_FIELDS,
            ErrorKind::File => FILE_FIELDS,
            ErrorKind::Barrier => BARRIER_FIELDS,
            ErrorKind::Internal => INTERNAL_FIELDS,
        }
    }
}

/// `Result` with respload's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;
    use std::io;

    /// One error of each kind, with every field it can carry.
    fn one_of_each() -> Vec<Error> {
        vec![
            Error::spec("load.connections", "`0` is not allowed"),
            Error::Connect {
                address: "127.0.0.1:1".into(),
                source: io::Error::from_raw_os_error(111),
            },
            Error::Tls {
                address: "127.0.0.1:2".into(),
                reason: "unknown CA".into(),
            },
            Error::Auth {
                address: "127.0.0.1:3".into(),
                reason: "WRONGPASS".into(),
            },
            Error::Protocol {
                address: "127.0.0.1:4".into(),
                reason: "a bulk length of -2".into(),
            },
            Error::File {
                path: "spec.toml".into(),
                source: io::Error::from_raw_os_error(2),
            },
            Error::Barrier {
                phase: "load".into(),
                reason: "2 of 3 hosts arrived".into(),
            },
            Error::Internal("a worker did not start".into()),
        ]
    }

    #[test]
    fn every_kind_declares_the_fields_its_errors_carry() {
        let errors = one_of_each();
        let kinds: Vec<ErrorKind> = errors.iter().map(Error::kind).collect();
        assert_eq!(kinds, ErrorKind::ALL);
        for err in &errors {
            let declared: Vec<&str> = err.kind().fields().iter().map(|f| f.name).collect();
            let given: Vec<&str> = err.fields().iter().map(|(name, _)| *name).collect();
            for name in &given {
                assert!(
                    declared.contains(name),
                    "{:?}: {name} not declared",
                    err.kind()
                );
            }
            for f in err.kind().fields() {
                let absent_ok = f.ty == ErrorFieldType::Errno;
                assert!(
                    absent_ok || given.contains(&f.name),
                    "{:?}: {} declared, never given",
                    err.kind(),
                    f.name
                );
            }
            assert_eq!(declared.last(), Some(&"reason"));
        }
        let connect = &errors[1].fields();
        assert!(
            connect.contains(&("errno", ErrorValue::Int(111))),
            "{connect:?}"
        );
    }

    #[test]
    fn codes_and_class_names_are_unique_and_follow_the_kind() {
        for kind in ErrorKind::ALL {
            let name = format!("{kind:?}");
            assert_eq!(kind.class_name(), format!("{name}Error"));
            assert_eq!(kind.code(), format!("ERR_RESPLOAD_{}", name.to_uppercase()));
            if let Some(parent) = kind.parent() {
                // A subclass carries every field of its parent.
                for f in parent.fields() {
                    assert!(kind.fields().iter().any(|g| g.name == f.name), "{kind:?}");
                }
            }
        }
    }
}
