"""The Rust types behind the workload spec, read from their sources.

The serde structs and enums of core/src/spec/*.rs: each field's `///` doc comment, type
and serde attributes, each enum's variants, the default functions, constants and `range(...)`
checks. gen_reference.py writes the docs' reference pages and the Node package's `.d.ts` files
from them. The parser knows the layout the code uses (one field per line, attributes above it)
and fails loudly on anything else, rather than leave a field out.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SPEC_FILES = sorted((ROOT / "core/src/spec").glob("*.rs"))
# The report layer's files: schema_source.py names the one a report type is declared in (the
# report's types are read from its JSON Schema, not from these).
REPORT_FILES = sorted((ROOT / "core/src/report").glob("*.rs"))

# Enums written by a variant name (snake_case) although they deserialize by hand.
NAMED_VARIANTS = {"Distribution"}


class ParseError(Exception):
    """The sources have a shape this script does not know: teach it rather than skip."""


@dataclass
class Field:
    name: str
    ty: str
    doc: str
    serde: dict[str, str | None]
    source: str


@dataclass
class Variant:
    name: str
    doc: str
    payload: str = ""
    fields: list[Field] = field(default_factory=list)
    default: bool = False
    rename: str | None = None


@dataclass
class Item:
    kind: str  # struct, enum, tuple
    name: str
    doc: str
    attrs: list[str]
    source: str
    fields: list[Field] = field(default_factory=list)
    variants: list[Variant] = field(default_factory=list)
    custom_de: bool = False
    module_doc: str = ""
    # Why its body could not be read: raised only if the reference needs this type.
    error: str = ""

    def serde_container(self) -> dict[str, str | None]:
        out: dict[str, str | None] = {}
        for a in self.attrs:
            out.update(serde_args(a))
        return out


@dataclass
class Source:
    items: dict[str, Item] = field(default_factory=dict)
    fns: dict[str, str] = field(default_factory=dict)
    consts: dict[str, str] = field(default_factory=dict)
    const_docs: dict[str, str] = field(default_factory=dict)
    ranges: dict[str, tuple[str, str]] = field(default_factory=dict)
    module_docs: dict[str, str] = field(default_factory=dict)


def serde_args(attr: str) -> dict[str, str | None]:
    """`#[serde(default = "f", skip_serializing_if = "g")]` -> {"default": "f", ...}."""
    m = re.fullmatch(r"#\[serde\((.*)\)\]", attr, re.S)
    if not m:
        return {}
    out: dict[str, str | None] = {}
    for part in split_top(m.group(1)):
        part = part.strip()
        if not part:
            continue
        if "=" in part:
            k, v = part.split("=", 1)
            out[k.strip()] = v.strip().strip('"')
        else:
            out[part] = None
    known = {
        "default",
        "skip_serializing_if",
        "deny_unknown_fields",
        "rename_all",
        "untagged",
        "flatten",
        # Reading only (a field's type and documentation are as declared).
        "deserialize_with",
    }
    unknown = set(out) - known
    if unknown:
        raise ParseError(f"serde attribute {sorted(unknown)} in {attr}: teach gen_reference.py")
    return out


def split_top(text: str, sep: str = ",") -> list[str]:
    """Split on `sep` outside brackets and quotes."""
    parts, depth, cur, quoted = [], 0, "", False
    for ch in text:
        if ch == '"':
            quoted = not quoted
        elif not quoted and ch in "([{<":
            depth += 1
        elif not quoted and ch in ")]}>":
            depth -= 1
        if ch == sep and depth == 0 and not quoted:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    parts.append(cur)
    return parts


def join_doc(lines: list[str]) -> str:
    """Doc comment lines as one paragraph, rustdoc links as code."""
    paragraphs = "\n".join(line.strip() for line in lines).split("\n\n")
    text = "\n\n".join(" ".join(p.split()) for p in paragraphs).strip()
    text = re.sub(r"\[`([^`]+)`\]\([^)]*\)", r"`\1`", text)
    text = re.sub(r"\[`([^`]+)`\]", r"`\1`", text)
    return text


def parse_file(path: Path, src: Source) -> None:
    text = path.read_text(encoding="utf-8")
    rel = path.relative_to(ROOT).as_posix()
    text = text.split("#[cfg(test)]")[0]
    src.module_docs[rel] = join_doc(
        [line[3:] for line in text.splitlines() if line.startswith("//!")]
    )
    for fm in re.finditer(r"^fn (\w+)\(\) -> [^{]+\{\n(.*?)\n\}", text, re.M | re.S):
        src.fns[fm.group(1)] = " ".join(fm.group(2).split())
    for fm in re.finditer(r"^pub const (\w+): [^=]+= (.*?);$", text, re.M | re.S):
        src.consts[fm.group(1)] = " ".join(fm.group(2).split())
    for fm in re.finditer(r"((?:^///.*\n)+)pub const (\w+)", text, re.M):
        src.const_docs[fm.group(2)] = join_doc([line[3:] for line in fm.group(1).splitlines()])
    for fm in re.finditer(r'range\(p, "([\w.]+)", [^,]+, ([\d_]+), ([\w:]+)\)', text):
        src.ranges[fm.group(1)] = (fm.group(2).replace("_", ""), fm.group(3).replace("_", ""))
    lines = text.splitlines()
    docs: list[str] = []
    attrs: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("///"):
            docs.append(line[3:])
        elif line.startswith("#["):
            attr, i = read_attr(lines, i)
            attrs.append(attr)
        elif m := re.match(r"pub (struct|enum) (\w+) \{$", line):
            end = lines.index("}", i)
            item = Item(m.group(1), m.group(2), join_doc(docs), attrs, rel)
            item.module_doc = src.module_docs[rel]
            body = lines[i + 1 : end]
            try:
                if item.kind == "struct":
                    item.fields = parse_fields(body, f"{rel}: struct {item.name}", pub=True)
                else:
                    item.variants = parse_variants(body, f"{rel}: enum {item.name}")
            except ParseError as e:
                item.error = str(e)
            add(src, item)
            i = end
            docs, attrs = [], []
        elif m := re.match(r"pub struct (\w+)\((.*)\);$", line):
            item = Item("tuple", m.group(1), join_doc(docs), attrs, rel)
            item.module_doc = src.module_docs[rel]
            add(src, item)
            docs, attrs = [], []
        elif line.strip() and not line.startswith("//"):
            docs, attrs = [], []
        i += 1
    for fm in re.finditer(r"impl<'de> Deserialize<'de> for (\w+)", text):
        if fm.group(1) in src.items:
            src.items[fm.group(1)].custom_de = True


def add(src: Source, item: Item) -> None:
    if item.name in src.items:
        other = src.items[item.name].source
        item.error = f"{item.name} is defined twice ({other}, {item.source}): which one is meant?"
    src.items[item.name] = item


def read_attr(lines: list[str], i: int) -> tuple[str, int]:
    """An attribute, possibly over several lines; returns it and its last line's index."""
    attr = lines[i].strip()
    while attr.count("[") != attr.count("]"):
        i += 1
        attr += " " + lines[i].strip()
    return attr, i


