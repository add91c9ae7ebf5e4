//! Cluster mode: refuse, before any traffic, a command whose keys may hash to different
//! slots (Redis Cluster answers such a request with CROSSSLOT, every time).
//!
//! The keys of a multi-key command are found by position (a table of the commands that take
//! several keys); two key arguments are known to share a slot when they hash the same text:
//! the same hash tag, the request's key (`{key}`) each time, or the very same argument.

use super::CompiledCommand;
use crate::resp::slot::hash_part;
use crate::spec::{Arg, Part};
use crate::{Error, Result};

/// The argument indexes of the keys of a multi-key command (`None`: not one we know, or its
/// key count is not a literal number).
fn key_positions(name: &str, args: &[Arg]) -> Option<Vec<usize>> {
    let n = args.len();
    let range = |from: usize, to: usize, step: usize| (from..to.min(n)).step_by(step).collect();
    let numkeys = |at: usize| -> Option<usize> {
        match args.get(at)? {
            Arg::Lit(b) => std::str::from_utf8(b).ok()?.parse().ok(),
            _ => None,
        }
    };
    Some(match name {
        "MGET" | "DEL" | "UNLINK" | "EXISTS" | "TOUCH" | "WATCH" | "SUNION" | "SINTER"
        | "SDIFF" | "SUNIONSTORE" | "SINTERSTORE" | "SDIFFSTORE" | "PFCOUNT" | "PFMERGE" => {
            range(1, n, 1)
        }
        "MSET" | "MSETNX" => range(1, n, 2),
        "RENAME" | "RENAMENX" | "RPOPLPUSH" | "BRPOPLPUSH" | "LMOVE" | "BLMOVE" | "SMOVE"
        | "COPY" | "LCS" | "ZRANGESTORE" | "GEOSEARCHSTORE" => range(1, 3, 1),
        "BLPOP" | "BRPOP" | "BZPOPMIN" | "BZPOPMAX" => range(1, n.saturating_sub(1), 1),
        "ZUNION" | "ZINTER" | "ZDIFF" | "SINTERCARD" | "LMPOP" | "ZMPOP" => {
            range(2, 2 + numkeys(1)?, 1)
        }
        "BLMPOP" | "BZMPOP" => range(3, 3 + numkeys(2)?, 1),
        "ZUNIONSTORE" | "ZINTERSTORE" | "ZDIFFSTORE" => {
            let mut keys = vec![1];
            keys.extend((3..(3 + numkeys(2)?).min(n)).collect::<Vec<_>>());
            keys
        }
        "EVAL" | "EVALSHA" | "EVAL_RO" | "EVALSHA_RO" | "FCALL" | "FCALL_RO" => {
            range(3, 3 + numkeys(2)?, 1)
        }
        _ => return None,
    })
}

/// Commands with no key: a cluster may serve them anywhere.
const KEYLESS: &[&str] = &[
    "PING",
    "ECHO",
    "INFO",
    "DBSIZE",
    "TIME",
    "LASTSAVE",
    "CONFIG",
    "CLIENT",
    "CLUSTER",
    "COMMAND",
    "SCRIPT",
    "FUNCTION",
    "PUBLISH",
    "SPUBLISH",
    "RANDOMKEY",
    "SCAN",
    "KEYS",
    "FLUSHALL",
    "FLUSHDB",
    "SLOWLOG",
    "LATENCY",
    "WAIT",
];

/// The argument index of the key a cluster client routes a command by: the first key (the
/// one after the key count for EVAL, FCALL, ZUNION ...; after `STREAMS` for XREAD; the
/// third word for subcommands such as `OBJECT FREQ key`), `None` for a command without
/// keys. Other commands take their key first, as most do.
pub fn key_index(args: &[Arg]) -> Option<usize> {
    let word = |i: usize| match args.get(i) {
        Some(Arg::Lit(b)) => Some(String::from_utf8_lossy(b).to_ascii_uppercase()),
        _ => None,
    };
    let name = word(0)?;
    if let Some(keys) = key_positions(&name, args) {
        return keys.first().copied();
    }
    match name.as_str() {
        "XREAD" | "XREADGROUP" => (1..args.len())
            .find(|&i| word(i).as_deref() == Some("STREAMS"))
            .map(|i| i + 1)
            .filter(|&i| i < args.len()),
        "OBJECT" | "MEMORY" | "XINFO" | "XGROUP" => (args.len() > 2).then_some(2),
        _ if KEYLESS.contains(&name.as_str()) => None,
        _ => (args.len() > 1).then_some(1),
    }
}

