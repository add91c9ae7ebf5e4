//! memtier_benchmark's `--data-import` files (its README.import): a CSV whose first line
//! starts `dumpflags, time, exptime`, then one item per line, eight whole numbers
//! (`dumpflags, time, exptime, nbytes, nsuffix, it_flags, clsid, nkey`) and two columns, the
//! key and the data, each in double quotes when it holds a comma, a quote (doubled) or any
//! byte at all (binary data, CR and LF included). `nbytes` counts the data and its CRLF
//! (memcached's item size), `nkey` the key.

use super::args::{quote_arg, Settings};
use super::report::DataVerify;
use crate::spec::escape_literal;
use crate::{Error, Result};
use serde_json::{json, Value as Json};

const OPT: &str = "--data-import";

/// The most items respload reads from one file: each is a step of a chain held in memory.
pub const MAX_IMPORT_ITEMS: usize = 100_000;

/// One item of a data-import file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Item {
    /// The key, as its bytes.
    pub key: Vec<u8>,
    /// The data (without memcached's trailing CRLF).
    pub data: Vec<u8>,
    /// The `exptime` column: memtier sets it as the item's TTL in seconds (0: none).
    pub exptime: u32,
}

/// Read every item of the data-import file at `path` (at most [`MAX_IMPORT_ITEMS`]).
pub fn load(path: &str) -> Result<Vec<Item>> {
    let bytes =
        std::fs::read(path).map_err(|e| Error::spec(OPT, format!("cannot read `{path}`: {e}")))?;
    parse(&bytes).map_err(|why| Error::spec(OPT, format!("`{path}`: {why}")))
}

/// The items of a data-import file's contents; the error says where it went wrong.
pub fn parse(bytes: &[u8]) -> std::result::Result<Vec<Item>, String> {
    const HEADER: &[u8] = b"dumpflags, time, exptime";
    if !bytes.starts_with(HEADER) {
        return Err(
            "not a memtier data-import file: its first line must start with \
             `dumpflags, time, exptime` (memtier's CSV header)"
                .into(),
        );
    }
    let mut r = Reader {
        bytes,
        pos: bytes
            .iter()
            .position(|&b| b == b'\n')
            .map_or(bytes.len(), |p| p + 1),
        line: 2,
    };
    let mut items = Vec::new();
    loop {
        r.skip_space(true);
        if r.pos == bytes.len() {
            break;
        }
        if items.len() == MAX_IMPORT_ITEMS {
            return Err(format!(
                "holds more than {MAX_IMPORT_ITEMS} items: respload reads at most \
                 {MAX_IMPORT_ITEMS} (keep the part to import, e.g. with head)"
            ));
        }
        let line = r.line;
        let item = r.item().map_err(|why| format!("line {line}: {why}"))?;
        items.push(item);
    }
    if items.is_empty() {
        return Err("holds no items: after the header, one line per item".into());
    }
    Ok(items)
}

struct Reader<'a> {
    bytes: &'a [u8],
    pos: usize,
    /// The line of the file being read (a quoted column may span several).
    line: usize,
}

