//! Workloads: JSON text in, validated [`respload::Workload`] out.

use crate::error::{internal, to_js};
use napi::bindgen_prelude::*;
use napi_derive::napi;

/// Parse and validate a workload given as JSON text (the canonical snake_case spec).
pub fn parse(json: &str) -> respload::Result<respload::Workload> {
    respload::Workload::from_json_str(json)
}

/// The normalized spec (defaults filled in, secrets kept) as JSON text.
fn spec_json(workload: &respload::Workload) -> respload::Result<String> {
    serde_json::to_string(&workload.to_json_value()).map_err(internal)
}

/// Read a `.toml` or `.json` spec file, validate it and return the normalized spec as JSON text
/// (every default filled in, secrets kept so that the result can be run).
///
/// Throws `ERR_RESPLOAD_FILE` when the file cannot be read and `ERR_RESPLOAD_SPEC` (with the
/// field `path`) when it is not a valid spec.
///
/// `scale` applies the file's `[scales.NAME]` values over its `[vars]`; `vars_json` (a JSON
/// object) then sets single variables the file declares.
#[napi]
pub fn load_spec(
    env: Env,
    path: String,
    scale: Option<String>,
    vars_json: Option<String>,
) -> Result<String> {
    respload::SpecParams::from_json_text(scale, vars_json.as_deref())
        .and_then(|params| respload::Workload::from_file_with(&path, &params))
        .and_then(|w| spec_json(&w))
        .map_err(|e| to_js(&env, &e))
}

/// Validate a workload given as JSON text and return its normalized spec as JSON text.
///
/// Throws `ERR_RESPLOAD_SPEC` (with the field `path`) when it is not a valid spec.
#[napi]
pub fn normalize_spec(env: Env, workload_json: String) -> Result<String> {
    parse(&workload_json)
        .and_then(|w| spec_json(&w))
        .map_err(|e| to_js(&env, &e))
}

/// The normalized spec of a workload (JSON text) with its secrets (passwords, the one in a
/// URL, the TLS key's file and passphrase) shown as `***`, as JSON text: what a `Workload`
/// shows (`toJSON()`, `inspect`) and a report's `workload` holds.
///
/// Throws `ERR_RESPLOAD_SPEC` (with the field `path`) when it is not a valid spec.
#[napi]
pub fn redacted_spec(env: Env, workload_json: String) -> Result<String> {
    parse(&workload_json)
        .and_then(|w| serde_json::to_string(&w.redacted()).map_err(internal))
        .map_err(|e| to_js(&env, &e))
}

/// Shard `index` (0-based) of `count` hosts running a workload (JSON text) together: the
/// normalized spec of this host's share, as JSON text (`Workload::shard` in the core).
///
/// Throws `ERR_RESPLOAD_SPEC` naming the field that cannot be shared.
#[napi]
pub fn shard_spec(env: Env, workload_json: String, index: u32, count: u32) -> Result<String> {
    parse(&workload_json)
        .and_then(|w| w.shard(index, count))
        .and_then(|w| spec_json(&w))
        .map_err(|e| to_js(&env, &e))
}

/// A start instant from its text (UNIX seconds or RFC 3339) as UNIX seconds.
///
/// Throws `ERR_RESPLOAD_SPEC` (path `start_at`) for text that is neither.
#[napi]
pub fn parse_start_at(env: Env, text: String) -> Result<f64> {
    respload::spec::parse_start_at(&text).map_err(|e| to_js(&env, &e))
}

/// Parse a redis-benchmark command line (split as a shell would; a leading `redis-benchmark`
/// is skipped) and return JSON text `{"spec": <normalized spec>, "warnings": [...]}`: one
/// phase per test, and the warnings redis-benchmark would print.
///
/// Throws `ERR_RESPLOAD_SPEC` with the option as `path` for options respload cannot honour
/// yet, unknown options, bad values, and `-l` (only the CLI repeats runs).
#[napi]
pub fn redis_benchmark_spec(env: Env, line: String) -> Result<String> {
    let parsed = respload::tools::redis_benchmark::parse_line(&line).and_then(|rb| {
        let warnings = rb.warnings.clone();
        let workload = rb.into_workload()?;
        let out = serde_json::json!({ "spec": workload.to_json_value(), "warnings": warnings });
        serde_json::to_string(&out).map_err(internal)
    });
    parsed.map_err(|e| to_js(&env, &e))
}

/// Parse a memtier_benchmark command line (split as a shell would; a leading
/// `memtier_benchmark` is skipped) and return its normalized spec as JSON text: `--run-count`
/// runs are measured phases `run 1` ... `run N`.
///
/// Throws `ERR_RESPLOAD_SPEC` with the option as `path` for options respload cannot honour
/// yet, unknown options and bad values.
#[napi]
pub fn memtier_spec(env: Env, line: String) -> Result<String> {
    respload::tools::memtier::workload(&line)
        .and_then(|w| spec_json(&w))
        .map_err(|e| to_js(&env, &e))
}
