//! valkey-benchmark's `--dataset FILE` (and `--maxdocs N`): a CSV or TSV file whose header
//! names the fields, each row a document whose fields replace `__field:NAME__` in the
//! command given on the line.

use crate::{Error, Result};
use std::io::Read;

/// The most bytes a dataset file may have.
pub const MAX_DATASET_BYTES: u64 = 1 << 30;

/// A dataset: the header's field names and the rows (documents) read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dataset {
    /// Field names, from the header line.
    pub fields: Vec<String>,
    /// One value per field in each row.
    pub rows: Vec<Vec<String>>,
}

impl Dataset {
    /// Read `path`: tab-separated when it ends in `.tsv` or its header has tabs and no commas,
    /// else comma-separated; `"quoted"` values may hold separators, newlines and `""` (a
    /// quote). At most `max_rows` rows are kept (`--maxdocs`). Errors name `--dataset`.
    pub fn read(path: &str, max_rows: Option<u64>) -> Result<Dataset> {
        let err = |m: String| Error::spec("--dataset", m);
        let meta =
            std::fs::metadata(path).map_err(|e| err(format!("cannot read `{path}`: {e}")))?;
        // A device or a pipe (`/dev/zero`) could be read forever: only regular files.
        if !meta.is_file() {
            return Err(err(format!(
                "`{path}` is not a regular file: allowed is a CSV or TSV file"
            )));
        }
        let mut bytes = Vec::new();
        std::fs::File::open(path)
            .and_then(|f| f.take(MAX_DATASET_BYTES + 1).read_to_end(&mut bytes))
            .map_err(|e| err(format!("cannot read `{path}`: {e}")))?;
        if bytes.len() as u64 > MAX_DATASET_BYTES {
            return Err(err(format!(
                "`{path}` has more than {MAX_DATASET_BYTES} bytes: allowed are datasets of at \
                 most 1 GiB"
            )));
        }
        let text = String::from_utf8(bytes)
            .map_err(|e| err(format!("`{path}` is not UTF-8 text: {e}")))?;
        let header = text.lines().next().unwrap_or_default();
        let tab = path.ends_with(".tsv") || (header.contains('\t') && !header.contains(','));
        Dataset::parse(&text, if tab { '\t' } else { ',' }, max_rows)
            .map_err(|m| err(format!("`{path}`: {m}")))
    }

    /// Parse dataset text separated by `sep`.
    pub fn parse(
        text: &str,
        sep: char,
        max_rows: Option<u64>,
    ) -> std::result::Result<Dataset, String> {
        let mut records = Records {
            chars: text.chars().peekable(),
            sep,
            line: 1,
        };
        let Some((_, fields)) = records.next_record()? else {
            return Err("is empty: the first line must name the fields".into());
        };
        if fields.iter().any(String::is_empty) {
            return Err(format!(
                "its header `{}` has an empty field name",
                fields.join(&sep.to_string())
            ));
        }
        let mut rows = Vec::new();
        while max_rows.is_none_or(|m| (rows.len() as u64) < m) {
            let Some((line, row)) = records.next_record()? else {
                break;
            };
            if row.len() == 1 && row[0].is_empty() {
                continue; // a blank line
            }
            if row.len() != fields.len() {
                return Err(format!(
                    "the record at line {line} has {} fields where the header names {}",
                    row.len(),
                    fields.len()
                ));
            }
            rows.push(row);
        }
        if rows.is_empty() {
            return Err("has no document after its header".into());
        }
        Ok(Dataset { fields, rows })
    }

