//! Core errors to Python exceptions: the classes live in `respload.exceptions` (so they can
//! also derive from `ValueError`, `ConnectionError`, ...); this maps each core error code to
//! its class and passes the error's fields as keyword arguments.

use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use respload::Error;

/// The Python exception class (in `respload.exceptions`) for a core error code.
fn class_name(code: &str) -> &'static str {
    match code {
        "ERR_RESPLOAD_SPEC" => "SpecError",
        "ERR_RESPLOAD_CONNECT" => "ConnectError",
        "ERR_RESPLOAD_AUTH" => "AuthError",
        "ERR_RESPLOAD_TLS" => "TlsError",
        "ERR_RESPLOAD_PROTOCOL" => "ProtocolError",
        "ERR_RESPLOAD_FILE" => "FileError",
        "ERR_RESPLOAD_BARRIER" => "BarrierError",
        "ERR_RESPLOAD_INTERNAL" => "InternalError",
        _ => "RespLoadError",
    }
}

/// Convert a core error into the matching `respload.exceptions` instance.
pub fn to_py(err: Error) -> PyErr {
    Python::attach(|py| build(py, &err).unwrap_or_else(|e| e))
}

fn build(py: Python<'_>, err: &Error) -> Result<PyErr, PyErr> {
    let message = err.to_string();
    let module = match py.import("respload.exceptions") {
        Ok(m) => m,
        // `_native` imported without its package: still a readable error.
        Err(_) => {
            return Ok(PyRuntimeError::new_err(format!(
                "{}: {message}",
                err.code()
            )));
        }
    };
    let kwargs = PyDict::new(py);
    kwargs.set_item("code", err.code())?;
    match err {
        Error::Spec { path, reason } => {
            kwargs.set_item("path", path)?;
            kwargs.set_item("reason", reason)?;
        }
        Error::Connect { address, source } => {
            kwargs.set_item("address", address)?;
            kwargs.set_item("errno", source.raw_os_error())?;
            kwargs.set_item("reason", source.to_string())?;
        }
        Error::Auth { address, reason }
        | Error::Tls { address, reason }
        | Error::Protocol { address, reason } => {
            kwargs.set_item("address", address)?;
            kwargs.set_item("reason", reason)?;
        }
        Error::File { path, source } => {
            kwargs.set_item("path", path)?;
            kwargs.set_item("errno", source.raw_os_error())?;
            kwargs.set_item("reason", source.to_string())?;
        }
        Error::Barrier { phase, reason } => {
            kwargs.set_item("phase", phase)?;
            kwargs.set_item("reason", reason)?;
        }
        Error::Internal(reason) => kwargs.set_item("reason", reason)?,
    }
    let class = module.getattr(class_name(err.code()))?;
    let value = class.call((message,), Some(&kwargs))?;
    Ok(PyErr::from_value(value))
}
