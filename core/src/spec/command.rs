//! The command mix: `[[commands]]`, built-in commands, templates and chains (compiled to
//! argument lists in `plan`).

use super::keys::Distribution;
use super::template::Template;
use serde::{Deserialize, Serialize};

/// One entry of the weighted command mix (`[[commands]]` in a spec): a built-in `name`, a
/// `template`, or a `chain` of templates run in order on one key.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct CommandSpec {
    /// A built-in command (see [`BUILTINS`]), case-insensitive.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Any command: a line of words (quotes group, `\xHH` escapes inside double quotes) or a
    /// list with one argument per element. `{key}`, `{keynum}`, `{value}`, `{rand:LO..HI}`,
    /// `{rand:LO..HI:WIDTH}`, `{draw}`, `{draw1}` ... `{draw9}` and `{node_tag}` are replaced
    /// per request, also inside a longer argument; `{newkey}`, a whole argument, is another
    /// key drawn from the command's distribution for each argument (`MGET {key} {newkey}
    /// {newkey}` reads three keys). `{cursor}`, a whole argument, follows a cursor (`SCAN
    /// {cursor} COUNT 100`): `0` at first, then the cursor (the first element) of the
    /// previous reply of this command on the connection, until the server returns 0 (or
    /// `max_iterations`) and a new walk starts at 0. Its requests are reported as `LABEL 0`
    /// (walk starts) and `LABEL <cursor>`; it needs `load.pipeline = 1`, and one such command
    /// per phase.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub template: Option<Template>,
    /// Templates sent one after the other on the same connection and the same key (e.g.
    /// HSET, then HGETALL, then DEL); each step is reported under its own label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chain: Option<Vec<Template>>,
    /// Name in the report (default: the built-in's name, or the template's first word),
    /// upper-cased. For a chain, steps are reported as `LABEL:STEP` when given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// Relative share of picks (default 1); a chain is one pick.
    #[serde(default = "default_weight")]
    pub weight: u32,
    /// How this command picks its key, instead of `keys.distribution` (or `keys.reads` /
    /// `keys.writes`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub distribution: Option<Distribution>,
    /// With a `chain`: each pick sends one of its steps instead of all of them in a row
    /// (see [`Pick`]). Steps are then reported by command name, steps of one name together
    /// (`LABEL:COMMAND` when the chain has a label).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pick: Option<Pick>,
    /// With `{cursor}` in the template: at most this many requests follow a cursor in one
    /// walk, then the next starts at 0 again (memtier_benchmark's
    /// `--scan-incremental-max-iterations`); absent or 0: until the server returns cursor 0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_iterations: Option<u32>,
}

/// Which step of a chain one pick sends (`pick` on a chain).
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Pick {
    /// The steps in turn, cycling: connection `i` of `n` sends steps `i`, `i + n`,
    /// `i + 2n`, ... (modulo the chain's length), so that together the connections walk the
    /// chain in order, as one counter shared by all of them would (memtier_benchmark's
    /// `--monitor-pattern=S`). With one connection: step 1, 2, ..., the last, 1, ...
    Sequential,
    /// One step drawn at random, every step with the same chance.
    Random,
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
            chain: None,
            label: None,
            weight: 1,
            distribution: None,
            pick: None,
            max_iterations: None,
        }
    }
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
pub(crate) const READ_COMMANDS: &[&str] = &[
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