impl CompiledCommand {
    /// The argument index of the key a cluster client routes it by (see `key_index`).
    pub fn key_index(&self) -> Option<usize> {
        key_index(&self.args)
    }
}

/// What decides the slot of a key argument.
#[derive(Debug, PartialEq)]
enum SlotOf<'a> {
    /// Fixed text: a hash tag, or a whole literal key.
    Text(&'a [u8]),
    /// The request's key (prefix and number), e.g. `{key}` or `x:{{key}}`.
    RequestKey,
    /// The request's key number alone, e.g. `{keynum}` or `x:{{keynum}}`.
    KeyNum,
    /// Another key drawn for this argument: a slot of its own.
    Fresh,
    /// The request's `{node_tag}`: one hash tag per request, in every argument.
    NodeTag,
    /// Hashed whole, the same in every use within a request: the same slot only as the
    /// very same argument.
    Whole(&'a Arg),
    /// Drawn anew for each use (`{rand:..}`, `{value}`): a slot of its own.
    Varies,
}

impl SlotOf<'_> {
    /// Whether two key arguments certainly hash to the same slot.
    fn same(&self, other: &SlotOf) -> bool {
        !matches!(self, SlotOf::Fresh | SlotOf::Varies) && self == other
    }
}

/// The slot of a key argument; `prefix` is `keys.prefix`.
fn slot_of<'a>(arg: &'a Arg, prefix: &'a [u8]) -> SlotOf<'a> {
    let tagged = |p: &'a [u8]| {
        let h = hash_part(p);
        (h.len() < p.len()).then_some(h)
    };
    let key = || match tagged(prefix) {
        Some(tag) => SlotOf::Text(tag),
        None if prefix.is_empty() => SlotOf::KeyNum,
        None => SlotOf::RequestKey,
    };
    match arg {
        Arg::Lit(b) => SlotOf::Text(hash_part(b)),
        Arg::Key => key(),
        Arg::FreshKey => match tagged(prefix) {
            Some(tag) => SlotOf::Text(tag),
            None => SlotOf::Fresh,
        },
        Arg::KeyNum(p) => match tagged(p) {
            Some(tag) => SlotOf::Text(tag),
            None => SlotOf::Whole(arg),
        },
        Arg::Parts(parts) => parts_slot(parts, prefix).unwrap_or_else(|| {
            let varies = parts
                .iter()
                .any(|p| matches!(p, Part::Value | Part::Rand(..) | Part::Draw(_)));
            if varies {
                SlotOf::Varies
            } else {
                SlotOf::Whole(arg)
            }
        }),
        Arg::Value | Arg::Rand(..) | Arg::Expiry(..) | Arg::Cursor => SlotOf::Varies,
    }
}

