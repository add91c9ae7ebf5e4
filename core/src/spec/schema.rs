//! The spec's JSON Schema, derived from its Rust types (schemars): what `respload schema spec`
//! prints, for editors and tools that check spec files before a run, and what the spec
//! reference and the Node package's spec types are generated from (scripts/gen_reference.py).
//! The types that serde reads by hand (durations, key distributions, value sizes, request
//! counts, thresholds) derive their descriptions from their doc comments and get their
//! written forms from the transforms here; the keys taken out of a spec before serde reads it
//! (`phases`, `repeat`, `vars`, `scales`) are added to the root.

use super::load::RANGES;
use super::{
    Arrivals, CommandSpec, ConnectionsRamp, Distribution, Event, Family, Io, Keys, Load, Observe,
    Output, Pacing, PhaseSpec, RampShare, RateProfile, RateRamp, ReadFrom, Reconnect, Refill,
    Replay, ReplayShare, Retry, Slo, Statsd, Target, Tls, ValueData, Values,
};
use super::{BUILTINS, MAX_PHASES, MAX_REPEAT};
use crate::report::{field_order, LIMITS, SCHEMA_VERSION};
use schemars::Schema;
use serde_json::{json, Map, Value};

/// A duration as text: a number, then a unit (what [`super::SpecDuration::parse`] reads).
const DURATION_PATTERN: &str = r"^\s*[0-9.]+\s*(us|µs|ms|s|m|min|h)?\s*$";

/// The name, in `$defs`, of the built-in commands' names.
const BUILTIN_NAMES: &str = "BuiltinCommand";

/// The JSON Schema (draft 2020-12) of a spec file (TOML read as JSON, or JSON): the keys a
/// spec may hold, their types, defaults and written forms, every type under `$defs` with its
/// doc comments as descriptions. It describes a spec after `${name}` variables are replaced
/// (a field written `"${rate}"` is a number once replaced). Beside the standard keywords:
/// `x-schema-version` holds the report's [`SCHEMA_VERSION`] it goes with; each struct's
/// `x-field-order` its keys in declared order; the root's `x-read-before-serde` the keys taken
/// out before serde reads a spec, in order, and those only the top level has
/// `x-top-level-only`; `commands[].name` names the built-in commands' enum in
/// `x-names` (it matches them in any case, so it is not a plain `enum`). An integer checked
/// against a range has it as `minimum`/`maximum`; an enum with a default variant has it as
/// `default`.
pub fn json_schema() -> Value {
    let mut generator = schemars::generate::SchemaSettings::draft2020_12()
        .for_deserialize()
        .into_generator();
    let mut schema = generator.root_schema_for::<PhaseSpec>().to_value();
    let Some(root) = schema.as_object_mut() else {
        return schema;
    };
    if let Some(defs) = root.get_mut("$defs").and_then(Value::as_object_mut) {
        add_defaults(defs);
        defs.insert(
            BUILTIN_NAMES.into(),
            json!({
                "description": "The built-in commands (`[[commands]]` `name`), as \
                                redis-benchmark's `-t` tests define them; matched in any case.",
                "type": "string",
                "enum": BUILTINS,
            }),
        );
        if let Some(name) = defs
            .get_mut("CommandSpec")
            .and_then(|c| c.pointer_mut("/properties/name"))
            .and_then(Value::as_object_mut)
        {
            name.insert("x-names".into(), format!("#/$defs/{BUILTIN_NAMES}").into());
        }
    }
    add_field_orders(root);
    add_ranges(root);
    add_raw_keys(root);
    root.insert("x-schema-version".into(), SCHEMA_VERSION.into());
    schema
}

/// Each struct's keys in declared order (`x-field-order`), from serde's own field lists.
fn add_field_orders(root: &mut Map<String, Value>) {
    macro_rules! orders {
        ($($t:ident),* $(,)?) => {
            [$((stringify!($t), field_order::<$t>())),*]
        };
    }
    let orders = orders!(
        PhaseSpec,
        Target,
        Tls,
        Load,
        RateRamp,
        RateProfile,
        ConnectionsRamp,
        RampShare,
        Reconnect,
        Retry,
        Keys,
        Values,
        CommandSpec,
        Observe,
        Statsd,
        Event,
        Slo,
        Output,
        Replay,
        ReplayShare,
    );
    for (name, fields) in orders {
        let Some(fields) = fields else { continue };
        let node = if name == "PhaseSpec" {
            Some(&mut *root)
        } else {
            root.get_mut("$defs")
                .and_then(|d| d.get_mut(name))
                .and_then(Value::as_object_mut)
        };
        if let Some(node) = node {
            node.insert("x-field-order".into(), fields.into());
        }
    }
}

/// The default variant of each enum that has one, as a spec writes it.
fn add_defaults(defs: &mut Map<String, Value>) {
    macro_rules! defaults {
        ($($t:ident),* $(,)?) => {
            [$((stringify!($t), serde_json::to_value($t::default()).ok())),*]
        };
    }
    let defaults = defaults!(
        Arrivals,
        Pacing,
        Refill,
        Io,
        ReadFrom,
        Family,
        ValueData,
        Distribution
    );
    for (name, value) in defaults {
        if let (Some(def), Some(value)) = (defs.get_mut(name).and_then(Value::as_object_mut), value)
        {
            def.insert("default".into(), value);
        }
    }
}

