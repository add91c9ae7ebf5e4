//! Variables and scales: `[vars]` declares names with their (full-scale) values,
//! `[scales.NAME]` gives other values for some of them, and `"${name}"` anywhere in the spec
//! takes the value. One scenario file then runs at a published scale and at CI scale with the
//! same shape. Substitution happens on the raw value, before phases are merged and validated,
//! so every field keeps its usual checks and error paths.

use crate::{Error, Result};
use serde_json::{Map, Value as Json};

/// How to resolve a spec's `[vars]`: a scale to apply and single values to set.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SpecParams {
    /// A `[scales.NAME]` table to apply over the `[vars]` defaults.
    pub scale: Option<String>,
    /// Values for declared variables, applied after the scale (`--var name=value`).
    pub vars: Map<String, Json>,
}

impl SpecParams {
    /// From a scale name and the variables as JSON text of an object (the bindings' form).
    pub fn from_json_text(scale: Option<String>, vars: Option<&str>) -> Result<Self> {
        let vars = match vars.map(serde_json::from_str::<Json>) {
            None => Map::new(),
            Some(Ok(Json::Object(map))) => map,
            Some(Ok(other)) => {
                return Err(Error::spec(
                    "vars",
                    format!("{other}: expected a mapping of variable names to values"),
                ))
            }
            Some(Err(e)) => return Err(Error::spec("vars", e)),
        };
        Ok(SpecParams { scale, vars })
    }

    /// Nothing to apply: the `[vars]` defaults as written.
    pub fn is_empty(&self) -> bool {
        self.scale.is_none() && self.vars.is_empty()
    }
}

/// Take `vars` and `scales` out of `spec`, resolve the values `params` asks for, and
/// substitute every `${name}` in what remains.
pub(crate) fn apply(spec: &mut Json, params: &SpecParams) -> Result<()> {
    let Json::Object(top) = spec else {
        return Ok(());
    };
    let mut vars = match top.remove("vars") {
        None => Map::new(),
        Some(Json::Object(v)) => v,
        Some(other) => {
            return Err(Error::spec(
                "vars",
                format!("{other}: expected a table of variable names and values"),
            ))
        }
    };
    let scales = match top.remove("scales") {
        None => Map::new(),
        Some(Json::Object(s)) => s,
        Some(other) => {
            return Err(Error::spec(
                "scales",
                format!("{other}: expected a table of scale tables ([scales.ci] ...)"),
            ))
        }
    };
    for (name, scale) in &scales {
        let Json::Object(values) = scale else {
            return Err(Error::spec(
                format!("scales.{name}"),
                format!("{scale}: expected a table of variable values"),
            ));
        };
        for var in values.keys() {
            if !vars.contains_key(var) {
                return Err(Error::spec(
                    format!("scales.{name}.{var}"),
                    format!("`{var}` is not declared in [vars]: {}", declared(&vars)),
                ));
            }
        }
    }
    if let Some(name) = &params.scale {
        let Some(Json::Object(values)) = scales.get(name) else {
            let known: Vec<&str> = scales.keys().map(String::as_str).collect();
            let known = if known.is_empty() {
                "the spec defines none".to_string()
            } else {
                format!("defined: {}", known.join(", "))
            };
            return Err(Error::spec("scale", format!("no scale `{name}`: {known}")));
        };
        for (var, value) in values {
            vars.insert(var.clone(), value.clone());
        }
    }
    for (var, value) in &params.vars {
        if !vars.contains_key(var) {
            return Err(Error::spec(
                format!("vars.{var}"),
                format!(
                    "`{var}` is not declared in the spec's [vars]: {}",
                    declared(&vars)
                ),
            ));
        }
        vars.insert(var.clone(), value.clone());
    }
    for (key, value) in top.iter_mut() {
        substitute(value, key, &vars)?;
    }
    Ok(())
}

