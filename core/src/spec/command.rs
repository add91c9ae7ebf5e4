//! The command mix: `[[commands]]`, built-in commands and templates, compiled to argument lists.

use serde::{Deserialize, Serialize};

/// One entry of the weighted command mix (`[[commands]]` in a spec): a built-in `name`
/// or a `template`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct CommandSpec {
    /// A built-in command (see [`BUILTINS`]), case-insensitive.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Any command as words separated by spaces; the words `{key}`, `{value}` and
    /// `{rand:LO..HI}` are replaced per request (each as one whole argument).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub template: Option<String>,
    /// Name in the report (default: the built-in's name, or the template's first word),
    /// upper-cased.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// Relative share of requests (default 1).
    #[serde(default = "default_weight")]
    pub weight: u32,
}

fn default_weight() -> u32 {
    1
}

impl CommandSpec {
    /// A built-in command with weight 1.
    pub fn builtin(name: &str) -> Self {
        CommandSpec {
            name: Some(name.into()),
            template: None,
            label: None,
            weight: 1,
        }
    }
}

/// One argument of a compiled command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Arg {
    /// Fixed bytes.
    Lit(Box<[u8]>),
    /// The request's key: prefix + number.
    Key,
    /// Another key number drawn for this argument (MSET/MGET), with the key prefix.
    FreshKey,
    /// The request's key number behind another prefix (`counter:N`, `element:N`).
    KeyNum(Box<[u8]>),
    /// A value from `[values]`.
    Value,
    /// A uniform random integer in `lo..=hi`.
    Rand(i64, i64),
}

/// A command ready for the generator.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Compiled {
    /// Name in the report (upper case).
    pub label: String,
    /// Arguments, the command name first.
    pub args: Vec<Arg>,
    /// Whether replies count as hits (a value) or misses (nil / empty).
    pub reads: bool,
    /// Relative share.
    pub weight: u32,
}

/// The built-in commands, as redis-benchmark's `-t` tests define them.
pub const BUILTINS: &[&str] = &[
    "ping",
    "get",
    "set",
    "incr",
    "lpush",
    "rpush",
    "lpop",
    "rpop",
    "sadd",
    "spop",
    "hset",
    "zadd",
    "zpopmin",
    "lrange_100",
    "lrange_300",
    "lrange_500",
    "lrange_600",
    "mset",
    "mget",
];

/// Commands whose replies are counted as hits or misses when used in a template.
const READ_COMMANDS: &[&str] = &[
    "GET",
    "MGET",
    "GETEX",
    "GETDEL",
    "GETRANGE",
    "HGET",
    "HMGET",
    "HGETALL",
    "LRANGE",
    "LINDEX",
    "LPOP",
    "RPOP",
    "SPOP",
    "SMEMBERS",
    "SRANDMEMBER",
    "ZRANGE",
    "ZSCORE",
    "ZPOPMIN",
    "ZPOPMAX",
    "JSON.GET",
    "XRANGE",
];

fn lit(s: &str) -> Arg {
    Arg::Lit(s.as_bytes().into())
}

fn builtin(name: &str) -> Option<(Vec<Arg>, bool)> {
    let element = || Arg::KeyNum(b"element:"[..].into());
    let lrange = |n: u32| {
        Some((
            vec![
                lit("LRANGE"),
                lit("mylist"),
                lit("0"),
                lit(&(n - 1).to_string()),
            ],
            true,
        ))
    };
    match name {
        "ping" => Some((vec![lit("PING")], false)),
        "get" => Some((vec![lit("GET"), Arg::Key], true)),
        "set" => Some((vec![lit("SET"), Arg::Key, Arg::Value], false)),
        "incr" => Some((
            vec![lit("INCR"), Arg::KeyNum(b"counter:"[..].into())],
            false,
        )),
        "lpush" => Some((vec![lit("LPUSH"), lit("mylist"), Arg::Value], false)),
        "rpush" => Some((vec![lit("RPUSH"), lit("mylist"), Arg::Value], false)),
        "lpop" => Some((vec![lit("LPOP"), lit("mylist")], true)),
        "rpop" => Some((vec![lit("RPOP"), lit("mylist")], true)),
        "sadd" => Some((vec![lit("SADD"), lit("myset"), element()], false)),
        "spop" => Some((vec![lit("SPOP"), lit("myset")], true)),
        "hset" => Some((
            vec![lit("HSET"), lit("myhash"), element(), Arg::Value],
            false,
        )),
        "zadd" => Some((
            vec![
                lit("ZADD"),
                lit("myzset"),
                Arg::Rand(0, 1_000_000),
                element(),
            ],
            false,
        )),
        "zpopmin" => Some((vec![lit("ZPOPMIN"), lit("myzset")], true)),
        "lrange_100" => lrange(100),
        "lrange_300" => lrange(300),
        "lrange_500" => lrange(500),
        "lrange_600" => lrange(600),
        "mset" => {
            let mut args = vec![lit("MSET"), Arg::Key, Arg::Value];
            for _ in 0..9 {
                args.extend([Arg::FreshKey, Arg::Value]);
            }
            Some((args, false))
        }
        "mget" => {
            let mut args = vec![lit("MGET"), Arg::Key];
            args.extend(std::iter::repeat_n(Arg::FreshKey, 9));
            Some((args, true))
        }
        _ => None,
    }
}

