//! Command templates: a line split the way redis-cli splits it, or a list with one argument
//! per element, with placeholders replaced per request.

use serde::{Deserialize, Serialize};

/// A command template as written: a line, or a list of arguments.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(untagged)]
pub enum Template {
    /// Words separated by spaces; `"double"` and `'single'` quotes keep spaces inside one
    /// argument, and `"\x00"`-style escapes inside double quotes give any byte.
    Line(String),
    /// One argument per element, taken as is (nothing is split).
    Args(Vec<String>),
}

impl std::fmt::Display for Template {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Template::Line(s) => write!(f, "{s}"),
            Template::Args(a) => write!(f, "{a:?}"),
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
    /// The request's key number behind another prefix (`counter:N`, `element:N`); an empty
    /// prefix gives the bare number (`{keynum}`).
    KeyNum(Box<[u8]>),
    /// A value from `[values]`.
    Value,
    /// A uniform random integer in `lo..=hi`, zero-padded to `pad` digits.
    Rand(i64, i64, u8),
    /// Literal text and placeholders joined into one argument (`user:{key}:name`).
    Parts(Box<[Part]>),
    /// Two arguments, `EX` and a TTL drawn in `lo..=hi` seconds, or none when 0 is drawn
    /// (`values.expiry` on the built-in SET; always the last argument).
    Expiry(u32, u32),
    /// `{cursor}`: the cursor the connection's previous reply of this command returned
    /// (SCAN and its kin); `0` starts a walk.
    Cursor,
}

/// A piece of an argument made of several parts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Part {
    /// Fixed bytes.
    Lit(Box<[u8]>),
    /// The request's key, prefix included.
    Key,
    /// The request's key number, padded as keys are.
    KeyNum,
    /// A value from `[values]`.
    Value,
    /// A uniform random integer in `lo..=hi`, zero-padded to `pad` digits.
    Rand(i64, i64, u8),
    /// Cluster mode: a hash tag, braces included (`{x3b}`), of a slot the connection's own
    /// primary owns, drawn per request (the same in every argument of one request): the
    /// keys of `redis-benchmark --cluster`. Binds each connection to one primary.
    NodeTag,
    /// Another key number, drawn from the command's key distribution (with `sequential`
    /// keys the next of a sequence of its own: one for `{draw}`, one for each of `{draw1}`
    /// ... `{draw9}`, none the key's) and padded as keys are, without the prefix:
    /// `{draw}` draws afresh at each occurrence (valkey-benchmark's `__rand_int__`);
    /// `{draw1}` ... `{draw9}` once per request, the same in every occurrence of that
    /// request (valkey-benchmark's `__rand_1st__` ... `__rand_9th__`).
    Draw(Option<u8>),
}

const PLACEHOLDERS: &str = "{key}, {newkey}, {keynum}, {value}, {rand:LO..HI}, \
     {rand:LO..HI:WIDTH}, {draw}, {draw1} to {draw9}, {cursor} and {node_tag}";

/// The most arguments one command of a template may have, its name and keys included: a
/// request is built from them each time it is sent (an `MSET` of 500 pairs has 1,001).
pub const MAX_TEMPLATE_ARGS: usize = 4096;

/// Whether arguments use `{node_tag}` (which binds each cluster connection to one primary).
pub fn uses_node_tag(args: &[Arg]) -> bool {
    args.iter().any(|a| match a {
        Arg::Parts(parts) => parts.contains(&Part::NodeTag),
        _ => false,
    })
}

/// Parse a template into arguments; errors say what is wrong and what is allowed.
pub fn parse_template(template: &Template) -> Result<Vec<Arg>, String> {
    let words = match template {
        Template::Line(line) => split_line(line)?,
        Template::Args(list) => list.iter().map(|a| a.as_bytes().to_vec()).collect(),
    };
    if words.len() > MAX_TEMPLATE_ARGS {
        return Err(format!(
            "has {} arguments: allowed are at most {MAX_TEMPLATE_ARGS} (the command name and \
             its keys included)",
            words.len()
        ));
    }
    let args = words
        .iter()
        .map(|w| parse_arg(w))
        .collect::<Result<Vec<_>, _>>()?;
    match args.first() {
        None => Err("is empty: give a command, e.g. \"GET {key}\"".into()),
        // Every request would fail with ERR, under an empty label.
        Some(Arg::Lit(name)) if name.is_empty() => Err(
            "starts with an empty command name: give a command, e.g. [\"GET\", \"{key}\"]".into(),
        ),
        Some(Arg::Lit(_)) => Ok(args),
        Some(_) => Err("must start with a command name, not a placeholder".into()),
    }
}

