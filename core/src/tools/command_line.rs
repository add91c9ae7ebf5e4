//! Reading other benchmark tools' command lines: what every front end shares.
//!
//! Each front end reads the tool's own options, unchanged, and builds a respload spec (as
//! JSON, validated by [`Workload::from_json_value`](crate::Workload::from_json_value)) plus
//! the output options the tool's report format needs. Options respload cannot honour are
//! errors naming the option, never silently ignored; see `docs/compat.md` for the full table.
//!
//! The pieces every front end shares live here: reading options and their values
//! ([`Options`]), the errors ([`not_supported`], [`unknown_option`], [`bad_value`]) and a
//! shell-style splitter for command lines given as one string ([`split_command_line`]).

use crate::{Error, Result};
use std::str::FromStr;

/// A cursor over a tool's arguments (without the program name).
#[derive(Debug)]
pub struct Options<'a> {
    args: &'a [String],
    next: usize,
}

impl<'a> Options<'a> {
    /// Start before the first argument.
    pub fn new(args: &'a [String]) -> Self {
        Options { args, next: 0 }
    }

    /// The next argument, consumed.
    pub fn next_arg(&mut self) -> Option<&'a str> {
        let arg = self.args.get(self.next)?;
        self.next += 1;
        Some(arg.as_str())
    }

    /// The next argument, not consumed.
    pub fn peek(&self) -> Option<&'a str> {
        self.args.get(self.next).map(String::as_str)
    }

    /// The arguments not consumed yet (e.g. a trailing command), consuming them.
    pub fn rest(&mut self) -> &'a [String] {
        let rest = &self.args[self.next.min(self.args.len())..];
        self.next = self.args.len();
        rest
    }

    /// The value of option `option` (the next argument); `what` says what it should be, for
    /// the error when it is missing.
    pub fn value(&mut self, option: &str, what: &str) -> Result<&'a str> {
        self.next_arg()
            .ok_or_else(|| Error::spec(option, format!("{option} needs a value: {what}")))
    }

    /// The value of `option` parsed as an integer in `lo..=hi`.
    pub fn int<T>(&mut self, option: &str, what: &str, lo: T, hi: T) -> Result<T>
    where
        T: FromStr + PartialOrd + Copy + std::fmt::Display,
    {
        let raw = self.value(option, what)?;
        parse_int(option, raw, what, lo, hi)
    }
}

/// Parse `raw`, the value of `option`, as an integer in `lo..=hi`; the error names the
/// option, the value and the allowed range.
pub fn parse_int<T>(option: &str, raw: &str, what: &str, lo: T, hi: T) -> Result<T>
where
    T: FromStr + PartialOrd + Copy + std::fmt::Display,
{
    match raw.trim().parse::<T>() {
        Ok(v) if v >= lo && v <= hi => Ok(v),
        _ => Err(bad_value(
            option,
            raw,
            &format!("{what}, a whole number from {lo} to {hi}"),
        )),
    }
}

/// A bad value: names the option, the value and what is allowed.
pub fn bad_value(option: &str, value: &str, allowed: &str) -> Error {
    Error::spec(
        option,
        format!("`{value}` is not a valid value for {option}: allowed is {allowed}"),
    )
}

/// An option of `tool` that respload does not honour yet (`what` says what it does).
pub fn not_supported(tool: &str, option: &str, what: &str) -> Error {
    Error::spec(
        option,
        format!("{tool}'s {option} ({what}) is not supported by respload yet; see docs/compat.md"),
    )
}

/// An option `tool` does not have.
pub fn unknown_option(tool: &str, option: &str) -> Error {
    Error::spec(
        option,
        format!(
            "unknown {tool} option `{option}`; see docs/compat.md for the options respload reads"
        ),
    )
}

