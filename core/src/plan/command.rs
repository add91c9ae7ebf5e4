//! Commands compiled: a spec's `commands` (built-ins, templates, chains) checked and made
//! into what the generator sends ([`CompiledCommand`]), and the mix over them.

use crate::spec::{
    parse_template, Arg, CommandSpec, Distribution, Pick, Template, BUILTINS, READ_COMMANDS,
};
use std::sync::Arc;

/// A command ready for the generator: one per label in the report.
#[derive(Debug, Clone, PartialEq)]
pub struct CompiledCommand {
    /// Name in the report (upper case).
    pub label: String,
    /// Arguments, the command name first.
    pub args: Vec<Arg>,
    /// Whether replies count as hits (a value) or misses (nil / empty).
    pub reads: bool,
    /// Whether this is the built-in `set` (which gets `EX` when `values.expiry` is set).
    pub builtin_set: bool,
}

/// One pick of the mix: a command, or the steps of a chain, by index into the phase's
/// compiled commands.
#[derive(Debug, Clone, PartialEq)]
pub struct MixEntry {
    /// Relative share.
    pub weight: u32,
    /// CompiledCommand commands sent in order on one key; with `pick`, the commands its
    /// steps are reported under, each once.
    pub steps: Vec<usize>,
    /// The key distribution this entry uses (resolved from the command, `keys.reads` /
    /// `keys.writes`, or `keys.distribution`).
    pub distribution: Distribution,
    /// A chain with `pick`: one of these steps per pick. Shared, as a chain of a captured
    /// workload may have many steps and every connection reads them.
    pub pick: Option<Arc<PickedSteps>>,
    /// A template with `{cursor}`: its two steps are the walk's first request (cursor 0)
    /// and the next ones (the cursor the previous reply returned), one per pick; the most
    /// requests that follow a cursor in one walk (0: until the server returns 0).
    pub cursor: Option<u32>,
}

/// The steps of a chain with `pick`, one of which each pick sends.
#[derive(Debug, Clone, PartialEq)]
pub struct PickedSteps {
    /// How the step is chosen.
    pub order: Pick,
    /// Each step in chain order: the index of the command it is reported under (steps of
    /// one label share it) and its own arguments.
    pub steps: Vec<(usize, Vec<Arg>)>,
}

/// Reading commands that also write (pop, delete, touch the TTL): a replica refuses them,
/// so they always go to the primary.
const WRITING_READS: &[&str] = &[
    "GETEX", "GETDEL", "LPOP", "RPOP", "SPOP", "ZPOPMIN", "ZPOPMAX",
];

impl CompiledCommand {
    /// Whether a replica may serve it (`target.read_from`): a reading command that
    /// writes nothing.
    pub fn read_only(&self) -> bool {
        self.reads && !WRITING_READS.contains(&command_name(&self.args).as_str())
    }
}

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
                Arg::Rand(0, 1_000_000, 0),
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

/// The first word of a compiled command, upper-cased.
fn command_name(args: &[Arg]) -> String {
    match args.first() {
        Some(Arg::Lit(b)) => String::from_utf8_lossy(b).to_ascii_uppercase(),
        _ => String::new(),
    }
}

fn compile_template(t: &Template, path: &str) -> crate::Result<CompiledCommand> {
    let args = parse_template(t).map_err(|m| {
        // A long template is named by its start: the message stays readable.
        let mut shown = t.to_string();
        if let Some((cut, _)) = shown.char_indices().nth(80) {
            shown.truncate(cut);
            shown.push_str("...");
        }
        crate::Error::spec(path.to_string(), format!("`{shown}` {m}"))
    })?;
    let label = command_name(&args);
    Ok(CompiledCommand {
        reads: READ_COMMANDS.contains(&label.as_str()),
        label,
        args,
        builtin_set: false,
    })
}