/// Split a line into arguments as redis-cli does: spaces separate, quotes group.
pub fn split_line(line: &str) -> Result<Vec<Vec<u8>>, String> {
    let bytes = line.as_bytes();
    let mut words = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i].is_ascii_whitespace() {
            i += 1;
            continue;
        }
        let mut word = Vec::new();
        match bytes[i] {
            q @ (b'"' | b'\'') => {
                i += 1;
                loop {
                    let Some(&c) = bytes.get(i) else {
                        return Err(format!("has an unclosed {} quote", q as char));
                    };
                    i += 1;
                    match c {
                        c if c == q => break,
                        b'\\' if q == b'\'' && bytes.get(i) == Some(&b'\'') => {
                            word.push(b'\'');
                            i += 1;
                        }
                        b'\\' if q == b'"' => {
                            let (byte, used) = unescape(&bytes[i..])?;
                            word.push(byte);
                            i += used;
                        }
                        c => word.push(c),
                    }
                }
                if bytes.get(i).is_some_and(|c| !c.is_ascii_whitespace()) {
                    return Err(
                        "has a closing quote followed by more text: put a space after it".into(),
                    );
                }
            }
            _ => {
                while i < bytes.len() && !bytes[i].is_ascii_whitespace() {
                    word.push(bytes[i]);
                    i += 1;
                }
            }
        }
        words.push(word);
    }
    Ok(words)
}

/// The byte an escape after `\` stands for, and how many bytes it used.
fn unescape(rest: &[u8]) -> Result<(u8, usize), String> {
    let hex = |c: u8| (c as char).to_digit(16);
    match rest {
        [b'x', a, b, ..] if hex(*a).is_some() && hex(*b).is_some() => {
            Ok(((hex(*a).unwrap_or(0) * 16 + hex(*b).unwrap_or(0)) as u8, 3))
        }
        [b'n', ..] => Ok((b'\n', 1)),
        [b'r', ..] => Ok((b'\r', 1)),
        [b't', ..] => Ok((b'\t', 1)),
        [b'b', ..] => Ok((8, 1)),
        [b'a', ..] => Ok((7, 1)),
        [c, ..] => Ok((*c, 1)),
        [] => Err("ends with a backslash inside quotes".into()),
    }
}

/// `text` escaped so that a template sends it as it is: every `{` as `{lbrace}`.
pub(crate) fn escape_literal(text: &str) -> String {
    text.replace('{', "{lbrace}")
}

/// One argument: literal bytes with placeholders anywhere in them.
fn parse_arg(word: &[u8]) -> Result<Arg, String> {
    // Another key per argument (MGET, MSET, DEL of several keys): a whole argument only.
    if word == b"{newkey}" {
        return Ok(Arg::FreshKey);
    }
    if word == b"{cursor}" {
        return Ok(Arg::Cursor);
    }
    let mut parts = Vec::new();
    let mut lit = Vec::new();
    let mut i = 0;
    while i < word.len() {
        if word[i] == b'{' {
            if let Some(len) = word[i..].iter().position(|&c| c == b'}') {
                let inner = &word[i + 1..i + len];
                // `{lbrace}` is a literal `{`: the escape for text that would read as a
                // placeholder (`{{key}}` stays a hash tag around the key).
                if inner == b"lbrace" {
                    lit.push(b'{');
                    i += len + 1;
                    continue;
                }
                if let Some(part) = placeholder(inner)? {
                    if !lit.is_empty() {
                        parts.push(Part::Lit(std::mem::take(&mut lit).into()));
                    }
                    parts.push(part);
                    i += len + 1;
                    continue;
                }
                // `{word}` alone that is no placeholder is most likely a typo; inside a
                // longer argument it is a hash tag (`{user1}:x`) and stays literal.
                if len + 1 == word.len()
                    && !inner.is_empty()
                    && !inner.iter().any(|&c| matches!(c, b'{' | b':'))
                {
                    return Err(format!(
                        "has unknown placeholder `{}`: allowed are {PLACEHOLDERS} \
                         (write `{{lbrace}}` for a literal `{{`)",
                        String::from_utf8_lossy(word)
                    ));
                }
            }
        }
        lit.push(word[i]);
        i += 1;
    }
    if !lit.is_empty() || parts.is_empty() {
        parts.push(Part::Lit(lit.into()));
    }
    Ok(match <[Part; 1]>::try_from(parts) {
        Ok([Part::Lit(b)]) => Arg::Lit(b),
        Ok([Part::Key]) => Arg::Key,
        Ok([Part::KeyNum]) => Arg::KeyNum(Box::default()),
        Ok([Part::Value]) => Arg::Value,
        Ok([Part::Rand(lo, hi, pad)]) => Arg::Rand(lo, hi, pad),
        Ok([Part::NodeTag]) => Arg::Parts([Part::NodeTag].into()),
        Ok([Part::Draw(n)]) => Arg::Parts([Part::Draw(n)].into()),
        Err(parts) => Arg::Parts(parts.into()),
    })
}

