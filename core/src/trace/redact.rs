//! Secrets taken out of a traced command before it is written anywhere: passwords of AUTH,
//! HELLO ... AUTH, MIGRATE ... AUTH / AUTH2, CONFIG SET of a `*pass*` parameter (and
//! `masterauth`), and the
//! rules of ACL SETUSER (they hold passwords and their hashes).

use super::{Record, TraceArg};

/// What a redacted argument becomes (as the server's own MONITOR writes it).
pub const REDACTED: &[u8] = b"(redacted)";

/// Redact `rec` in place; returns how many arguments were replaced.
pub fn redact(rec: &mut Record) -> usize {
    let upper = |rec: &Record, i: usize| -> Vec<u8> {
        match rec.arg(i) {
            Some(TraceArg::Bytes(b)) => b.to_ascii_uppercase(),
            _ => Vec::new(),
        }
    };
    let name = upper(rec, 0);
    let mut hide: Vec<usize> = Vec::new();
    match name.as_slice() {
        b"AUTH" => hide.extend(1..rec.len()),
        b"HELLO" | b"MIGRATE" => {
            let mut i = 1;
            while i < rec.len() {
                match upper(rec, i).as_slice() {
                    // HELLO ... AUTH user pass; MIGRATE ... AUTH2 user pass
                    b"AUTH" if name == b"HELLO" => {
                        hide.extend([i + 1, i + 2]);
                        i += 3;
                    }
                    b"AUTH" => {
                        hide.push(i + 1);
                        i += 2;
                    }
                    b"AUTH2" => {
                        hide.extend([i + 1, i + 2]);
                        i += 3;
                    }
                    _ => i += 1,
                }
            }
        }
        b"CONFIG" if upper(rec, 1) == b"SET" => {
            let mut i = 2;
            while i + 1 < rec.len() {
                // `*pass*` (requirepass, tls-key-file-pass, ...) and masterauth.
                let param = upper(rec, i);
                if param.windows(4).any(|w| w == b"PASS" || w == b"AUTH") {
                    hide.push(i + 1);
                }
                i += 2;
            }
        }
        // ACL SETUSER name rules...: every rule (passwords, hashes, keys patterns alike).
        b"ACL" if upper(rec, 1) == b"SETUSER" => hide.extend(3..rec.len()),
        _ => {}
    }
    let mut n = 0;
    let len = rec.len();
    for i in hide.into_iter().filter(|&i| i < len) {
        if rec.arg(i) != Some(TraceArg::Bytes(REDACTED)) {
            rec.set_bytes(i, REDACTED);
            n += 1;
        }
    }
    n
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(args: &[&str]) -> Record {
        let mut r = Record::default();
        for a in args {
            r.push_bytes(a.as_bytes());
        }
        r
    }

    fn args(r: &Record) -> Vec<String> {
        r.args()
            .map(|a| match a {
                TraceArg::Bytes(b) => String::from_utf8_lossy(b).into_owned(),
                TraceArg::Size(n) => format!("<{n}>"),
            })
            .collect()
    }

    #[test]
    fn every_kind_of_secret_is_redacted_and_nothing_else() {
        let cases: &[(&[&str], &[&str])] = &[
            (&["auth", "s3cret"], &["auth", "(redacted)"]),
            (
                &["AUTH", "user", "s3cret"],
                &["AUTH", "(redacted)", "(redacted)"],
            ),
            (
                &["HELLO", "3", "AUTH", "default", "s3cret", "SETNAME", "app"],
                &[
                    "HELLO",
                    "3",
                    "AUTH",
                    "(redacted)",
                    "(redacted)",
                    "SETNAME",
                    "app",
                ],
            ),
            (
                &[
                    "MIGRATE", "h", "6379", "", "0", "5000", "AUTH", "s3cret", "KEYS", "a",
                ],
                &[
                    "MIGRATE",
                    "h",
                    "6379",
                    "",
                    "0",
                    "5000",
                    "AUTH",
                    "(redacted)",
                    "KEYS",
                    "a",
                ],
            ),
            (
                &[
                    "MIGRATE", "h", "6379", "k", "0", "5000", "auth2", "u", "s3cret",
                ],
                &[
                    "MIGRATE",
                    "h",
                    "6379",
                    "k",
                    "0",
                    "5000",
                    "auth2",
                    "(redacted)",
                    "(redacted)",
                ],
            ),
            (
                &["config", "set", "requirepass", "s3cret", "maxmemory", "1gb"],
                &[
                    "config",
                    "set",
                    "requirepass",
                    "(redacted)",
                    "maxmemory",
                    "1gb",
                ],
            ),
            (
                &[
                    "CONFIG",
                    "SET",
                    "masterauth",
                    "x",
                    "tls-key-file-pass",
                    "s3cret",
                ],
                &[
                    "CONFIG",
                    "SET",
                    "masterauth",
                    "(redacted)",
                    "tls-key-file-pass",
                    "(redacted)",
                ],
            ),
            (
                &["ACL", "SETUSER", "bob", "on", ">s3cret", "~*"],
                &[
                    "ACL",
                    "SETUSER",
                    "bob",
                    "(redacted)",
                    "(redacted)",
                    "(redacted)",
                ],
            ),
            (&["SET", "auth", "s3cret"], &["SET", "auth", "s3cret"]),
            (
                &["CONFIG", "GET", "requirepass"],
                &["CONFIG", "GET", "requirepass"],
            ),
        ];
        for (given, want) in cases {
            let mut r = rec(given);
            redact(&mut r);
            assert_eq!(args(&r), *want, "{given:?}");
            assert!(!args(&r).iter().any(|a| a == "s3cret") || given[0] == "SET");
        }
    }

    #[test]
    fn redactions_are_counted_once() {
        let mut r = rec(&["CONFIG", "SET", "maxmemory", "1gb"]);
        assert_eq!(redact(&mut r), 0);
        let mut r = rec(&["AUTH", "a"]);
        assert_eq!(redact(&mut r), 1);
        // Already redacted by the server: not counted again.
        assert_eq!(redact(&mut r), 0);
    }
}
