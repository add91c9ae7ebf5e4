//! The spec's JSON Schema, derived from its Rust types (schemars): what `respload schema spec`
//! prints, for editors and tools that check spec files before a run. The types that serde
//! reads by hand (durations, key distributions, value sizes, request counts, thresholds)
//! describe their written forms here; the keys taken out of a spec before serde reads it
//! (`phases`, `repeat`, `vars`, `scales`) are added to the root.

use super::{Distribution, Requests, Spec, SpecDuration, Thresholds, ValueSize};
use super::{MAX_PHASES, MAX_REPEAT};
use crate::report::LIMITS;
use schemars::{json_schema, JsonSchema, Schema, SchemaGenerator};
use serde_json::{json, Map, Value};
use std::borrow::Cow;

/// A duration as text: a number, then a unit (what [`SpecDuration::parse`] reads).
const DURATION_PATTERN: &str = r"^\s*[0-9.]+\s*(us|µs|ms|s|m|min|h)?\s*$";

/// The JSON Schema (draft 2020-12) of a spec file (TOML read as JSON, or JSON): the keys a
/// spec may hold, their types, defaults and written forms, every type under `$defs` with its
/// doc comments as descriptions. It describes a spec after `${name}` variables are replaced
/// (a field written `"${rate}"` is a number once replaced); `x-schema-version` holds the
/// report's [`crate::report::SCHEMA_VERSION`] it goes with.
pub fn json_schema() -> Value {
    let mut generator = schemars::generate::SchemaSettings::draft2020_12()
        .for_deserialize()
        .into_generator();
    let mut schema = generator.root_schema_for::<Spec>().to_value();
    let Some(root) = schema.as_object_mut() else {
        return schema;
    };
    // A phase: any key of the spec (laid over the top-level ones), and `repeat`.
    let mut phase = Map::new();
    for key in ["type", "properties", "additionalProperties"] {
        if let Some(v) = root.get(key) {
            phase.insert(key.into(), v.clone());
        }
    }
    phase.insert(
        "description".into(),
        "One phase: a partial spec laid over the top-level keys (tables merge, lists and values \
         replace)."
            .into(),
    );
    let repeat = json!({
        "description": "Run the phase this many times in a row, as phases named `NAME #1` ... \
                        `NAME #N`; at the top level, every phase.",
        "type": "integer",
        "minimum": 1,
        "maximum": MAX_REPEAT,
        "default": 1,
    });
    if let Some(props) = phase.get_mut("properties").and_then(Value::as_object_mut) {
        props.insert("repeat".into(), repeat.clone());
    }
    if let Some(props) = root.get_mut("properties").and_then(Value::as_object_mut) {
        props.insert(
            "phases".into(),
            json!({
                "description": "Phases run in order, each a partial spec laid over the top-level \
                                keys. Without `phases` the spec is one phase.",
                "type": "array",
                "items": { "$ref": "#/$defs/Phase" },
                "maxItems": MAX_PHASES,
            }),
        );
        props.insert("repeat".into(), repeat);
        props.insert(
            "vars".into(),
            json!({
                "description": "Variables and their default values: `\"${name}\"` anywhere in \
                                the spec takes a variable's value.",
                "type": "object",
            }),
        );
        props.insert(
            "scales".into(),
            json!({
                "description": "Other values for some of the `vars`, by scale name \
                                (`--scale NAME`).",
                "type": "object",
                "additionalProperties": { "type": "object" },
            }),
        );
    }
    root.insert(
        "x-schema-version".into(),
        crate::report::SCHEMA_VERSION.into(),
    );
    if let Some(defs) = root.get_mut("$defs").and_then(Value::as_object_mut) {
        defs.insert("Phase".into(), Value::Object(phase));
    }
    schema
}

impl JsonSchema for SpecDuration {
    fn schema_name() -> Cow<'static, str> {
        "Duration".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "description": "A duration: seconds as a number, or a number with a unit (us, ms, \
                            s, m, h): \"500ms\", \"1.5s\", \"2m\".",
            "anyOf": [
                { "type": "number", "minimum": 0, "maximum": 1e9 },
                { "type": "string", "pattern": DURATION_PATTERN }
            ]
        })
    }
}