    /// `text` with every `__field:NAME__` replaced by the value of NAME in row `row`, each
    /// value passed through `escape`; an unknown NAME is an error listing the fields.
    pub fn fill(&self, text: &str, row: usize, escape: impl Fn(&str) -> String) -> Result<String> {
        let mut out = String::with_capacity(text.len());
        let mut rest = text;
        while let Some(at) = rest.find(FIELD) {
            out.push_str(&rest[..at]);
            let after = &rest[at + FIELD.len()..];
            let Some(end) = after.find("__") else {
                out.push_str(FIELD);
                rest = after;
                continue;
            };
            let name = &after[..end];
            let Some(i) = self.fields.iter().position(|f| f == name) else {
                return Err(Error::spec(
                    "--dataset",
                    format!(
                        "`__field:{name}__` is not found in the dataset's fields: allowed are {}",
                        self.fields.join(", ")
                    ),
                ));
            };
            out.push_str(&escape(&self.rows[row][i]));
            rest = &after[end + 2..];
        }
        out.push_str(rest);
        Ok(out)
    }
}

/// The placeholder prefix of a dataset field: `__field:NAME__`.
pub const FIELD: &str = "__field:";

/// The records of delimited text, with the line each starts on.
struct Records<'a> {
    chars: std::iter::Peekable<std::str::Chars<'a>>,
    sep: char,
    line: usize,
}

impl Records<'_> {
    fn next_record(&mut self) -> std::result::Result<Option<(usize, Vec<String>)>, String> {
        if self.chars.peek().is_none() {
            return Ok(None);
        }
        let start = self.line;
        let mut fields = Vec::new();
        let mut field = String::new();
        let mut quoted = false;
        let mut was_quoted = false;
        while let Some(c) = self.chars.next() {
            match c {
                '"' if quoted => {
                    if self.chars.peek() == Some(&'"') {
                        self.chars.next();
                        field.push('"');
                    } else {
                        quoted = false;
                    }
                }
                '"' if field.is_empty() && !was_quoted => {
                    quoted = true;
                    was_quoted = true;
                }
                '\n' if !quoted => {
                    self.line += 1;
                    if field.ends_with('\r') {
                        field.pop();
                    }
                    fields.push(field);
                    return Ok(Some((start, fields)));
                }
                c if c == self.sep && !quoted => {
                    fields.push(std::mem::take(&mut field));
                    was_quoted = false;
                }
                c => {
                    if c == '\n' {
                        self.line += 1;
                    }
                    field.push(c);
                }
            }
        }
        if quoted {
            return Err(format!("a quote opened at line {start} is not closed"));
        }
        fields.push(field);
        Ok(Some((start, fields)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_with_quotes_and_tsv() {
        let d = Dataset::parse(
            "id,title\n1,\"Book, Part 1\"\n2,\"say \"\"hi\"\"\nthere\"\n\n",
            ',',
            None,
        )
        .unwrap();
        assert_eq!(d.fields, ["id", "title"]);
        assert_eq!(d.rows, [["1", "Book, Part 1"], ["2", "say \"hi\"\nthere"]]);
        let d = Dataset::parse(
            "name\tvalue\r\nitem1\tvalue1\r\nitem2\tvalue2",
            '\t',
            Some(1),
        )
        .unwrap();
        assert_eq!(d.rows, [["item1", "value1"]]);
        assert!(Dataset::parse("", ',', None).unwrap_err().contains("empty"));
        assert!(Dataset::parse("a,b\n", ',', None)
            .unwrap_err()
            .contains("no document"));
        let e = Dataset::parse("a,b\n1,2\n3\n", ',', None).unwrap_err();
        assert!(e.contains("line 3") && e.contains("1 fields"), "{e}");
        assert!(Dataset::parse("a\n\"open\n", ',', None)
            .unwrap_err()
            .contains("not closed"));
    }

    #[test]
    fn fields_fill_placeholders() {
        let d = Dataset::parse("t,c\nx{y,z\n", ',', None).unwrap();
        let filled = d
            .fill("doc __field:t__/__field:c__ __field:", 0, |v| {
                v.replace('{', "<")
            })
            .unwrap();
        assert_eq!(filled, "doc x<y/z __field:");
        let e = d
            .fill("__field:nope__", 0, str::to_string)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("`--dataset`") && e.contains("nope") && e.contains("t, c"),
            "{e}"
        );
    }
}