/// [`RANGES`] as `minimum`/`maximum` of the properties they check.
fn add_ranges(root: &mut Map<String, Value>) {
    for &(path, lo, hi) in RANGES {
        let Some(prop) = property(root, path) else {
            continue;
        };
        prop.insert("minimum".into(), lo.into());
        if hi != u64::MAX {
            prop.insert("maximum".into(), hi.into());
        }
    }
}

/// The property at a dotted path (`load.connections`), through the `$ref`s of the tables on
/// the way.
fn property<'a>(
    root: &'a mut Map<String, Value>,
    path: &str,
) -> Option<&'a mut Map<String, Value>> {
    let mut names = Vec::new();
    {
        let mut node: &Map<String, Value> = root;
        let parts: Vec<&str> = path.split('.').collect();
        for (i, part) in parts.iter().enumerate() {
            let prop = node.get("properties")?.get(*part)?;
            if i + 1 == parts.len() {
                break;
            }
            let name = referenced(prop)?;
            node = root.get("$defs")?.get(&name)?.as_object()?;
            names.push(name);
        }
    }
    let last = path.rsplit('.').next()?;
    let node = match names.last() {
        None => root,
        Some(name) => root.get_mut("$defs")?.get_mut(name)?.as_object_mut()?,
    };
    node.get_mut("properties")?.get_mut(last)?.as_object_mut()
}

/// The `$defs` name a property refers to, directly or as an optional value.
fn referenced(prop: &Value) -> Option<String> {
    let direct = prop.get("$ref").and_then(Value::as_str);
    let optional = || {
        prop.get("anyOf")?
            .as_array()?
            .iter()
            .find_map(|form| form.get("$ref")?.as_str())
    };
    let name = direct.or_else(optional)?;
    Some(name.strip_prefix("#/$defs/")?.to_owned())
}

/// The keys a spec's text loses before serde reads it: `phases` and `repeat`, and `vars` and
/// `scales` (top level only); a `Phase` is any key of the top level, and `repeat`.
fn add_raw_keys(root: &mut Map<String, Value>) {
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
                        `NAME #N` (`main #1` ... without a name); a top-level `repeat` applies \
                        to every phase. The normalized spec has the copies instead.",
        "type": "integer",
        "minimum": 1,
        "maximum": MAX_REPEAT,
        "default": 1,
    });
    if let Some(props) = phase.get_mut("properties").and_then(Value::as_object_mut) {
        props.insert("repeat".into(), repeat.clone());
    }
    let raw = [
        (
            "phases",
            json!({
                "description": "Phases run in order, each a partial workload (any field of this \
                                table) laid over the base: tables merge, arrays and values \
                                replace. Without `phases` the spec is one phase.",
                "type": "array",
                "items": { "$ref": "#/$defs/Phase" },
                "maxItems": MAX_PHASES,
                "x-top-level-only": true,
            }),
        ),
        ("repeat", repeat),
        (
            "vars",
            json!({
                "description": "Variables and their default values (any value: text, number, \
                                boolean, table, list). `\"${name}\"` anywhere in the spec takes \
                                a variable's value, with its type when the string is exactly \
                                that, as text among other text; `$${` is a literal `${`. Taken \
                                out before anything else: the normalized spec has the values.",
                "type": "object",
                "x-top-level-only": true,
            }),
        ),
        (
            "scales",
            json!({
                "description": "Other values for some of the `vars`, by scale name \
                                (`[scales.ci]`): the scale asked for (`--scale NAME`, Python \
                                `scale=`, Node `Workload.fromFile(path, { scale })`) applies its values \
                                over the defaults. A variable not declared in `vars` is an \
                                error.",
                "type": "object",
                "additionalProperties": { "type": "object" },
                "x-top-level-only": true,
            }),
        ),
    ];
    let names: Vec<&str> = raw.iter().map(|(key, _)| *key).collect();
    root.insert("x-read-before-serde".into(), names.into());
    if let Some(props) = root.get_mut("properties").and_then(Value::as_object_mut) {
        for (key, value) in raw {
            props.insert(key.into(), value);
        }
    }
    if let Some(defs) = root.get_mut("$defs").and_then(Value::as_object_mut) {
        defs.insert("Phase".into(), Value::Object(phase));
    }
}

/// For a field whose default serde leaves out when writing: the schema gives the default
/// anyway (schemars leaves out a default that would not be written).
pub(crate) fn never_skipped<T>(_: &T) -> bool {
    false
}

