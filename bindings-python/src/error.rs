//! Core errors to Python exceptions: the classes live in `respload.exceptions` (generated from
//! the core's `ErrorKind` list by scripts/gen_reference.py, so they can also derive from
//! `ValueError`, `ConnectionError`, ...); this takes each error's class name and fields from
//! the core and passes the fields as keyword arguments. Nothing here names a kind.

use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use respload::error::ErrorValue;
use respload::Error;

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
    for (name, value) in err.fields() {
        match value {
            ErrorValue::Text(text) => kwargs.set_item(name, text)?,
            ErrorValue::Int(n) => kwargs.set_item(name, n)?,
        }
    }
    let class = module.getattr(err.kind().class_name())?;
    let value = class.call((message,), Some(&kwargs))?;
    Ok(PyErr::from_value(value))
}