/// The placeholder named by the text between braces, `None` when it is not one.
fn placeholder(inner: &[u8]) -> Result<Option<Part>, String> {
    Ok(Some(match inner {
        b"key" => Part::Key,
        b"keynum" => Part::KeyNum,
        b"value" => Part::Value,
        b"node_tag" => Part::NodeTag,
        b"cursor" => {
            return Err(
                "has `{cursor}` inside a longer argument: it must be a whole argument (the \
                 cursor the previous reply returned)"
                    .into(),
            )
        }
        b"newkey" => {
            return Err(
                "has `{newkey}` inside a longer argument: it must be a whole argument (another \
                 key of the command's distribution, prefix included)"
                    .into(),
            )
        }
        b"draw" => Part::Draw(None),
        [b'd', b'r', b'a', b'w', n @ b'1'..=b'9'] => Part::Draw(Some(n - b'0')),
        _ => match inner.strip_prefix(b"rand:") {
            Some(spec) => {
                let text = String::from_utf8_lossy(spec);
                let bad = || {
                    format!(
                        "has `{{rand:{text}}}`, not a valid placeholder: write {{rand:LO..HI}} or \
                         {{rand:LO..HI:WIDTH}} with integers LO <= HI (and 0 <= LO for a WIDTH up \
                         to 20), e.g. {{rand:1..100}}"
                    )
                };
                let (range, pad) = match text.split_once(':') {
                    Some((r, w)) => (r, w.parse::<u8>().map_err(|_| bad())?),
                    None => (text.as_ref(), 0),
                };
                let (lo, hi) = range
                    .split_once("..")
                    .and_then(|(a, b)| Some((a.parse::<i64>().ok()?, b.parse::<i64>().ok()?)))
                    .ok_or_else(bad)?;
                if lo > hi || pad > 20 || (pad > 0 && lo < 0) {
                    return Err(bad());
                }
                Part::Rand(lo, hi, pad)
            }
            None => return Ok(None),
        },
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lit(s: &str) -> Arg {
        Arg::Lit(s.as_bytes().into())
    }
    fn line(s: &str) -> Result<Vec<Arg>, String> {
        parse_template(&Template::Line(s.into()))
    }

    #[test]
    fn whole_word_placeholders() {
        assert_eq!(
            line("SET {key} {value} EX {rand:10..60}").unwrap(),
            vec![
                lit("SET"),
                Arg::Key,
                Arg::Value,
                lit("EX"),
                Arg::Rand(10, 60, 0)
            ]
        );
        assert_eq!(
            line("GET {keynum}").unwrap()[1],
            Arg::KeyNum(Box::default())
        );
        assert_eq!(line("GET {rand:0..9:12}").unwrap()[1], Arg::Rand(0, 9, 12));
        assert_eq!(
            line("MGET {key} {newkey} {newkey}").unwrap()[1..],
            [Arg::Key, Arg::FreshKey, Arg::FreshKey]
        );
        assert!(line("GET x{newkey}")
            .unwrap_err()
            .contains("must be a whole argument"));
        assert!(line("{newkey} GET").is_err());
        assert!(line("GET {nope}")
            .unwrap_err()
            .contains("unknown placeholder"));
        for bad in [
            "{rand:9..1}",
            "{rand:a..b}",
            "{rand:-5..5:3}",
            "{rand:1..2:99}",
        ] {
            assert!(line(&format!("GET {bad}")).is_err(), "{bad}");
        }
        assert!(line("  ").is_err());
        assert!(line("{key} GET").is_err());
        let args =
            |a: &[&str]| parse_template(&Template::Args(a.iter().map(|s| s.to_string()).collect()));
        assert!(args(&[""]).unwrap_err().contains("empty command name"));
        assert!(line("'' x").unwrap_err().contains("empty command name"));
        // An empty argument after the name is a value like any other.
        assert_eq!(args(&["SET", "{key}", ""]).unwrap()[2], lit(""));
    }

    #[test]
    fn lbrace_is_a_literal_brace() {
        assert_eq!(line("SET {lbrace}key} 1").unwrap()[1], lit("{key}"));
        assert_eq!(line("SET {lbrace}nope}} 1").unwrap()[1], lit("{nope}}"));
        assert_eq!(
            line("SET {lbrace}{key} 1").unwrap()[1],
            Arg::Parts(vec![Part::Lit(b"{"[..].into()), Part::Key].into())
        );
        // Braces around a placeholder stay a hash tag around it.
        assert_eq!(
            line("SET u:{{key}} 1").unwrap()[1],
            Arg::Parts(
                vec![
                    Part::Lit(b"u:{"[..].into()),
                    Part::Key,
                    Part::Lit(b"}"[..].into())
                ]
                .into()
            )
        );
        assert_eq!(
            line(r#"JSON.SET d $ '{"a":{"b":1}}'"#).unwrap()[3],
            lit(r#"{"a":{"b":1}}"#)
        );
        for text in [
            "{key}",
            "{rand:1..2}",
            "a{{b",
            "{x}",
            "{value}{keynum}",
            "{lbrace}",
        ] {
            let escaped = format!("X '{}'", escape_literal(text));
            assert_eq!(line(&escaped).unwrap()[1], lit(text), "{text}");
        }
    }

    #[test]
    fn placeholders_inside_arguments_and_hash_tags() {
        assert_eq!(line("GET {user1}:x").unwrap()[1], lit("{user1}:x"));
        assert_eq!(
            line("HSET user:{key}:x f{rand:1..2}").unwrap()[1..],
            [
                Arg::Parts(
                    vec![
                        Part::Lit(b"user:"[..].into()),
                        Part::Key,
                        Part::Lit(b":x"[..].into())
                    ]
                    .into()
                ),
                Arg::Parts(vec![Part::Lit(b"f"[..].into()), Part::Rand(1, 2, 0)].into()),
            ]
        );
        assert_eq!(
            line("GET key:{rand:0..99:12}").unwrap()[1],
            Arg::Parts(vec![Part::Lit(b"key:"[..].into()), Part::Rand(0, 99, 12)].into())
        );
    }

    #[test]
    fn quotes_and_escapes_keep_arguments_whole() {
        let words = split_line(r#"SET "a b" 'c "d"' "\x00\xff\n\"" x"#).unwrap();
        assert_eq!(
            words,
            vec![
                b"SET".to_vec(),
                b"a b".to_vec(),
                b"c \"d\"".to_vec(),
                vec![0, 0xff, b'\n', b'"'],
                b"x".to_vec()
            ]
        );
        assert_eq!(split_line(r"'it\'s'").unwrap(), vec![b"it's".to_vec()]);
        assert_eq!(split_line(r#""""#).unwrap(), vec![Vec::<u8>::new()]);
        assert!(split_line("GET \"open").unwrap_err().contains("unclosed"));
        assert!(split_line("GET \"a\"b").is_err());
        let list = Template::Args(vec!["SET".into(), "{key}".into(), "two  words ".into()]);
        assert_eq!(
            parse_template(&list).unwrap(),
            vec![lit("SET"), Arg::Key, lit("two  words ")]
        );
    }
}