/// Every `${` in the values of `spec` written `$${`, so that substituting reads them back as
/// they are.
pub(crate) fn escape(spec: &mut Json) {
    match spec {
        Json::String(text) if text.contains("${") => *text = text.replace("${", "$${"),
        Json::Array(items) => items.iter_mut().for_each(escape),
        Json::Object(fields) => fields.values_mut().for_each(escape),
        _ => {}
    }
}

fn declared(vars: &Map<String, Json>) -> String {
    if vars.is_empty() {
        "it declares none".to_string()
    } else {
        let names: Vec<&str> = vars.keys().map(String::as_str).collect();
        format!("declared are {}", names.join(", "))
    }
}

fn substitute(value: &mut Json, path: &str, vars: &Map<String, Json>) -> Result<()> {
    match value {
        Json::String(text) if text.contains('$') => {
            if let Some(whole) = whole_reference(text) {
                *value = lookup(whole, path, vars)?.clone();
            } else {
                *text = interpolate(text, path, vars)?;
            }
        }
        Json::Array(items) => {
            for (i, item) in items.iter_mut().enumerate() {
                substitute(item, &format!("{path}[{i}]"), vars)?;
            }
        }
        Json::Object(fields) => {
            for (key, item) in fields.iter_mut() {
                substitute(item, &format!("{path}.{key}"), vars)?;
            }
        }
        _ => {}
    }
    Ok(())
}

/// `name` when `text` is exactly `${name}`: the value replaces the string, type and all.
fn whole_reference(text: &str) -> Option<&str> {
    let name = text.strip_prefix("${")?.strip_suffix('}')?;
    (!name.is_empty() && !name.contains(['{', '}', '$'])).then_some(name)
}

fn lookup<'a>(name: &str, path: &str, vars: &'a Map<String, Json>) -> Result<&'a Json> {
    vars.get(name).ok_or_else(|| {
        // Only a name is quoted: text that is none may be a URL with its password (found by
        // fuzz/fuzz_targets/url.rs). The path names the field.
        let what = if looks_like_a_name(name) {
            format!("unknown variable `${{{name}}}`")
        } else {
            "`${` followed by text that is not a variable name".to_string()
        };
        Error::spec(
            path,
            format!(
                "{what}: {} (write `$${{` for a literal `${{`)",
                declared(vars)
            ),
        )
    })
}

/// Whether `name` reads as a variable's name (letters, digits, `_`, `-`, `.`; at most 64).
fn looks_like_a_name(name: &str) -> bool {
    name.len() <= 64
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
}

fn interpolate(text: &str, path: &str, vars: &Map<String, Json>) -> Result<String> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find('$') {
        out.push_str(&rest[..at]);
        let tail = &rest[at..];
        if let Some(after) = tail.strip_prefix("$${") {
            out.push_str("${");
            rest = after;
        } else if let Some(after) = tail.strip_prefix("${") {
            let Some(end) = after.find('}') else {
                // The value is not quoted: any field may hold a secret (a URL, a password;
                // found by fuzz/fuzz_targets/url.rs). The path names the field.
                return Err(Error::spec(
                    path,
                    "has `${` without its closing `}`: close it, or write `$${` for a \
                     literal `${`",
                ));
            };
            let name = &after[..end];
            match lookup(name, path, vars)? {
                Json::String(s) => out.push_str(s),
                Json::Number(n) => out.push_str(&n.to_string()),
                Json::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
                other => {
                    return Err(Error::spec(
                        path,
                        format!(
                            "`${{{name}}}` is {other}: a table or list variable can only be a \
                             whole value (\"${{{name}}}\" alone)"
                        ),
                    ))
                }
            }
            rest = &after[end + 1..];
        } else {
            out.push('$');
            rest = &tail[1..];
        }
    }
    out.push_str(rest);
    Ok(out)
}