def parse_fields(body: list[str], where: str, pub: bool) -> list[Field]:
    fields: list[Field] = []
    docs: list[str] = []
    serde: dict[str, str | None] = {}
    # Private fields are serialized too: read them all, documented or not (checked in use).
    prefix = r"(?:pub(?:\(crate\))? )?" if pub else r""
    i = 0
    while i < len(body):
        line = body[i].strip()
        if not line or (line.startswith("//") and not line.startswith("///")):
            pass
        elif line.startswith("///"):
            docs.append(line[3:])
        elif line.startswith("#["):
            attr, i = read_attr([b.strip() for b in body], i)
            serde.update(serde_args(attr))
        elif m := re.fullmatch(prefix + r"(\w+): ([^/]+),(\s*//.*)?", line):
            fields.append(Field(m.group(1), m.group(2), join_doc(docs), serde, where))
            docs, serde = [], {}
        else:
            raise ParseError(f"{where}: cannot read line `{line}`")
        i += 1
    if docs:
        raise ParseError(f"{where}: a doc comment without a field")
    return fields


def parse_variants(body: list[str], where: str) -> list[Variant]:
    variants: list[Variant] = []
    docs: list[str] = []
    default = False
    rename: str | None = None
    i = 0
    while i < len(body):
        line = body[i].strip()
        if not line:
            pass
        elif line.startswith("///"):
            docs.append(line[3:])
        elif line == "#[default]":
            default = True
        elif m := re.fullmatch(r'#\[serde\(rename = "([^"]+)"\)\]', line):
            rename = m.group(1)
        elif m := re.fullmatch(r"(\w+)(\((.*)\))?,", line):
            v = Variant(m.group(1), join_doc(docs), m.group(3) or "", [], default, rename)
            variants.append(v)
            docs, default, rename = [], False, None
        elif m := re.fullmatch(r"(\w+) \{", line):
            end = next(j for j in range(i, len(body)) if body[j].strip() == "},")
            inner = parse_fields(body[i + 1 : end], f"{where}::{m.group(1)}", pub=False)
            variants.append(Variant(m.group(1), join_doc(docs), "", inner, default, rename))
            docs, default, rename = [], False, None
            i = end
        else:
            raise ParseError(f"{where}: cannot read line `{line}`")
        i += 1
    return variants