/// The slot of an argument made of parts, when its hash tag is known: a tag written in its
/// literal text, or braces right around `{key}` / `{keynum}` (`user:{{key}}:name`).
fn parts_slot<'a>(parts: &'a [Part], prefix: &'a [u8]) -> Option<SlotOf<'a>> {
    // The first `{`: in literal text, or inside a tagged prefix of `{key}`.
    for (i, part) in parts.iter().enumerate() {
        match part {
            Part::Lit(b) => {
                let Some(open) = b.iter().position(|&c| c == b'{') else {
                    continue;
                };
                let rest = &b[open + 1..];
                if let Some(len) = rest.iter().position(|&c| c == b'}') {
                    // `{tag}` within this text (an empty tag hashes the whole argument).
                    return (len > 0).then(|| SlotOf::Text(&rest[..len]));
                }
                if !rest.is_empty() {
                    return None;
                }
                // `...{` then a placeholder then `}...`.
                let closes =
                    matches!(parts.get(i + 2), Some(Part::Lit(c)) if c.first() == Some(&b'}'));
                let plain = !prefix.iter().any(|&c| c == b'{' || c == b'}');
                return match parts.get(i + 1) {
                    Some(Part::Key) if closes && plain => Some(if prefix.is_empty() {
                        SlotOf::KeyNum
                    } else {
                        SlotOf::RequestKey
                    }),
                    Some(Part::KeyNum) if closes => Some(SlotOf::KeyNum),
                    _ => None,
                };
            }
            // The tag is braced itself: the first braces of the key.
            Part::NodeTag => return Some(SlotOf::NodeTag),
            Part::Key if hash_part(prefix).len() < prefix.len() => {
                return Some(SlotOf::Text(hash_part(prefix)))
            }
            Part::Key if prefix.contains(&b'{') => return None,
            Part::Value => return None,
            Part::Key | Part::KeyNum | Part::Rand(..) | Part::Draw(_) => {}
        }
    }
    None
}

/// An argument as written in a template.
fn show(arg: &Arg) -> String {
    fn part(p: &Part) -> String {
        match p {
            Part::Lit(b) => String::from_utf8_lossy(b).into_owned(),
            Part::Key => "{key}".into(),
            Part::KeyNum => "{keynum}".into(),
            Part::Value => "{value}".into(),
            Part::Rand(lo, hi, 0) => format!("{{rand:{lo}..{hi}}}"),
            Part::Rand(lo, hi, w) => format!("{{rand:{lo}..{hi}:{w}}}"),
            Part::NodeTag => "{node_tag}".into(),
            Part::Draw(None) => "{draw}".into(),
            Part::Draw(Some(n)) => format!("{{draw{n}}}"),
        }
    }
    match arg {
        Arg::Lit(b) => String::from_utf8_lossy(b).into_owned(),
        Arg::Key | Arg::FreshKey => "{key}".into(),
        Arg::KeyNum(p) => format!("{}{{keynum}}", String::from_utf8_lossy(p)),
        Arg::Value => "{value}".into(),
        Arg::Rand(lo, hi, pad) => part(&Part::Rand(*lo, *hi, *pad)),
        Arg::Parts(parts) => parts.iter().map(part).collect(),
        Arg::Expiry(lo, hi) => format!("EX {{rand:{lo}..{hi}}}"),
        Arg::Cursor => "{cursor}".into(),
    }
}

