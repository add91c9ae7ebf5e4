//! Mapping of [`respload::Error`] to JavaScript errors.
//!
//! The thrown value is a plain `Error` whose `code` is the core's stable code
//! (`ERR_RESPLOAD_SPEC`, `ERR_RESPLOAD_CONNECT`, ...) and which carries the variant's fields:
//! `path` for spec errors (the field, e.g. `load.connections`) and file errors (the file),
//! `address` for connect, TLS, auth and protocol errors, `reason` for the cause, `errno` for
//! the operating system's error number of a connect or file error, when there is one (the
//! names Python uses). The JavaScript layer rewraps it into its `RespLoadError` subclasses.

use napi::bindgen_prelude::*;
use napi::JsError;

/// The JavaScript error for `err`, to return from a function running on the JS thread.
pub fn to_js(env: &Env, err: &respload::Error) -> napi::Error {
    match build(env, err) {
        Ok(e) => e,
        // Building the object failed (the environment is going away): keep code and message.
        Err(_) => napi::Error::new(Status::GenericFailure, format!("{}: {err}", err.code())),
    }
}

fn build(env: &Env, err: &respload::Error) -> Result<napi::Error> {
    let value = JsError::from(napi::Error::new(err.code(), err.to_string())).into_unknown(*env);
    let mut object: Object = unsafe { value.cast()? };
    match err {
        respload::Error::Spec { path, reason } => {
            object.set_named_property("path", path.as_str())?;
            object.set_named_property("reason", reason.as_str())?;
        }
        respload::Error::File { path, source } => {
            object.set_named_property("path", path.as_str())?;
            object.set_named_property("reason", source.to_string())?;
            set_errno(&mut object, source)?;
        }
        respload::Error::Connect { address, source } => {
            object.set_named_property("address", address.as_str())?;
            object.set_named_property("reason", source.to_string())?;
            set_errno(&mut object, source)?;
        }
        respload::Error::Auth { address, reason }
        | respload::Error::Tls { address, reason }
        | respload::Error::Protocol { address, reason } => {
            object.set_named_property("address", address.as_str())?;
            object.set_named_property("reason", reason.as_str())?;
        }
        respload::Error::Barrier { phase, reason } => {
            object.set_named_property("phase", phase.as_str())?;
            object.set_named_property("reason", reason.as_str())?;
        }
        respload::Error::Internal(message) => {
            object.set_named_property("reason", message.as_str())?;
        }
    }
    Ok(napi::Error::from(value))
}

/// `errno`: the OS error number, positive as in C and Python (Node's own system errors negate
/// it); left unset when the error has none (a timeout, a name that did not resolve).
fn set_errno(object: &mut Object, source: &std::io::Error) -> Result<()> {
    match source.raw_os_error() {
        Some(errno) => object.set_named_property("errno", errno),
        None => Ok(()),
    }
}

/// A failure of the binding itself (not of respload): serialization, a poisoned lock, misuse.
pub fn internal(message: impl std::fmt::Display) -> respload::Error {
    respload::Error::Internal(message.to_string())
}