impl Reader<'_> {
    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.pos).copied()
    }

    /// Skip spaces and tabs, and line ends too when `newlines` (as `fscanf`'s ` ` does).
    fn skip_space(&mut self, newlines: bool) {
        while let Some(b) = self.peek() {
            match b {
                b' ' | b'\t' => {}
                b'\r' | b'\n' if newlines => {
                    if b == b'\n' {
                        self.line += 1;
                    }
                }
                _ => break,
            }
            self.pos += 1;
        }
    }

    fn comma(&mut self, after: &str) -> std::result::Result<(), String> {
        self.skip_space(false);
        if self.peek() != Some(b',') {
            return Err(format!("a comma expected after {after}"));
        }
        self.pos += 1;
        self.skip_space(false);
        Ok(())
    }

    fn number(&mut self, name: &str) -> std::result::Result<u32, String> {
        let start = self.pos;
        while self.peek().is_some_and(|b| b.is_ascii_digit()) {
            self.pos += 1;
        }
        std::str::from_utf8(&self.bytes[start..self.pos])
            .ok()
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| format!("`{name}` is not a whole number from 0 to {}", u32::MAX))
    }

    /// A key or data column: quoted (`""` a quote; any byte inside), or bare up to the next
    /// comma or line end.
    fn column(&mut self, name: &str) -> std::result::Result<Vec<u8>, String> {
        let mut out = Vec::new();
        if self.peek() != Some(b'"') {
            while let Some(b) = self.peek() {
                if matches!(b, b',' | b'\r' | b'\n') {
                    break;
                }
                out.push(b);
                self.pos += 1;
            }
            while out.last().is_some_and(|b| *b == b' ' || *b == b'\t') {
                out.pop();
            }
            return Ok(out);
        }
        self.pos += 1;
        loop {
            match self.peek() {
                None => return Err(format!("the {name} column's closing quote is missing")),
                Some(b'"') if self.bytes.get(self.pos + 1) == Some(&b'"') => {
                    out.push(b'"');
                    self.pos += 2;
                }
                Some(b'"') => {
                    self.pos += 1;
                    return Ok(out);
                }
                Some(b) => {
                    if b == b'\n' {
                        self.line += 1;
                    }
                    out.push(b);
                    self.pos += 1;
                }
            }
        }
    }

    fn item(&mut self) -> std::result::Result<Item, String> {
        const NAMES: [&str; 8] = [
            "dumpflags",
            "time",
            "exptime",
            "nbytes",
            "nsuffix",
            "it_flags",
            "clsid",
            "nkey",
        ];
        let mut n = [0u32; 8];
        for (i, name) in NAMES.iter().enumerate() {
            n[i] = self.number(name)?;
            self.comma(name)?;
        }
        let (exptime, nbytes, nkey) = (n[2], n[3], n[7]);
        let key = self.column("key")?;
        if key.len() != nkey as usize || key.is_empty() {
            return Err(format!(
                "the key column is {} bytes where `nkey` says {nkey} (a key of 1 byte or more)",
                key.len()
            ));
        }
        self.comma("the key")?;
        let data = self.column("data")?;
        if nbytes < 2 || data.len() != nbytes as usize - 2 {
            return Err(format!(
                "the data column is {} bytes where `nbytes` says {nbytes}: nbytes counts the \
                 data and its CRLF, so it is the data's length + 2",
                data.len()
            ));
        }
        self.skip_space(false);
        match self.peek() {
            None => {}
            Some(b'\n') => {
                self.pos += 1;
                self.line += 1;
            }
            Some(b'\r') if self.bytes.get(self.pos + 1) == Some(&b'\n') => {
                self.pos += 2;
                self.line += 1;
            }
            Some(b) => {
                return Err(format!(
                    "the line goes on after the data column (`{}`): ten columns per item",
                    (b as char).escape_default()
                ))
            }
        }
        Ok(Item { key, data, exptime })
    }
}

/// What `--data-import` makes of memtier's SET/GET mix.
pub(super) struct Imported {
    /// The `[[commands]]`: a chain of the items' SETs, and the GETs.
    pub(super) commands: Vec<Json>,
    /// How many items the file holds.
    pub(super) items: u64,
    /// `--data-verify`: the keys to read back after the run.
    pub(super) verify: Option<DataVerify>,
}

/// An argument of an imported SET: the file's bytes, or a template's placeholder.
enum Word {
    Lit(Vec<u8>),
    Placeholder(String),
}

/// A template of literal arguments and placeholders: a list when every literal is text, else
/// a line with the literals quoted (`\xHH` for other bytes). Braces are escaped.
fn template(words: &[Word]) -> Json {
    let text: Option<Vec<String>> = words
        .iter()
        .map(|w| match w {
            Word::Placeholder(p) => Some(p.clone()),
            Word::Lit(b) => std::str::from_utf8(b).ok().map(escape_literal),
        })
        .collect();
    match text {
        Some(list) => json!(list),
        None => json!(words
            .iter()
            .map(|w| match w {
                Word::Placeholder(p) => p.clone(),
                Word::Lit(b) => escape_literal(&quote_arg(b)),
            })
            .collect::<Vec<_>>()
            .join(" ")),
    }
}

