//! The CLI's live line of a snapshot, for `progress: true` (the text comes from the core).

use crate::error::{internal, to_js};
use napi::bindgen_prelude::*;
use napi_derive::napi;

/// The CLI's live line of a snapshot (its JSON text, as `NativeRunner` delivers it).
#[napi]
pub fn progress_line(env: Env, snapshot_json: String) -> Result<String> {
    let snapshot: respload::Snapshot = serde_json::from_str(&snapshot_json)
        .map_err(|e| to_js(&env, &internal(format!("snapshot: {e}"))))?;
    Ok(respload::output::progress_line(&snapshot))
}