/// Split a command line into arguments the way a POSIX shell does, without expanding
/// anything: whitespace separates arguments; `'...'` keeps everything literally; `"..."`
/// keeps everything but lets a backslash escape `"`, `\`, `$`, `` ` `` and a newline;
/// outside quotes a backslash keeps the next character literally. Unclosed quotes and a
/// trailing backslash are errors.
pub fn split_command_line(line: &str) -> Result<Vec<String>> {
    let err = |m: &str| Error::spec("", format!("cannot split the command line: {m}"));
    let mut args = Vec::new();
    let mut cur = String::new();
    let mut in_arg = false;
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            c if c.is_whitespace() => {
                if in_arg {
                    args.push(std::mem::take(&mut cur));
                    in_arg = false;
                }
            }
            '\'' => {
                in_arg = true;
                loop {
                    match chars.next() {
                        Some('\'') => break,
                        Some(c) => cur.push(c),
                        None => return Err(err("a single quote (') is not closed")),
                    }
                }
            }
            '"' => {
                in_arg = true;
                loop {
                    match chars.next() {
                        Some('"') => break,
                        Some('\\') => match chars.next() {
                            Some('\n') => {}
                            Some(c @ ('"' | '\\' | '$' | '`')) => cur.push(c),
                            Some(c) => {
                                cur.push('\\');
                                cur.push(c);
                            }
                            None => return Err(err("a double quote (\") is not closed")),
                        },
                        Some(c) => cur.push(c),
                        None => return Err(err("a double quote (\") is not closed")),
                    }
                }
            }
            '\\' => match chars.next() {
                Some('\n') => {}
                Some(c) => {
                    in_arg = true;
                    cur.push(c);
                }
                None => return Err(err("it ends with a lone backslash")),
            },
            c => {
                in_arg = true;
                cur.push(c);
            }
        }
    }
    if in_arg {
        args.push(cur);
    }
    Ok(args)
}

/// Split `line` and drop a leading program name when it is `program` (also as a path,
/// e.g. `/usr/bin/redis-benchmark`).
pub fn split_tool_line(line: &str, program: &str) -> Result<Vec<String>> {
    let mut args = split_command_line(line)?;
    let is_program = args.first().is_some_and(|first| {
        first == program || first.rsplit('/').next().is_some_and(|base| base == program)
    });
    if is_program {
        args.remove(0);
    }
    Ok(args)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split(line: &str) -> Vec<String> {
        split_command_line(line).unwrap()
    }

    #[test]
    fn splits_like_a_shell() {
        assert_eq!(split("  a  b\tc\n"), ["a", "b", "c"]);
        assert_eq!(split(""), Vec::<String>::new());
        assert_eq!(
            split(r#"eval 'return redis.call("ping")' 0"#),
            ["eval", r#"return redis.call("ping")"#, "0"]
        );
        assert_eq!(
            split(r#"set k "a b \"c\" \\ \n""#),
            ["set", "k", r#"a b "c" \ \n"#]
        );
        assert_eq!(split(r"a\ b c\'d"), ["a b", "c'd"]);
        assert_eq!(split(r#"x''y "" ''"#), ["xy", "", ""]);
        assert_eq!(split("a\\\nb"), ["ab"]);
        assert_eq!(split("'it''s'"), ["its"]);
        assert_eq!(split("über 'ü b'"), ["über", "ü b"]);
        for bad in ["'open", "\"open", "end\\", "\"esc\\"] {
            let e = split_command_line(bad).unwrap_err().to_string();
            assert!(e.contains("cannot split"), "{bad}: {e}");
        }
    }

    #[test]
    fn a_leading_program_name_is_dropped() {
        let args = split_tool_line("redis-benchmark -q", "redis-benchmark").unwrap();
        assert_eq!(args, ["-q"]);
        let args = split_tool_line("/usr/bin/redis-benchmark -q", "redis-benchmark").unwrap();
        assert_eq!(args, ["-q"]);
        let args = split_tool_line("-q ping", "redis-benchmark").unwrap();
        assert_eq!(args, ["-q", "ping"]);
    }

    #[test]
    fn option_values_are_checked() {
        let args: Vec<String> = ["-c", "12", "-n", "x", "-P"].map(String::from).to_vec();
        let mut o = Options::new(&args);
        assert_eq!(o.next_arg(), Some("-c"));
        assert_eq!(o.int::<u32>("-c", "connections", 1, 100).unwrap(), 12);
        assert_eq!(o.next_arg(), Some("-n"));
        let e = o
            .int::<u64>("-n", "requests", 1, 10)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("`-n`") && e.contains("`x`") && e.contains("1 to 10"),
            "{e}"
        );
        assert_eq!(o.next_arg(), Some("-P"));
        let e = o
            .value("-P", "a number of requests")
            .unwrap_err()
            .to_string();
        assert!(e.contains("-P needs a value"), "{e}");
        assert!(o.rest().is_empty());
    }
}