def snake(name: str) -> str:
    return re.sub(r"(?<!^)([A-Z])", r"_\1", name).lower()


def written(item: Item, v: Variant) -> str:
    """How a unit variant is written in a spec, by serde's renaming rules."""
    if v.rename is not None:
        return v.rename
    rule = item.serde_container().get("rename_all")
    words = snake(v.name)
    by_rule = {
        "snake_case": words,
        "kebab-case": words.replace("_", "-"),
        "lowercase": v.name.lower(),
        "UPPERCASE": v.name.upper(),
        "SCREAMING_SNAKE_CASE": words.upper(),
        "SCREAMING-KEBAB-CASE": words.upper().replace("_", "-"),
        "PascalCase": v.name,
        "camelCase": v.name[:1].lower() + v.name[1:],
    }
    if rule is not None:
        if rule not in by_rule:
            raise ParseError(f"{item.source}: rename_all = {rule!r}: teach gen_reference.py")
        return by_rule[rule]
    # Hand-written deserializers here take snake_case names; derived ones the name as is.
    return words if item.custom_de else v.name


def named(item: Item) -> bool:
    """Whether the enum is written as one of its variant names (with parameters, if any)."""
    return "rename_all" in item.serde_container() or item.name in NAMED_VARIANTS


def unwrap(ty: str) -> tuple[str, str]:
    """(`Option`/`Vec`/`BTreeMap`/`` wrapper, inner type) of a field type."""
    for wrapper in ("Option", "Vec"):
        if ty.startswith(wrapper + "<") and ty.endswith(">"):
            return wrapper, ty[len(wrapper) + 1 : -1]
    if m := re.fullmatch(r"BTreeMap<String, (.+)>", ty):
        return "BTreeMap", m.group(1)
    return "", ty


def documented(item: Item) -> Item:
    """The item, once it was read whole and every field of it has a doc comment."""
    if item.error:
        raise ParseError(item.error)
    for f in item.fields:
        if not f.doc:
            raise ParseError(f"{item.source}: field `{f.name}` of {item.name} has no doc comment")
    return item


# ---- keys read before serde ----------------------------------------------------------------


@dataclass
class RawKey:
    """A spec key taken out of the raw spec before serde reads it (core/src/spec/mod.rs and
    vars.rs), so it is no struct field: described here, for the reference and the types."""

    name: str
    top_only: bool  # only at the top level of a spec, not inside a phase
    md_type: str
    ts_type: str
    default: str
    allowed: str  # `{CONST}` stands for a constant's value
    doc: str
    ts_note: str = ""  # what TypeScript users should know besides


RAW_KEYS = [
    RawKey(
        "phases",
        True,
        "list of tables",
        "PhaseSpec[]",
        "none",
        "",
        "Phases run in order, each a partial workload (any field of this table) laid over the "
        "base: tables merge, arrays and values replace. Without `phases` the spec is one phase.",
    ),
    RawKey(
        "repeat",
        False,
        "integer",
        "number",
        "`1`",
        "1 to {MAX_REPEAT}",
        "Run the phase this many times in a row, as phases named `NAME #1` ... `NAME #N` "
        "(`main #1` ... without a name); a top-level `repeat` applies to every phase. The "
        "normalized spec has the copies instead.",
    ),
    RawKey(
        "vars",
        True,
        "table",
        "Record<string, unknown>",
        "none",
        "",
        "Variables and their default values (any value: text, number, boolean, table, list). "
        '`"${name}"` anywhere in the spec takes a variable\'s value, with its type when the '
        "string is exactly that, as text among other text; `$${` is a literal `${`. Taken out "
        "before anything else: the normalized spec has the values.",
        'The types describe the values after substitution: a field written `"${name}"` needs '
        "a cast.",
    ),
    RawKey(
        "scales",
        True,
        "table of tables",
        "Record<string, Record<string, unknown>>",
        "none",
        "",
        "Other values for some of the `vars`, by scale name (`[scales.ci]`): the scale asked for "
        "(`--scale NAME`, Python `scale=`, Node `loadSpec(path, { scale })`) applies its values "
        "over the defaults. A variable not declared in `vars` is an error.",
    ),
]