impl JsonSchema for Distribution {
    fn schema_name() -> Cow<'static, str> {
        "Distribution".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        let fraction = |open_low: bool, open_high: bool| {
            let mut s = json!({ "type": "number" });
            s[if open_low {
                "exclusiveMinimum"
            } else {
                "minimum"
            }] = json!(0);
            s[if open_high {
                "exclusiveMaximum"
            } else {
                "maximum"
            }] = json!(1);
            s
        };
        let kinds = [
            ("sequential", json!({})),
            ("uniform", json!({})),
            ("parallel", json!({})),
            (
                "gaussian",
                json!({ "median": { "type": "number" }, "stddev": { "type": "number" } }),
            ),
            (
                "zipf",
                json!({ "exponent": { "type": "number", "exclusiveMinimum": 0, "maximum": 5 } }),
            ),
            (
                "hotset",
                json!({ "hot_keys": fraction(true, true), "hot_ops": fraction(false, false) }),
            ),
        ];
        let names: Vec<&str> = kinds.iter().map(|(k, _)| *k).collect();
        let mut forms = vec![json!({ "enum": names })];
        for (kind, params) in kinds {
            let mut properties = json!({ "kind": { "const": kind } });
            if let (Some(p), Some(more)) = (properties.as_object_mut(), params.as_object()) {
                p.extend(more.clone());
            }
            forms.push(json!({
                "type": "object",
                "properties": properties,
                "required": ["kind"],
                "additionalProperties": false,
            }));
        }
        json_schema!({
            "description": "How a command picks its key from the range: a name (its \
                            parameters at their defaults) or a table with a `kind`.",
            "anyOf": forms
        })
    }
}

impl JsonSchema for Requests {
    fn schema_name() -> Cow<'static, str> {
        "Requests".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "description": "How many measured requests: a count, or \"all_keys\" (one per key \
                            of the range).",
            "anyOf": [
                { "type": "integer", "minimum": 0 },
                { "const": "all_keys" }
            ]
        })
    }
}

impl JsonSchema for ValueSize {
    fn schema_name() -> Cow<'static, str> {
        "ValueSize".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        let bytes = json!({ "type": "integer", "minimum": 0, "maximum": u32::MAX });
        let pair = json!({
            "type": "array",
            "prefixItems": [bytes, bytes],
            "items": false,
            "minItems": 2,
        });
        json_schema!({
            "description": "Value size in bytes: fixed (32), drawn uniformly from [min, max], \
                            or by weight from [[size, weight], ...].",
            "anyOf": [
                bytes,
                pair,
                { "type": "array", "items": pair, "minItems": 1 }
            ]
        })
    }
}

impl JsonSchema for Thresholds {
    fn schema_name() -> Cow<'static, str> {
        "Thresholds".into()
    }

    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        let limits: Map<String, Value> = LIMITS
            .iter()
            .map(|name| (name.to_string(), json!({ "type": "number" })))
            .collect();
        let mut properties = limits.clone();
        properties.insert(
            "commands".into(),
            json!({
                "description": "The same limits per command label (`[thresholds.commands.GET]`).",
                "type": "object",
                "additionalProperties": {
                    "type": "object",
                    "properties": limits,
                    "additionalProperties": false,
                },
            }),
        );
        properties.insert(
            "abort_on_fail".into(),
            json!({ "type": "boolean", "default": false }),
        );
        properties.insert(
            "delay_abort_eval".into(),
            generator.subschema_for::<SpecDuration>().to_value(),
        );
        json_schema!({
            "description": "Limits on results (latency at most in ms, `error_rate` at most, \
                            `min_ops_per_sec` at least), checked when the run ends; with \
                            `abort_on_fail`, every second while it runs.",
            "type": "object",
            "properties": properties,
            "additionalProperties": false
        })
    }
}
