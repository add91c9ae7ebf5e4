//! JSON spec text read into a value, refusing a key given twice in one object: serde_json
//! keeps the last, so `{"load": {...}, "load": {...}}` silently lost the first table (TOML
//! refuses it).

use serde::de::{Deserialize, Deserializer, Error as _, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Number, Value};
use std::fmt;

/// A JSON value whose objects had no key twice.
pub struct Strict(pub Value);

impl<'de> Deserialize<'de> for Strict {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(StrictVisitor).map(Strict)
    }
}

struct StrictVisitor;

impl<'de> Visitor<'de> for StrictVisitor {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }

    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<Value, E> {
        Number::from_f64(v)
            .map(Value::Number)
            .ok_or_else(|| E::custom(format!("{v} is not a finite number")))
    }

    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_string()))
    }

    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::new();
        while let Some(Strict(v)) = seq.next_element()? {
            items.push(v);
        }
        Ok(Value::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut out = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            let Strict(v) = map.next_value()?;
            if out.insert(key.clone(), v).is_some() {
                return Err(A::Error::custom(format!(
                    "the key `{key}` is given twice in one object"
                )));
            }
        }
        Ok(Value::Object(out))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_given_twice_is_refused_and_the_rest_reads_as_serde_json_does() {
        let text = r#"{"load": {"requests": 10}, "load": {"connections": 3}}"#;
        let err = serde_json::from_str::<Strict>(text)
            .err()
            .unwrap()
            .to_string();
        assert!(err.contains("the key `load` is given twice"), "{err}");
        assert!(err.contains("line 1 column"), "{err}");
        let text = r#"{"a": [1, -2, 3.5, "x", null, true, {"b": {}}], "n": 18446744073709551615}"#;
        let Strict(v) = serde_json::from_str(text).unwrap();
        assert_eq!(v, serde_json::from_str::<Value>(text).unwrap());
        // The same key in different objects is fine.
        assert!(serde_json::from_str::<Strict>(r#"[{"a": 1}, {"a": 2}]"#).is_ok());
    }
}
