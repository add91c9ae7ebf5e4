//! Splitting a command line given as one string into words, the way a POSIX shell does, so
//! that a line copied from a benchmark guide can be handed over as is.

use crate::{Error, Result};

/// Split `line` into words as `sh` would, without expanding anything:
///
/// - blanks (spaces, tabs, newlines) separate words;
/// - `'single quotes'` keep everything inside literally;
/// - `"double quotes"` keep spaces; inside them a backslash escapes only `"`, `\`, `$`, `` ` ``
///   and a newline (which it removes), any other backslash stays;
/// - outside quotes a backslash keeps the next character literally, and a backslash before a
///   newline joins the lines (so multi-line commands with `\` continuations work);
/// - a `#` that starts a word starts a comment that runs to the end of the line.
///
/// Quoted parts join the unquoted text around them into one word (`--ratio="1:10"` is
/// `--ratio=1:10`); `''` alone is an empty word. An unclosed quote is an error.
pub fn split_shell_words(line: &str) -> Result<Vec<String>> {
    let mut words = Vec::new();
    let mut word = String::new();
    // Whether a word is under way (so that `''` gives an empty word).
    let mut in_word = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            ' ' | '\t' | '\n' | '\r' => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            '#' if !in_word => {
                for c in chars.by_ref() {
                    if c == '\n' {
                        break;
                    }
                }
            }
            '\\' => match chars.next() {
                Some('\n') => {}
                Some(next) => {
                    word.push(next);
                    in_word = true;
                }
                None => {
                    word.push('\\');
                    in_word = true;
                }
            },
            '\'' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('\'') => break,
                        Some(c) => word.push(c),
                        None => return Err(unclosed(line, '\'')),
                    }
                }
            }
            '"' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('"') => break,
                        Some('\\') => match chars.next() {
                            Some(e @ ('"' | '\\' | '$' | '`')) => word.push(e),
                            Some('\n') => {}
                            Some(other) => {
                                word.push('\\');
                                word.push(other);
                            }
                            None => return Err(unclosed(line, '"')),
                        },
                        Some(c) => word.push(c),
                        None => return Err(unclosed(line, '"')),
                    }
                }
            }
            c => {
                word.push(c);
                in_word = true;
            }
        }
    }
    if in_word {
        words.push(word);
    }
    Ok(words)
}

fn unclosed(line: &str, quote: char) -> Error {
    Error::spec(
        "",
        format!("the command line `{line}` has an unclosed {quote} quote"),
    )
}

/// Whether `word` names the program `name` (`name`, or a path ending in `/name`).
pub fn is_program(word: &str, name: &str) -> bool {
    word == name || word.ends_with(&format!("/{name}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split(line: &str) -> Vec<String> {
        split_shell_words(line).unwrap()
    }

    #[test]
    fn splits_like_a_shell() {
        assert_eq!(
            split("memtier_benchmark -s host  --ratio=1:10\t-c 20"),
            [
                "memtier_benchmark",
                "-s",
                "host",
                "--ratio=1:10",
                "-c",
                "20"
            ]
        );
        assert_eq!(
            split(r#"--command="set __key__ 'a b'" --x='it''s' "a\"b\\c\d" e\ f"#),
            [
                "--command=set __key__ 'a b'",
                "--x=its",
                r#"a"b\c\d"#,
                "e f"
            ]
        );
        assert_eq!(split("a '' b"), ["a", "", "b"]);
        assert_eq!(split("a \\\n  b # comment\nc"), ["a", "b", "c"]);
        assert_eq!(split("a#b"), ["a#b"]);
        assert!(split("").is_empty());
        let e = split_shell_words("--command='GET").unwrap_err().to_string();
        assert!(e.contains("unclosed '"), "{e}");
        assert!(split_shell_words("\"open").is_err());
    }

    #[test]
    fn recognises_the_program() {
        assert!(is_program("memtier_benchmark", "memtier_benchmark"));
        assert!(is_program(
            "/usr/local/bin/memtier_benchmark",
            "memtier_benchmark"
        ));
        assert!(!is_program("-s", "memtier_benchmark"));
    }
}
