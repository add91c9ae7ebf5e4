//! Durations in specs: `"60s"`, `"500ms"`, `"2m"`, `"1h"`, or a bare number of seconds.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::time::Duration;

/// A duration as written in a spec: a number with a unit (`"60s"`, `"500ms"`, `"1.5s"`, `"2m"`,
/// `"1h"`; units us, ms, s, m, h) or a bare number of seconds. Serializes back to a human
/// string (`"1500ms"`, `"60s"`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default)]
#[cfg_attr(
    feature = "schema",
    derive(schemars::JsonSchema),
    schemars(transform = super::schema::duration_forms)
)]
pub struct SpecDuration(#[cfg_attr(feature = "schema", schemars(with = "String"))] pub Duration);

impl SpecDuration {
    /// Parse `"250ms"`, `"1.5s"`, `"2m"`, `"1h"`, `"30"` (seconds).
    pub fn parse(text: &str) -> Result<Self, String> {
        let t = text.trim();
        let split = t
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(t.len());
        let (num, unit) = t.split_at(split);
        let value: f64 = num.parse().map_err(|_| {
            format!("`{text}` is not a duration: use a number with a unit, e.g. \"500ms\", \"10s\", \"2m\", \"1h\"")
        })?;
        let scale = match unit.trim() {
            "" | "s" => 1.0,
            "ms" => 1e-3,
            "us" | "µs" => 1e-6,
            "m" | "min" => 60.0,
            "h" => 3600.0,
            other => {
                return Err(format!(
                    "`{text}` has unknown unit `{other}`: allowed units are us, ms, s, m, h"
                ))
            }
        };
        Self::from_secs(value * scale).map_err(|e| format!("`{text}`: {e}"))
    }

    fn from_secs(secs: f64) -> Result<Self, String> {
        if !secs.is_finite() || !(0.0..=1e9).contains(&secs) {
            return Err("a duration must be between 0 and 1e9 seconds".into());
        }
        Ok(SpecDuration(Duration::from_secs_f64(secs)))
    }
}

impl Serialize for SpecDuration {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let nanos = self.0.as_nanos();
        let text = if nanos % 1_000_000_000 == 0 {
            format!("{}s", nanos / 1_000_000_000)
        } else if nanos % 1_000_000 == 0 {
            format!("{}ms", nanos / 1_000_000)
        } else {
            format!("{}us", nanos / 1_000)
        };
        s.serialize_str(&text)
    }
}

impl<'de> Deserialize<'de> for SpecDuration {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            Num(f64),
            Text(String),
        }
        match Raw::deserialize(d).map_err(|_| {
            serde::de::Error::custom(
                "expected a duration: a number of seconds or a string such as \"500ms\", \"10s\", \"2m\"",
            )
        })? {
            Raw::Num(n) => SpecDuration::from_secs(n).map_err(serde::de::Error::custom),
            Raw::Text(t) => SpecDuration::parse(&t).map_err(serde::de::Error::custom),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_units_and_round_trips() {
        assert_eq!(
            SpecDuration::parse("500ms").unwrap().0,
            Duration::from_millis(500)
        );
        assert_eq!(
            SpecDuration::parse("1.5s").unwrap().0,
            Duration::from_millis(1500)
        );
        assert_eq!(
            SpecDuration::parse("2m").unwrap().0,
            Duration::from_secs(120)
        );
        assert_eq!(
            SpecDuration::parse("30").unwrap().0,
            Duration::from_secs(30)
        );
        assert!(SpecDuration::parse("fast").is_err());
        assert!(SpecDuration::parse("3 weeks").is_err());
        let json = serde_json::to_string(&SpecDuration(Duration::from_millis(1500))).unwrap();
        assert_eq!(json, "\"1500ms\"");
    }
}
