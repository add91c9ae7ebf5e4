//! The report's JSON Schema, derived from its Rust types (schemars): what
//! `respload schema report` prints, and what the reference page and the Python and Node report
//! types are generated from (scripts/gen_reference.py), so none of them can drift from the code.

use super::{
    Availability, ClientStats, EventReport, HostReport, HostRow, IntervalLatency, Latency,
    NodeServer, PhaseReport, PrefillReport, RampStep, ReplayFidelity, Report, ServerFacts,
    ServerLoad, ServerSample, ShardOf, SloPoint, SloResult, Snapshot, Stats, Threshold,
    TimelineRow, Unsent, Validity, ValidityCheck, SCHEMA_VERSION,
};
use serde::de::{self, Deserialize, Visitor};
use serde_json::Value;
use std::cell::Cell;

/// The JSON Schema (draft 2020-12) of the report as respload writes it (`--json`,
/// `Report::to_json`), with the live snapshot of a progress callback (`Snapshot`) among its
/// `$defs`: each type's doc comments as descriptions; a key left out of `required` when it is
/// written only when set. Beside the standard keywords, `x-schema-version` holds
/// [`SCHEMA_VERSION`] and each struct's `x-field-order` its keys in the order the Rust type
/// declares them (JSON Schema's `properties` are unordered).
pub fn json_schema() -> Value {
    let mut generator = schemars::generate::SchemaSettings::draft2020_12()
        .for_serialize()
        .into_generator();
    // Referenced from nothing in the report, so added by hand.
    generator.subschema_for::<Snapshot>();
    let mut schema = generator.into_root_schema_for::<Report>().to_value();
    let orders = field_orders();
    let order_of = |name: &str| orders.iter().find(|(n, _)| *n == name).map(|(_, f)| *f);
    if let Some(root) = schema.as_object_mut() {
        root.insert("x-schema-version".into(), SCHEMA_VERSION.into());
        if let Some(fields) = order_of("Report") {
            root.insert("x-field-order".into(), fields.into());
        }
        let defs = root.get_mut("$defs").and_then(Value::as_object_mut);
        for (name, def) in defs.into_iter().flatten() {
            if let (Some(fields), Some(def)) = (order_of(name), def.as_object_mut()) {
                def.insert("x-field-order".into(), fields.into());
            }
        }
    }
    schema
}

/// Every report struct's name and fields in declaration order. A struct with a flattened
/// field (`Snapshot`) has none: serde reads it as a map.
fn field_orders() -> Vec<(&'static str, &'static [&'static str])> {
    macro_rules! orders {
        ($($t:ident),* $(,)?) => {
            [$((stringify!($t), field_order::<$t>())),*]
                .into_iter()
                .filter_map(|(name, fields)| Some((name, fields?)))
                .collect()
        };
    }
    orders!(
        Report,
        Stats,
        Latency,
        TimelineRow,
        IntervalLatency,
        ClientStats,
        ServerFacts,
        ServerSample,
        ServerLoad,
        Availability,
        NodeServer,
        PhaseReport,
        ReplayFidelity,
        PrefillReport,
        EventReport,
        RampStep,
        SloResult,
        SloPoint,
        Unsent,
        Validity,
        ValidityCheck,
        ShardOf,
        HostReport,
        HostRow,
        Threshold,
        Snapshot,
    )
}

/// The field names serde's derived `Deserialize` of `T` gives `deserialize_struct`: the
/// struct's fields as declared.
pub(crate) fn field_order<T: for<'de> Deserialize<'de>>() -> Option<&'static [&'static str]> {
    let seen = Cell::new(None);
    let _ = T::deserialize(Fields(&seen));
    seen.get()
}

/// A deserializer that only notes the field names it is asked for, and fails.
struct Fields<'a>(&'a Cell<Option<&'static [&'static str]>>);

impl<'de> de::Deserializer<'de> for Fields<'_> {
    type Error = de::value::Error;

    fn deserialize_any<V: Visitor<'de>>(self, _: V) -> Result<V::Value, Self::Error> {
        Err(de::Error::custom("only field names are read"))
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Self::Error> {
        self.0.set(Some(fields));
        self.deserialize_any(visitor)
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
        option unit unit_struct newtype_struct seq tuple tuple_struct map enum identifier
        ignored_any
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_struct_of_the_schema_has_its_keys_in_declared_order() {
        let schema = json_schema();
        let defs = schema["$defs"].as_object().unwrap();
        let keys = |def: &Value| -> Vec<String> {
            let mut k: Vec<String> = def["properties"]
                .as_object()
                .unwrap()
                .keys()
                .cloned()
                .collect();
            k.sort();
            k
        };
        let ordered = |def: &Value| -> Vec<String> {
            let mut k: Vec<String> = def["x-field-order"]
                .as_array()
                .unwrap_or_else(|| panic!("no x-field-order in {def}"))
                .iter()
                .map(|v| v.as_str().unwrap().to_owned())
                .collect();
            k.sort();
            k
        };
        assert_eq!(keys(&schema), ordered(&schema));
        assert_eq!(schema["x-field-order"][0], "schema_version");
        assert_eq!(schema["x-schema-version"], SCHEMA_VERSION);
        let mut checked = 0;
        for (name, def) in defs {
            if def.get("properties").is_none() || name == "Snapshot" {
                continue;
            }
            assert_eq!(keys(def), ordered(def), "{name}");
            checked += 1;
        }
        assert!(checked >= 20, "{checked}");
        // The live snapshot: its own keys and those of the timeline row it flattens.
        let snapshot = keys(&defs["Snapshot"]);
        assert!(snapshot.contains(&"phase".to_owned()) && snapshot.contains(&"ops".to_owned()));
    }
}