/// Expand phases that say `repeat = N` into N copies named `NAME #1` ... `NAME #N`.
/// Returns each copy with the index of the phase as written (for error paths).
pub(crate) fn expand_repeats(phases: Vec<Json>, has_phases: bool) -> Result<Vec<(usize, Json)>> {
    let mut out = Vec::with_capacity(phases.len());
    for (i, mut phase) in phases.into_iter().enumerate() {
        let repeat = match &mut phase {
            Json::Object(fields) => fields.remove("repeat"),
            _ => None,
        };
        let Some(repeat) = repeat else {
            out.push((i, phase));
            continue;
        };
        let path = if has_phases {
            format!("phases[{i}].repeat")
        } else {
            "repeat".to_string()
        };
        let n = repeat
            .as_u64()
            .filter(|n| (1..=MAX_REPEAT).contains(n))
            .ok_or_else(|| {
                Error::spec(
                    &path,
                    format!("{repeat}: allowed is a whole number from 1 to {MAX_REPEAT}"),
                )
            })?;
        let name = phase
            .get("name")
            .and_then(Json::as_str)
            .unwrap_or("main")
            .to_string();
        if out.len() as u64 + n > MAX_PHASES as u64 {
            return Err(too_many_phases(out.len() as u64 + n, &path));
        }
        for k in 1..=n {
            let mut copy = phase.clone();
            if let Json::Object(fields) = &mut copy {
                fields.insert("name".into(), Json::String(format!("{name} #{k}")));
            }
            out.push((i, copy));
        }
    }
    if out.len() > MAX_PHASES {
        return Err(too_many_phases(out.len() as u64, "phases"));
    }
    Ok(out)
}

/// The most copies one `repeat` makes.
pub const MAX_REPEAT: u64 = 100;

/// The most phases a workload may have, `repeat`s expanded: each is a whole copy of the spec
/// to check and keep, so memory grows with their number (docs/performance.md, "Limits").
pub const MAX_PHASES: usize = 1000;

