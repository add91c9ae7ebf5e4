//! The names the Python and Node bindings share with the core, as one JSON document
//! (`respload schema bindings`): the error kinds with their codes, classes and fields, the
//! limit names (of a budget, `check()`, `--check`, `[thresholds]`, and of a comparison,
//! `compare --fail-on`, `Comparison.check()`) and the comparison's types. scripts/gen_reference.py generates each binding's error
//! classes, limit names and comparison types from it, so none of them is kept by hand.

use super::check::{is_floor, Limits, LIMITS};
use super::compare::{Comparison, ComparisonRow};
use super::schema::field_order;
use crate::error::{ErrorFieldType, ErrorKind};
use serde_json::{json, Value};

/// The document: `errors` (each kind's `kind`, `class`, `code`, `doc`, `parent` and `fields`,
/// each field's `name`, `type` (`string`, or `errno`: an integer or absent) and `doc`), `limits`
/// (each limit's `name`, `doc`, and `bound`: `max` or `min`; the names of `check()`,
/// `--check`, `[thresholds]`, `compare --fail-on`, `Comparison.check()` and a comparison's
/// rows) and `comparison` (the JSON Schema
/// of [`Comparison`], [`ComparisonRow`] among its `$defs`, each with its `x-field-order`).
pub fn bindings_schema() -> Value {
    let kinds = schemars::schema_for!(ErrorKind).to_value();
    let errors: Vec<Value> = ErrorKind::ALL
        .iter()
        .map(|kind| {
            let fields: Vec<Value> = kind
                .fields()
                .iter()
                .map(|f| {
                    let ty = match f.ty {
                        ErrorFieldType::Text => "string",
                        ErrorFieldType::Errno => "errno",
                    };
                    json!({ "name": f.name, "type": ty, "doc": f.doc })
                })
                .collect();
            json!({
                "kind": format!("{kind:?}"),
                "class": kind.class_name(),
                "code": kind.code(),
                "doc": variant_doc(&kinds, &format!("{kind:?}")),
                "parent": kind.parent().map(ErrorKind::class_name),
                "fields": fields,
            })
        })
        .collect();
    let limit_schema = schemars::schema_for!(Limits).to_value();
    let limits: Vec<Value> = LIMITS
        .iter()
        .map(|name| {
            let doc = limit_schema["properties"][*name]["description"].clone();
            let bound = if is_floor(name) { "min" } else { "max" };
            json!({ "name": name, "doc": doc, "bound": bound })
        })
        .collect();
    let mut comparison = schemars::generate::SchemaSettings::draft2020_12()
        .for_serialize()
        .into_generator()
        .into_root_schema_for::<Comparison>()
        .to_value();
    comparison["x-field-order"] = json!(field_order::<Comparison>());
    comparison["$defs"]["ComparisonRow"]["x-field-order"] = json!(field_order::<ComparisonRow>());
    json!({
        "errors": errors,
        "limits": limits,
        "comparison": comparison,
    })
}

/// The doc comment of the unit variant `name` in a fieldless enum's schema.
fn variant_doc(schema: &Value, name: &str) -> Value {
    let forms = schema["oneOf"].as_array().into_iter().flatten();
    forms
        .filter(|f| f["const"] == name || f["enum"][0] == name)
        .map(|f| f["description"].clone())
        .next()
        .unwrap_or(Value::Null)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_limit_and_metric_is_named_and_documented() {
        let doc = bindings_schema();
        let errors = doc["errors"].as_array().unwrap();
        assert_eq!(errors.len(), ErrorKind::ALL.len());
        for e in errors {
            assert!(e["doc"].as_str().is_some_and(|d| !d.is_empty()), "{e}");
        }
        assert_eq!(errors[2]["class"], "TlsError");
        assert_eq!(errors[2]["parent"], "ConnectError");
        assert_eq!(errors[0]["fields"][0]["name"], "path");
        let limits = doc["limits"].as_array().unwrap();
        assert_eq!(limits.len(), LIMITS.len());
        for l in limits {
            assert!(l["doc"].as_str().is_some_and(|d| !d.is_empty()), "{l}");
        }
        assert_eq!(limits[2]["name"], "p99_ms");
        assert_eq!(limits[2]["bound"], "max");
        assert_eq!(limits[6]["name"], "ops_per_sec");
        assert_eq!(limits[6]["bound"], "min");
        let order = &doc["comparison"]["$defs"]["ComparisonRow"]["x-field-order"];
        assert_eq!(order[0], "phase");
        assert_eq!(doc["comparison"]["x-field-order"][0], "labels");
    }
}