/// Parse a template into arguments; errors name what is wrong.
pub fn parse_template(template: &str) -> Result<Vec<Arg>, String> {
    let mut args = Vec::new();
    for word in template.split_ascii_whitespace() {
        let arg = match word {
            "{key}" => Arg::Key,
            "{value}" => Arg::Value,
            w if w.starts_with("{rand:") && w.ends_with('}') => {
                let inner = &w[6..w.len() - 1];
                let (lo, hi) = inner
                    .split_once("..")
                    .and_then(|(a, b)| Some((a.parse::<i64>().ok()?, b.parse::<i64>().ok()?)))
                    .ok_or_else(|| {
                        format!("`{w}` is not a valid placeholder: write {{rand:LO..HI}} with integers, e.g. {{rand:1..100}}")
                    })?;
                if lo > hi {
                    return Err(format!("`{w}`: LO must not exceed HI"));
                }
                Arg::Rand(lo, hi)
            }
            w if w.starts_with('{')
                && w.ends_with('}')
                && w.len() > 2
                && !w[1..w.len() - 1].contains(['{', '}', ':']) =>
            {
                return Err(format!(
                    "unknown placeholder `{w}`: allowed are {{key}}, {{value}}, {{rand:LO..HI}}"
                ));
            }
            w => Arg::Lit(w.as_bytes().into()),
        };
        args.push(arg);
    }
    match args.first() {
        None => Err("is empty: give a command, e.g. \"GET {key}\"".into()),
        Some(Arg::Lit(_)) => Ok(args),
        Some(_) => Err("must start with a command name, not a placeholder".into()),
    }
}

impl CommandSpec {
    /// Validate and compile; `path` is this entry's field path, e.g. `commands[0]`.
    pub fn compile(&self, path: &str) -> crate::Result<Compiled> {
        let (args, reads, default_label) = match (&self.name, &self.template) {
            (Some(name), None) => {
                let lower = name.to_ascii_lowercase();
                let (args, reads) = builtin(&lower).ok_or_else(|| {
                    crate::Error::spec(
                        format!("{path}.name"),
                        format!(
                            "unknown built-in command `{name}`: allowed are {} (or use `template`)",
                            BUILTINS.join(", ")
                        ),
                    )
                })?;
                (args, reads, lower.to_ascii_uppercase())
            }
            (None, Some(t)) => {
                let args = parse_template(t).map_err(|m| {
                    crate::Error::spec(format!("{path}.template"), format!("`{t}` {m}"))
                })?;
                let first = match &args[0] {
                    Arg::Lit(b) => String::from_utf8_lossy(b).to_ascii_uppercase(),
                    _ => unreachable!("parse_template checks the first word"),
                };
                let reads = READ_COMMANDS.contains(&first.as_str());
                (args, reads, first)
            }
            _ => {
                return Err(crate::Error::spec(
                    path.to_string(),
                    "give exactly one of `name` (a built-in command) or `template`",
                ))
            }
        };
        if self.weight == 0 || self.weight > 1_000_000 {
            return Err(crate::Error::spec(
                format!("{path}.weight"),
                format!("{} is out of range: allowed is 1 to 1000000", self.weight),
            ));
        }
        let label = self
            .label
            .as_deref()
            .map(str::to_ascii_uppercase)
            .unwrap_or(default_label);
        Ok(Compiled {
            label,
            args,
            reads,
            weight: self.weight,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn templates_parse_into_whole_arguments() {
        let args = parse_template("SET {key} {value} EX {rand:10..60}").unwrap();
        assert_eq!(
            args,
            vec![
                lit("SET"),
                Arg::Key,
                Arg::Value,
                lit("EX"),
                Arg::Rand(10, 60)
            ]
        );
        // Hash tags and JSON paths are literal text, not placeholders.
        assert_eq!(
            parse_template("GET {user1}:x").unwrap()[1],
            lit("{user1}:x")
        );
        assert!(parse_template("GET {nope}")
            .unwrap_err()
            .contains("unknown placeholder"));
        assert!(parse_template("GET {rand:9..1}").is_err());
        assert!(parse_template("  ").is_err());
        assert!(parse_template("{key} GET").is_err());
    }

    #[test]
    fn every_builtin_compiles() {
        for name in BUILTINS {
            let c = CommandSpec::builtin(name).compile("commands[0]").unwrap();
            assert_eq!(c.label, name.to_ascii_uppercase());
        }
        let err = CommandSpec::builtin("fly")
            .compile("commands[2]")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("commands[2].name") && err.contains("fly") && err.contains("lrange_100"),
            "{err}"
        );
    }
}