/// The error for a workload of `n` phases; `path` says where the count was reached.
pub(crate) fn too_many_phases(n: u64, path: &str) -> Error {
    Error::spec(
        path,
        format!(
            "makes {n} phases: allowed are at most {MAX_PHASES} (with `repeat` expanded); \
             split the run into several, or use a longer phase"
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn params(scale: Option<&str>, vars: Json) -> SpecParams {
        SpecParams {
            scale: scale.map(str::to_string),
            vars: vars.as_object().cloned().unwrap_or_default(),
        }
    }

    fn spec() -> Json {
        json!({
            "vars": { "keys": 1000, "url": "redis://127.0.0.1:6379", "tls": {}, "time": "60s" },
            "scales": { "ci": { "keys": 10, "time": "1s" } },
            "target": { "url": "${url}", "tls": "${tls}" },
            "keys": { "range": [0, "${keys}"], "prefix": "k${keys}:$${lit}" },
            "phases": [{ "load": { "duration": "${time}" } }]
        })
    }

    #[test]
    fn whole_references_keep_their_type_and_text_ones_interpolate() {
        let mut s = spec();
        apply(&mut s, &SpecParams::default()).unwrap();
        assert_eq!(s["keys"]["range"], json!([0, 1000]));
        assert_eq!(s["keys"]["prefix"], json!("k1000:${lit}"));
        assert_eq!(s["target"]["tls"], json!({}));
        assert_eq!(s["phases"][0]["load"]["duration"], json!("60s"));
        assert!(s.get("vars").is_none() && s.get("scales").is_none());
    }

    #[test]
    fn a_literal_dollar_brace_reads_back_from_the_normalized_spec() {
        // Found by fuzz/fuzz_targets/spec.rs: a phase named `persistence $${off` read back
        // from `to_json_value` as an unclosed `${`.
        let text = r#"
            name = "persistence $${off (config)"
            [keys]
            prefix = "k$$$${x}:$$y:"
        "#;
        let w = crate::Workload::from_toml_str(text).unwrap();
        assert_eq!(w.phases[0].spec.name, "persistence ${off (config)");
        let again = crate::Workload::from_json_value(w.to_json_value()).unwrap();
        assert_eq!(again.to_json_value(), w.to_json_value());
        assert_eq!(again.phases[0].spec.name, "persistence ${off (config)");
        assert_eq!(
            again.phases[0].spec.keys.prefix,
            w.phases[0].spec.keys.prefix
        );
    }

    #[test]
    fn an_unknown_reference_is_quoted_only_when_it_is_a_name() {
        let vars = Map::new();
        let e = interpolate("x${tier}y", "target.url", &vars)
            .unwrap_err()
            .to_string();
        assert!(e.contains("unknown variable `${tier}`"), "{e}");
        // Found by fuzz/fuzz_targets/url.rs: the whole reference, a URL with its password.
        let url = "${rediss://u:hunter2@cache:1}";
        let e = interpolate(url, "target.url", &vars)
            .unwrap_err()
            .to_string();
        assert!(e.contains("target.url") && !e.contains("hunter2"), "{e}");
        assert!(e.contains("not a variable name"), "{e}");
    }

    #[test]
    fn an_unclosed_reference_never_quotes_the_value() {
        // Found by fuzz/fuzz_targets/url.rs: the error quoted the whole URL. A password
        // field is a secret too.
        let url = "rediss://appS:ecretpw12@cache.exa${leX6380/2";
        for (spec, field) in [
            (json!({ "target": { "url": url } }), "target.url"),
            (
                json!({ "target": { "password": "ecretpw12${x" } }),
                "target.password",
            ),
        ] {
            let e = crate::Workload::from_json_value(spec)
                .unwrap_err()
                .to_string();
            assert!(!e.contains("ecretpw12"), "{e}");
            assert!(e.contains(field) && e.contains("closing"), "{e}");
        }
    }

    #[test]
    fn a_scale_then_single_values_apply_over_the_defaults() {
        let mut s = spec();
        apply(&mut s, &params(Some("ci"), json!({ "time": "2s" }))).unwrap();
        assert_eq!(s["keys"]["range"], json!([0, 10]));
        assert_eq!(s["phases"][0]["load"]["duration"], json!("2s"));
    }

    #[test]
    fn unknown_names_are_errors_naming_where_and_what_is_declared() {
        let err = |s: &mut Json, p: &SpecParams| match apply(s, p) {
            Err(Error::Spec { path, reason }) => (path, reason),
            other => panic!("expected a spec error, got {other:?}"),
        };
        let mut s = spec();
        s["load"] = json!({ "requests": "${nope}" });
        let (path, message) = err(&mut s, &SpecParams::default());
        assert_eq!(path, "load.requests");
        assert!(message.contains("`${nope}`"), "{message}");
        assert!(["keys", "url", "tls", "time"]
            .iter()
            .all(|v| message.contains(v)));

        let (path, message) = err(&mut spec(), &params(Some("full"), json!({})));
        assert_eq!(path, "scale");
        assert!(message.contains("defined: ci"), "{message}");

        let (path, _) = err(&mut spec(), &params(None, json!({ "kyes": 1 })));
        assert_eq!(path, "vars.kyes");

        let mut s = spec();
        s["scales"]["ci"]["other"] = json!(1);
        assert_eq!(err(&mut s, &SpecParams::default()).0, "scales.ci.other");

        let mut s = spec();
        s["target"]["url"] = json!("redis://${tls}");
        assert!(err(&mut s, &SpecParams::default())
            .1
            .contains("whole value"));
    }

    #[test]
    fn repeat_makes_numbered_copies() {
        let phases = vec![
            json!({ "name": "run", "repeat": 3 }),
            json!({ "name": "x" }),
        ];
        let out = expand_repeats(phases, true).unwrap();
        let names: Vec<_> = out.iter().map(|(i, p)| (*i, p["name"].clone())).collect();
        assert_eq!(
            names,
            vec![
                (0, json!("run #1")),
                (0, json!("run #2")),
                (0, json!("run #3")),
                (1, json!("x"))
            ]
        );
        assert!(out.iter().all(|(_, p)| p.get("repeat").is_none()));
        match expand_repeats(vec![json!({ "repeat": 0 })], true) {
            Err(Error::Spec { path, .. }) => assert_eq!(path, "phases[0].repeat"),
            other => panic!("{other:?}"),
        }
    }
}
