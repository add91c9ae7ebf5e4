//! Mapping of [`respload::Error`] to JavaScript errors.
//!
//! The thrown value is a plain `Error` whose `code` is the core's stable code
//! (`ERR_RESPLOAD_SPEC`, `ERR_RESPLOAD_CONNECT`, ...) and which carries the fields the core
//! declares for its kind (`respload::Error::fields`: `path`, `address`, `reason`, `errno`
//! when the operating system gave one; the names Python uses). The JavaScript layer rewraps
//! it into its `RespLoadError` subclasses, generated from the same list.

use napi::bindgen_prelude::*;
use napi::JsError;
use respload::error::ErrorValue;

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
    // The fields the core declares for the error's kind; index.js's generated classes read
    // them back by the same names.
    for (name, field) in err.fields() {
        match field {
            ErrorValue::Text(text) => object.set_named_property(name, text)?,
            ErrorValue::Int(n) => object.set_named_property(name, n)?,
        }
    }
    Ok(napi::Error::from(value))
}

/// A failure of the binding itself (not of respload): serialization, a poisoned lock, misuse.
pub fn internal(message: impl std::fmt::Display) -> respload::Error {
    respload::Error::Internal(message.to_string())
}