/// In cluster mode, refuse a command whose keys may hash to different slots; `path` is the
/// field that holds it (`commands[2].template`, `commands[0].name`, ...).
pub fn cluster_check(c: &CompiledCommand, prefix: &str, path: &str) -> Result<()> {
    let name = match c.args.first() {
        Some(Arg::Lit(b)) => String::from_utf8_lossy(b).to_ascii_uppercase(),
        _ => return Ok(()),
    };
    let Some(keys) = key_positions(&name, &c.args) else {
        return Ok(());
    };
    let prefix = prefix.as_bytes();
    let slots: Vec<SlotOf> = keys.iter().map(|&i| slot_of(&c.args[i], prefix)).collect();
    if keys.len() < 2 {
        return Ok(());
    }
    if slots.contains(&SlotOf::Fresh) {
        return Err(Error::spec(
            path,
            format!(
                "`{}` sends {} different keys, which hash to different slots: Redis Cluster \
                 refuses that (CROSSSLOT). In cluster mode use single-key commands, or give \
                 keys.prefix a hash tag (e.g. \"{{k}}:\") so that every key shares one slot \
                 (and one node)",
                c.label,
                keys.len()
            ),
        ));
    }
    if let Some(k) = (1..slots.len()).find(|&k| !slots[k].same(&slots[0])) {
        let (a, b) = (show(&c.args[keys[0]]), show(&c.args[keys[k]]));
        return Err(Error::spec(
            path,
            format!(
                "`{name}` sends the keys `{a}` and `{b}`, which may hash to different slots: \
                 Redis Cluster refuses that (CROSSSLOT). Give every key of the command the same \
                 hash tag: braces around the part they share (`x:{{{{key}}}}:a` and \
                 `x:{{{{key}}}}:b` both hash the request's key), a literal tag (`{{user}}:a`), \
                 or a hash tag in keys.prefix (e.g. \"{{k}}:\")"
            ),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::{parse_template, Template};

    fn check(template: &str, prefix: &str) -> Result<()> {
        let args = parse_template(&Template::Line(template.into())).unwrap();
        let c = CompiledCommand {
            label: "X".into(),
            args,
            reads: false,
            builtin_set: false,
        };
        cluster_check(&c, prefix, "commands[0].template")
    }

    #[test]
    fn the_routing_key_is_the_first_key_wherever_it_sits() {
        let at =
            |template: &str| key_index(&parse_template(&Template::Line(template.into())).unwrap());
        assert_eq!(at("GET {key}"), Some(1));
        assert_eq!(at("EVAL 'return 1' 1 {key}"), Some(3));
        assert_eq!(at("EVALSHA abc 0"), None);
        assert_eq!(at("ZUNIONSTORE dst 2 {key} {key}"), Some(1));
        assert_eq!(at("XREAD COUNT 1 STREAMS s:{key} 0"), Some(4));
        assert_eq!(at("OBJECT FREQ {key}"), Some(2));
        assert_eq!(at("PING"), None);
        assert_eq!(at("info stats"), None);
    }

    #[test]
    fn keys_that_share_a_slot_pass() {
        for ok in [
            "MSET {key} {value} {key} {value}",
            "MSET x:{{key}}:a {value} x:{{key}}:b {value}",
            "MSET {user}:a {value} {user}:b {value}",
            "DEL counter:{keynum} counter:{keynum}",
            "DEL {key}:{rand:1..9}",
            "RPOPLPUSH {{keynum}}:in x:{{keynum}}",
            "EVAL script 2 {{key}}:a {{key}}:b extra-arg",
            "ZUNIONSTORE {t}:dest 2 {t}:a {t}:b WEIGHTS 1 2",
            "BLPOP {key} 0",
            "GET a:{key}",
            "SET a b",
            "HSET {key} field:{keynum} {value}",
            // Not a literal key count: not checked.
            "EVAL script {rand:1..2} a b",
        ] {
            assert!(check(ok, "key:").is_ok(), "{ok}");
        }
        // A tagged prefix makes every {key} one slot.
        assert!(check("MSET {key} v a:{key} v", "{k}:").is_ok());
        assert!(check("RENAME {key} {{k}}:x", "{k}:").is_err());
        assert!(check("RENAME {key} {k}:x", "{k}:").is_ok());
    }

    #[test]
    fn keys_of_different_slots_are_refused_with_the_fix() {
        for bad in [
            "MSET user:{key}:a {value} user:{key}:b {value}",
            "RPOPLPUSH {key} {key}:backup",
            "SUNIONSTORE dest {key}",
            "DEL {rand:1..100} {rand:1..100}",
            "DEL k:{rand:1..100} k:{rand:1..100}",
            "EVAL script 2 {key} other",
            "ZUNIONSTORE dest 2 {t}:a {t}:b",
            "BLPOP {key} x:{keynum} 0",
        ] {
            let e = check(bad, "key:").unwrap_err().to_string();
            assert!(
                e.contains("commands[0].template")
                    && e.contains("CROSSSLOT")
                    && e.contains("hash tag"),
                "{bad}: {e}"
            );
        }
        let e = check("RPOPLPUSH {key} {key}:backup", "key:")
            .unwrap_err()
            .to_string();
        assert!(e.contains("`{key}` and `{key}:backup`"), "{e}");
        assert!(e.contains("`x:{{key}}:a`"), "{e}");
    }
}