impl Settings {
    /// memtier's checks of the options that go with `--data-import` (and of those that
    /// need it), before the file is read.
    fn check_import(&self) -> Result<()> {
        if self.data_import.is_none() {
            for (set, opt, what) in [
                (
                    self.data_verify && !self.verify_only,
                    "--data-verify",
                    "data-verify",
                ),
                (self.verify_only, "--verify-only", "verify-only"),
                (self.no_expiry, "--no-expiry", "no-expiry"),
                (self.generate_keys, "--generate-keys", "generate-keys"),
            ] {
                if set {
                    return Err(Error::spec(
                        opt,
                        format!(
                            "use {what} only with --data-import=FILE (as in memtier_benchmark)"
                        ),
                    ));
                }
            }
            return Ok(());
        }
        let refused = [
            (self.cluster_mode, "--cluster-mode", "cannot be specified when importing (as in memtier_benchmark)"),
            (self.data_size.is_some(), "--data-size", "data size cannot be specified when importing: the values are the file's (as in memtier_benchmark)"),
            (self.data_size_range.is_some(), "--data-size-range", "data size cannot be specified when importing: the values are the file's (as in memtier_benchmark)"),
            (self.data_size_list.is_some(), "--data-size-list", "data size cannot be specified when importing: the values are the file's (as in memtier_benchmark)"),
            (self.random_data, "--random-data", "random-data cannot be specified when importing: the values are the file's (as in memtier_benchmark)"),
            (!self.commands.is_empty(), "--command", "cannot be used with --data-import by respload: the imported items are written by memtier's SETs (--ratio)"),
            (self.data_offset > 0, "--data-offset", "cannot be used with --data-import by respload yet"),
            (self.multi_key_get > 0, "--multi-key-get", "cannot be used with --data-import by respload yet"),
            (self.wait_ratio.is_some(), "--wait-ratio", "cannot be used with --data-import by respload yet"),
        ];
        if let Some((_, opt, why)) = refused.iter().find(|r| r.0) {
            return Err(Error::spec(*opt, why));
        }
        if let (Some(opt), false) = (self.key_option, self.generate_keys) {
            return Err(Error::spec(
                opt,
                "use key-minimum, key-maximum and key-prefix only with --generate-keys when \
                 importing: the keys are the file's (as in memtier_benchmark)",
            ));
        }
        if self.generate_keys && self.data_verify {
            return Err(Error::spec(
                "--data-verify",
                "cannot be used with --generate-keys by respload: its connections draw generated \
                 keys and walk the file apart, so which key got which item is not known",
            ));
        }
        let (_, get) = self.key_pattern.unwrap_or(('R', 'R'));
        if !self.generate_keys && !matches!(get, 'R' | 'S') {
            return Err(Error::spec(
                "--key-pattern",
                format!(
                    "GETs of imported keys take R (a key of the file at random) or S (the \
                     file's keys in turn) with respload; {get} needs --generate-keys"
                ),
            ));
        }
        Ok(())
    }

