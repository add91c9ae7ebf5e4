//! `--monitor-input=FILE`: commands captured with `MONITOR` (what `redis-cli MONITOR` prints),
//! replayed by `--command=__monitor_lineN__` (the file's Nth command, every request) and
//! `--command=__monitor_line@__` (one of the file's commands per request, in turn or at
//! random: `--monitor-pattern=S|R`); `__monitor_cN__` and `__monitor_c@__`, the spelling of
//! memtier's development branch, mean the same.
//!
//! The file is read as memtier_benchmark 2.3 reads it: a line holds a command from its first
//! double quote to its end, so whatever comes before (the time and client MONITOR writes, a
//! proxy's own prefix) is skipped, and lines without a double quote (redis-cli's `OK`, blank
//! lines) hold none and are not counted. The command is split as `--command` is (MONITOR's
//! own quoting, `\"`, `\\`, `\n`, `\xHH`, ..., reads the same way), and N counts commands,
//! from 1.

use super::args::{bad, split_command};
use crate::{Error, Result};
use std::io::{BufRead, BufReader};

/// The most commands respload loads from a `--monitor-input` file: each becomes a step of the
/// workload spec (and of respload's own report of it).
pub const MAX_MONITOR_COMMANDS: usize = 100_000;

/// A `--command` that names commands of the `--monitor-input` file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Placeholder {
    /// `__monitor_lineN__`: the file's Nth command (from 1).
    Line(usize),
    /// `__monitor_line@__`: one of the file's commands per request (`--monitor-pattern`).
    Each,
}

/// memtier's prefix of monitor placeholders: a `--command` starting with it is one.
pub(super) const PREFIX: &str = "__monitor_line";
/// The spelling of memtier's development branch (`__monitor_c1__`, `__monitor_c@__`), which
/// 2.3 released as `__monitor_line...`: read as the released one, so a procedure written for
/// either runs unchanged.
const DEV_PREFIX: &str = "__monitor_c";

/// The number (or `@`) of a placeholder in the development spelling; `None` for anything
/// else (`__monitor_cx__` is a command of that name, as memtier would send it).
fn dev_spelling(text: &str) -> Option<&str> {
    let n = text.strip_prefix(DEV_PREFIX)?.strip_suffix("__")?;
    (n == "@" || (!n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))).then_some(n)
}

/// Whether a `--command` is a monitor placeholder (`__monitor_line...`, or the development
/// spelling `__monitor_cN__` / `__monitor_c@__`), as memtier tells them apart: by the prefix
/// alone, its validity checked once the file is read.
pub(super) fn is_placeholder(text: &str) -> bool {
    text.starts_with(PREFIX) || dev_spelling(text).is_some()
}

/// Read a placeholder against the file's `count` commands, as memtier does: `@`, or a number
/// from 1 to `count` between the prefix and a closing `__`.
pub(super) fn placeholder(opt: &str, text: &str, count: usize) -> Result<Placeholder> {
    let inner = dev_spelling(text)
        .or_else(|| text.strip_prefix(PREFIX).and_then(|t| t.strip_suffix("__")))
        .unwrap_or_default();
    if inner == "@" {
        return Ok(Placeholder::Each);
    }
    match inner.parse::<usize>() {
        Ok(n) if (1..=count).contains(&n) && inner.bytes().all(|b| b.is_ascii_digit()) => {
            Ok(Placeholder::Line(n))
        }
        _ => Err(bad(
            opt,
            text,
            &format!(
                "{PREFIX}1__ to {PREFIX}{count}__ (the --monitor-input file holds {count} \
                 command{}), or {PREFIX}@__",
                if count == 1 { "" } else { "s" }
            ),
        )),
    }
}

/// One command of the file: its arguments, or why its line cannot be read (an error only
/// once a placeholder uses it, as memtier reads a line only then).
pub(super) type Captured = std::result::Result<Vec<Vec<u8>>, String>;