/// [`Distribution`]: the derived tables with a `kind` (their parameters optional: the
/// deserializer defaults them), and a bare name, which takes the parameters' defaults.
pub(crate) fn named_or_table(schema: &mut Schema) {
    let Some(forms) = schema.get_mut("oneOf").and_then(Value::as_array_mut) else {
        return;
    };
    let mut names = Vec::new();
    for form in forms.iter_mut() {
        if let Some(kind) = form.pointer("/properties/kind/const") {
            names.push(kind.clone());
        }
        if let Some(form) = form.as_object_mut() {
            form.insert("required".into(), json!(["kind"]));
        }
    }
    forms.insert(0, json!({ "type": "string", "enum": names }));
}

/// [`super::Requests`]: its unit variant is written `"all_keys"` (derived untagged, it would
/// be `null`).
pub(crate) fn all_keys(schema: &mut Schema) {
    let forms = schema.get_mut("anyOf").and_then(Value::as_array_mut);
    for form in forms.into_iter().flatten() {
        if let Some(form) = form.as_object_mut() {
            if form.get("type") == Some(&json!("null")) {
                form.remove("type");
                form.insert("const".into(), "all_keys".into());
            }
        }
    }
}

/// [`super::SpecDuration`]: seconds as a number, or text with a unit.
pub(crate) fn duration_forms(schema: &mut Schema) {
    schema.remove("type");
    schema.insert(
        "anyOf".into(),
        json!([
            { "type": "number", "minimum": 0, "maximum": 1e9 },
            { "type": "string", "pattern": DURATION_PATTERN }
        ]),
    );
}

/// [`super::Thresholds`]: the limits of [`LIMITS`], the same per command label, and the
/// settings.
pub(crate) fn threshold_keys(schema: &mut Schema) {
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
        json!({ "$ref": "#/$defs/SpecDuration" }),
    );
    schema.remove("required");
    schema.insert("type".into(), "object".into());
    schema.insert("properties".into(), Value::Object(properties));
    schema.insert("additionalProperties".into(), false.into());
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(node: &Value, at: &str) -> Vec<String> {
        let mut k: Vec<String> = node[at]
            .as_object()
            .map(|p| p.keys().cloned().collect())
            .or_else(|| {
                let list = node[at].as_array()?;
                Some(
                    list.iter()
                        .filter_map(Value::as_str)
                        .map(String::from)
                        .collect(),
                )
            })
            .unwrap_or_default();
        k.sort();
        k
    }

    #[test]
    fn every_table_of_the_spec_has_its_keys_in_declared_order() {
        let schema = json_schema();
        assert_eq!(schema["x-field-order"][0], "name");
        let mut root_keys = keys(&schema, "x-field-order");
        root_keys.extend(keys(&schema, "x-read-before-serde"));
        root_keys.sort();
        assert_eq!(keys(&schema, "properties"), root_keys);
        let mut checked = 0;
        for (name, def) in schema["$defs"].as_object().unwrap() {
            if def.get("x-field-order").is_none() {
                continue;
            }
            assert_eq!(
                keys(def, "properties"),
                keys(def, "x-field-order"),
                "{name}"
            );
            checked += 1;
        }
        // Target, Tls, Load, its two ramps, rate profile, share, reconnect and retry,
        // Keys, Values, CommandSpec, Observe and its StatsD, Event, Slo, Output, Replay and
        // its share.
        assert_eq!(checked, 19);
    }

    #[test]
    fn every_checked_range_is_in_the_schema() {
        let mut schema = json_schema();
        let root = schema.as_object_mut().unwrap();
        for &(path, lo, hi) in RANGES {
            let prop = property(root, path).unwrap_or_else(|| panic!("{path} not in the schema"));
            assert_eq!(prop["minimum"], lo, "{path}");
            if hi == u64::MAX {
                assert!(prop.get("maximum").is_none(), "{path}");
            } else {
                assert_eq!(prop["maximum"], hi, "{path}");
            }
        }
        let load = &schema["$defs"]["Load"]["properties"];
        assert_eq!(load["connections"]["maximum"], 1_000_000);
        assert_eq!(load["keepalive"]["default"], true);
    }

    #[test]
    fn hand_read_types_have_their_written_forms_and_variant_docs() {
        let schema = json_schema();
        let defs = &schema["$defs"];
        let distribution = defs["Distribution"]["oneOf"].as_array().unwrap();
        assert_eq!(distribution[0]["enum"][5], "hotset");
        assert_eq!(defs["Distribution"]["default"], "uniform");
        for form in &distribution[1..] {
            assert!(form["description"].is_string(), "{form}");
            assert_eq!(form["required"], json!(["kind"]));
        }
        let requests = defs["Requests"]["anyOf"].as_array().unwrap();
        assert_eq!(requests[1]["const"], "all_keys");
        assert!(requests[1]["description"].is_string());
        assert_eq!(defs["ValueSize"]["anyOf"].as_array().unwrap().len(), 3);
        assert_eq!(
            defs["SpecDuration"]["anyOf"][1]["pattern"],
            DURATION_PATTERN
        );
        let thresholds = &defs["Thresholds"]["properties"];
        assert!(LIMITS.iter().all(|l| thresholds.get(*l).is_some()));
        assert_eq!(defs[BUILTIN_NAMES]["enum"][0], "ping");
    }
}