    /// The SET/GET mix of `--data-import=FILE`, as memtier sends it: each SET writes the
    /// file's next item (its key, or a generated one with `--generate-keys`; its data; its
    /// `exptime` as TTL unless `--no-expiry` or `--expiry-range`), each GET reads one of
    /// the file's keys (by the GET key pattern, R or S) or a generated key. `None` without
    /// `--data-import`.
    pub(super) fn imported(&self) -> Result<Option<Imported>> {
        self.check_import()?;
        let Some(path) = &self.data_import else {
            return Ok(None);
        };
        let items = load(path)?;
        let (a, b) = self.ratio.unwrap_or((1, 10));
        let (set_p, get_p) = self.key_pattern.unwrap_or(('R', 'R'));
        let mut commands = Vec::new();
        if a > 0 {
            let steps: Vec<Json> = items
                .iter()
                .map(|item| {
                    let key = match self.generate_keys {
                        true => Word::Placeholder("{key}".into()),
                        false => Word::Lit(item.key.clone()),
                    };
                    let mut words = vec![
                        Word::Lit(b"SET".to_vec()),
                        key,
                        Word::Lit(item.data.clone()),
                    ];
                    let ttl = match (self.no_expiry, self.expiry_range) {
                        (true, _) => None,
                        // A drawn 0 would be `EX 0`, an error: the range starts at 1.
                        (false, Some((lo, hi))) => Some(format!("{{rand:{}..{hi}}}", lo.max(1))),
                        (false, None) => (item.exptime > 0).then(|| item.exptime.to_string()),
                    };
                    if let Some(ttl) = ttl {
                        words.push(Word::Lit(b"EX".to_vec()));
                        words.push(Word::Placeholder(ttl));
                    }
                    template(&words)
                })
                .collect();
            let mut set = json!({ "chain": steps, "pick": "sequential", "weight": a });
            if self.generate_keys {
                set["distribution"] = self.distribution(set_p);
            }
            commands.push(set);
        }
        if b > 0 {
            commands.push(if self.generate_keys {
                json!({ "name": "get", "weight": b })
            } else {
                let steps: Vec<Json> = items
                    .iter()
                    .map(|item| {
                        template(&[Word::Lit(b"GET".to_vec()), Word::Lit(item.key.clone())])
                    })
                    .collect();
                let pick = if get_p == 'S' { "sequential" } else { "random" };
                json!({ "chain": steps, "pick": pick, "weight": b })
            });
        }
        let verify = self.data_verify.then(|| {
            // Each key once, expecting what a pass over the file leaves: its last item.
            let mut last = std::collections::HashMap::new();
            for (i, item) in items.iter().enumerate() {
                last.insert(item.key.as_slice(), i);
            }
            let items = items
                .iter()
                .enumerate()
                .filter(|(i, item)| last.get(item.key.as_slice()) == Some(i))
                .map(|(_, item)| (item.key.clone(), item.data.clone()))
                .collect();
            DataVerify {
                only: self.verify_only,
                items,
            }
        });
        Ok(Some(Imported {
            commands,
            items: items.len() as u64,
            verify,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEADER: &str =
        "dumpflags, time, exptime, nbytes, nsuffix, it_flags, clsid, nkey, key, data\n";

    #[test]
    fn reads_quoted_binary_and_bare_columns() {
        let mut file = HEADER.as_bytes().to_vec();
        file.extend_from_slice(b"0, 0, 60, 7, 0, 0, 1, 3, \"k\"\"1\", \"a\r\n,\"\"\"\n");
        file.extend_from_slice(b"0, 0, 0, 5, 0, 0, 1, 2, k2, abc\r\n");
        file.extend_from_slice(b"0, 0, 0, 3, 0, 0, 1, 2, \"k3\", \"\0\"");
        let items = parse(&file).unwrap();
        assert_eq!(
            items,
            vec![
                Item {
                    key: b"k\"1".to_vec(),
                    data: b"a\r\n,\"".to_vec(),
                    exptime: 60
                },
                Item {
                    key: b"k2".to_vec(),
                    data: b"abc".to_vec(),
                    exptime: 0
                },
                Item {
                    key: b"k3".to_vec(),
                    data: b"\0".to_vec(),
                    exptime: 0
                },
            ]
        );
    }

    #[test]
    fn bad_files_say_what_and_where() {
        let err = |body: &str| parse(body.as_bytes()).unwrap_err();
        assert!(err("key,value\n").contains("dumpflags, time, exptime"));
        assert!(err(HEADER).contains("no items"));
        let wrong_len = format!("{HEADER}0, 0, 0, 9, 0, 0, 1, 2, \"k1\", \"abc\"\n");
        assert!(
            err(&wrong_len).contains("line 2: the data column is 3 bytes where `nbytes` says 9")
        );
        let short_key = format!("{HEADER}0, 0, 0, 5, 0, 0, 1, 2, \"k1\", \"abc\"\n0, 0, 0, 5, 0, 0, 1, 5, \"k1\", \"abc\"\n");
        assert!(err(&short_key).contains("line 3: the key column is 2 bytes where `nkey` says 5"));
        let not_number = format!("{HEADER}0, x, 0, 5, 0, 0, 1, 2, \"k1\", \"abc\"\n");
        assert!(err(&not_number).contains("`time` is not a whole number"));
        let unclosed = format!("{HEADER}0, 0, 0, 5, 0, 0, 1, 2, \"k1\", \"abc\n");
        assert!(err(&unclosed).contains("closing quote"));
    }
}