impl CommandSpec {
    /// Validate and compile into one command, or a chain's steps; `path` is this entry's
    /// field path, e.g. `commands[0]`.
    pub fn compile(&self, path: &str) -> crate::Result<Vec<CompiledCommand>> {
        let mut steps = match (&self.name, &self.template, &self.chain) {
            (Some(name), None, None) => {
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
                vec![CompiledCommand {
                    label: lower.to_ascii_uppercase(),
                    args,
                    reads,
                    builtin_set: lower == "set",
                }]
            }
            (None, Some(t), None) => vec![compile_template(t, &format!("{path}.template"))?],
            (None, None, Some(chain)) => {
                if chain.is_empty() {
                    return Err(crate::Error::spec(
                        format!("{path}.chain"),
                        "is empty: give the templates to run in order, e.g. [\"SET {key} {value}\", \"GET {key}\"]",
                    ));
                }
                chain
                    .iter()
                    .enumerate()
                    .map(|(i, t)| compile_template(t, &format!("{path}.chain[{i}]")))
                    .collect::<crate::Result<Vec<_>>>()?
            }
            _ => {
                return Err(crate::Error::spec(
                    path.to_string(),
                    "give exactly one of `name` (a built-in command), `template` or `chain`",
                ))
            }
        };
        if let Some(cursor) = steps[0].args.iter().position(|a| *a == Arg::Cursor) {
            if self.chain.is_some() {
                return Err(crate::Error::spec(
                    format!("{path}.chain"),
                    "uses `{cursor}`, which a `template` alone may follow: give it as a template",
                ));
            }
            // The walk's first request sends 0; the next ones the cursor returned.
            let label = self
                .label
                .as_deref()
                .unwrap_or(&steps[0].label)
                .to_ascii_uppercase();
            let mut first = steps[0].clone();
            first.args[cursor] = Arg::Lit(b"0"[..].into());
            first.label = format!("{label} 0");
            steps[0].label = format!("{label} <cursor>");
            steps.insert(0, first);
        } else if self.max_iterations.is_some() {
            return Err(crate::Error::spec(
                format!("{path}.max_iterations"),
                "applies to a template that follows `{cursor}` only (e.g. \"SCAN {cursor}\")",
            ));
        }
        if self.pick.is_some() && self.chain.is_none() {
            return Err(crate::Error::spec(
                format!("{path}.pick"),
                "applies to a `chain` only: give the steps to pick from as `chain`",
            ));
        }
        if self.weight == 0 || self.weight > 1_000_000 {
            return Err(crate::Error::spec(
                format!("{path}.weight"),
                format!("{} is out of range: allowed is 1 to 1000000", self.weight),
            ));
        }
        if let (Some(label), None, 1) = (&self.label, &self.chain, steps.len()) {
            steps[0].label = label.to_ascii_uppercase();
        }
        if self.chain.is_some() && self.pick.is_some() {
            // One step per pick: steps of one command name are reported together (a chain
            // of a captured workload may hold thousands of SETs).
            if let Some(label) = &self.label {
                let label = label.to_ascii_uppercase();
                for s in &mut steps {
                    s.label = format!("{label}:{}", s.label);
                }
            }
        } else if self.chain.is_some() {
            // A command repeated within a chain gets its step number: `APPEND#3`.
            let names: Vec<String> = steps.iter().map(|s| s.label.clone()).collect();
            for (i, s) in steps.iter_mut().enumerate() {
                if names.iter().filter(|n| **n == s.label).count() > 1 {
                    s.label = format!("{}#{}", s.label, i + 1);
                }
                if let Some(label) = &self.label {
                    s.label = format!("{}:{}", label.to_ascii_uppercase(), s.label);
                }
            }
        }
        Ok(steps)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn picked_chains_group_steps_by_label_and_say_what_is_wrong() {
        let w = crate::plan::Workload::from_toml_str(
            "[[commands]]\nchain = ['SET a 1', 'GET a', 'set b 2']\npick = 'random'\n\
             [[commands]]\nchain = ['SET c 3']\npick = 'sequential'\nlabel = 'x'",
        )
        .unwrap();
        let p = &w.phases[0];
        let labels: Vec<_> = p.commands.iter().map(|c| c.label.as_str()).collect();
        assert_eq!(labels, ["SET", "GET", "X:SET"]);
        assert_eq!(p.mix[0].steps, [0, 1]);
        let picked = p.mix[0].pick.as_deref().unwrap();
        assert_eq!(picked.order, Pick::Random);
        let commands: Vec<usize> = picked.steps.iter().map(|s| s.0).collect();
        assert_eq!(commands, [0, 1, 0]);
        assert_eq!(picked.steps[2].1[0], Arg::Lit(b"set"[..].into()));
        assert!(p.mix[1].pick.is_some() && p.mix[1].steps == [2]);
        let err = |toml: &str| {
            crate::plan::Workload::from_toml_str(toml)
                .unwrap_err()
                .to_string()
        };
        let e = err("[[commands]]\ntemplate = 'GET a'\npick = 'random'");
        assert!(e.contains("commands[0].pick") && e.contains("chain"), "{e}");
        let e = err("[[commands]]\nchain = ['GET a']\npick = 'sometimes'");
        assert!(
            e.contains("commands[0].pick") && e.contains("sequential"),
            "{e}"
        );
        let e = err("[[commands]]\nname = 'get'\n[[commands]]\nchain = ['GET a']\npick = 'random'");
        assert!(e.contains("a second command labelled `GET`"), "{e}");
        let e =
            err("target = { cluster = true }\n[[commands]]\nchain = ['GET a']\npick = 'random'");
        assert!(
            e.contains("commands[0].pick") && e.contains("cluster"),
            "{e}"
        );
    }

    #[test]
    fn every_builtin_compiles() {
        for name in BUILTINS {
            let c = CommandSpec::builtin(name).compile("commands[0]").unwrap();
            assert_eq!(c[0].label, name.to_ascii_uppercase());
        }
        let only = |name: &str| CommandSpec::builtin(name).compile("c").unwrap()[0].read_only();
        assert!(only("get") && only("mget") && only("lrange_100"));
        assert!(!only("lpop") && !only("spop") && !only("zpopmin") && !only("set"));
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