/// The commands of a `--monitor-input` file, in order.
pub(super) fn load(path: &str) -> Result<Vec<Captured>> {
    const OPT: &str = "--monitor-input";
    let file = std::fs::File::open(path)
        .map_err(|e| Error::spec(OPT, format!("cannot open `{path}`: {e}")))?;
    let mut reader = BufReader::new(file);
    let mut commands = Vec::new();
    let mut line = Vec::new();
    let mut number = 0;
    loop {
        line.clear();
        let n = reader
            .read_until(b'\n', &mut line)
            .map_err(|e| Error::spec(OPT, format!("cannot read `{path}`: {e}")))?;
        if n == 0 {
            break;
        }
        number += 1;
        let Some(start) = line.iter().position(|&b| b == b'"') else {
            continue;
        };
        if commands.len() == MAX_MONITOR_COMMANDS {
            return Err(Error::spec(
                OPT,
                format!(
                    "`{path}` holds more than {MAX_MONITOR_COMMANDS} commands: respload loads \
                     at most {MAX_MONITOR_COMMANDS} (keep the part to replay, e.g. with head)"
                ),
            ));
        }
        commands.push(command(&line[start..]).map_err(|why| format!("line {number}: {why}")));
    }
    if commands.is_empty() {
        return Err(Error::spec(
            OPT,
            format!(
                "no commands in `{path}`: a command is a line with double-quoted arguments, \
                 as MONITOR prints them (`1700000000.000000 [0 127.0.0.1:5000] \"SET\" \"k\" \"v\"`)"
            ),
        ));
    }
    Ok(commands)
}

/// One line's command, from its first double quote on.
fn command(text: &[u8]) -> std::result::Result<Vec<Vec<u8>>, String> {
    let args = split_command(text)?;
    match args.first().map(Vec::as_slice) {
        None | Some(b"") => Err("an empty command name".into()),
        // memtier would take it for a placeholder, which a command name cannot be.
        Some(b"__key__" | b"__data__") => Err("a placeholder as the command name".into()),
        Some(_) => Ok(args),
    }
}

/// The command a placeholder's file line holds, or the error naming the file and the line.
pub(super) fn take(commands: &[Captured], n: usize, path: &str) -> Result<Vec<Vec<u8>>> {
    commands[n - 1].clone().map_err(|why| {
        Error::spec(
            "--monitor-input",
            format!("`{path}`, command {n} ({why}): not a command as MONITOR prints it"),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_are_read_as_memtier_reads_them() {
        let p = |t: &str| placeholder("--command", t, 3);
        assert_eq!(p("__monitor_line1__").unwrap(), Placeholder::Line(1));
        assert_eq!(p("__monitor_line3__").unwrap(), Placeholder::Line(3));
        assert_eq!(p("__monitor_line@__").unwrap(), Placeholder::Each);
        for wrong in [
            "__monitor_line0__",
            "__monitor_line4__",
            "__monitor_line__",
            "__monitor_line1",
            "__monitor_line+1__",
            "__monitor_line1__ x",
            "__monitor_linex__",
        ] {
            let e = p(wrong).unwrap_err().to_string();
            assert!(
                e.contains(wrong) && e.contains("__monitor_line3__") && e.contains("3 commands"),
                "{e}"
            );
        }
        assert!(is_placeholder("__monitor_line_oops") && !is_placeholder("GET __key__"));
        // The development branch's spelling reads the same; a look-alike is a command.
        assert_eq!(p("__monitor_c2__").unwrap(), Placeholder::Line(2));
        assert_eq!(p("__monitor_c@__").unwrap(), Placeholder::Each);
        assert!(p("__monitor_c4__")
            .unwrap_err()
            .to_string()
            .contains("__monitor_c4__"));
        assert!(is_placeholder("__monitor_c12__") && is_placeholder("__monitor_c@__"));
        assert!(!is_placeholder("__monitor_cx__") && !is_placeholder("__monitor_c__"));
    }
}
