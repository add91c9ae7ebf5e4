#!/usr/bin/env python3
"""Generate the spec and report references of the docs site from the Rust sources.

    scripts/gen_reference.py           # write docs/reference/spec.md and docs/reference/report.md
    scripts/gen_reference.py --check   # exit 1 if the committed files differ from a fresh run

The workload spec is the serde structs of core/src/spec/*.rs, the report those of
core/src/stats/report.rs and core/src/observe/*.rs: each field's `///` doc comment, its type,
its default (`#[serde(default)]`, or the body of the `#[serde(default = "fn")]` function) and
its allowed values (enums, `range(...)` checks, string lists) are read from there, so the
reference cannot drift from the code. The parser knows the layout the code uses (one field per
line, attributes above it) and fails loudly on anything else, rather than leave a field out.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SPEC_FILES = sorted((ROOT / "core/src/spec").glob("*.rs"))
# Every file of these modules: a report type may live in any of them.
REPORT_FILES = [
    *sorted((ROOT / "core/src/stats").glob("*.rs")),
    *sorted((ROOT / "core/src/observe").glob("*.rs")),
]
OUT_SPEC = ROOT / "docs/reference/spec.md"
OUT_REPORT = ROOT / "docs/reference/report.md"

PRIMITIVES = {
    "u8": "integer",
    "u16": "integer",
    "u32": "integer",
    "u64": "integer",
    "i64": "integer",
    "f64": "number",
    "bool": "boolean",
    "String": "string",
    "Json": "object",
}
# Enums written by a variant name (snake_case) although they deserialize by hand.
NAMED_VARIANTS = {"Distribution"}
# Placeholders for the keys of maps in the report, by field name.
MAP_KEYS = {
    "commands": "<LABEL>",
    "nodes": "<host:port>",
    "errors_by_kind": "<KIND>",
    "config": "<name>",
}


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
    known = {"default", "skip_serializing_if", "deny_unknown_fields", "rename_all", "untagged"}
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


def camel(key: str) -> str:
    """The Node binding's key: an underscore before a lowercase letter goes (docs/node.md)."""
    return re.sub(r"_([a-z])", lambda m: m.group(1).upper(), key)


def slug(heading: str) -> str:
    """GitHub's heading id (pymdownx.slugs with case=lower, as mkdocs.yml sets)."""
    text = re.sub(r"[^\w\- ]", "", heading.lower())
    return text.replace(" ", "-")


def cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


# ---- types ---------------------------------------------------------------------------------


def unwrap(ty: str) -> tuple[str, str]:
    """(`Option`/`Vec`/`BTreeMap`/`` wrapper, inner type) of a field type."""
    for wrapper in ("Option", "Vec"):
        if ty.startswith(wrapper + "<") and ty.endswith(">"):
            return wrapper, ty[len(wrapper) + 1 : -1]
    if m := re.fullmatch(r"BTreeMap<String, (.+)>", ty):
        return "BTreeMap", m.group(1)
    return "", ty


class Types:
    """Names the types of fields, linking to their section or to a value type."""

    def __init__(self, src: Source, anchors: dict[str, str]) -> None:
        self.src = src
        self.anchors = anchors

    def name(self, ty: str) -> str:
        wrapper, inner = unwrap(ty)
        if wrapper == "Option":
            return self.name(inner)
        if wrapper == "Vec":
            return f"list of {self.name(inner)}"
        if wrapper == "BTreeMap":
            return f"map of {self.name(inner)}"
        if m := re.fullmatch(r"\[(\w+); (\d+)\]", ty):
            one = self.name(m.group(1))
            return "[" + ", ".join([one] * int(m.group(2))) + "]"
        if ty in PRIMITIVES:
            return PRIMITIVES[ty]
        if ty in self.anchors:
            return f"[{ty}](#{self.anchors[ty]})"
        raise ParseError(f"type `{ty}` is neither a primitive nor a parsed struct or enum")


# ---- defaults ------------------------------------------------------------------------------


def toml_value(expr: str, src: Source) -> str | None:
    """A Rust expression from a default function, written as TOML; None when not understood."""
    expr = expr.strip()
    if re.fullmatch(r"-?[\d_]+(\.\d+)?", expr):
        return expr.replace("_", "")
    if expr in ("true", "false"):
        return expr
    if m := re.fullmatch(r'"([^"]*)"(\.into\(\)|\.to_string\(\))?', expr):
        return f'"{m.group(1)}"'
    if m := re.fullmatch(r"\[(.*)\]", expr):
        values = [toml_value(x, src) for x in split_top(m.group(1))]
        known = [v for v in values if v is not None]
        return "[" + ", ".join(known) + "]" if len(known) == len(values) else None
    if m := re.fullmatch(r"SpecDuration\(Duration::from_(secs|millis)\((\d+)\)\)", expr):
        return f'"{m.group(2)}{"s" if m.group(1) == "secs" else "ms"}"'
    if m := re.fullmatch(r"ValueSize::Fixed\((\d+)\)", expr):
        return m.group(1)
    if m := re.fullmatch(r"(\w+)\.iter\(\)\.map\(\|v\| v\.to_string\(\)\)\.collect\(\)", expr):
        const = src.consts.get(m.group(1))
        if const is not None:
            return toml_value(const, src)
    if m := re.fullmatch(r"vec!\[(.*)\]", expr):
        items = []
        for part in split_top(m.group(1)):
            part = part.strip()
            if not part:
                continue
            if b := re.fullmatch(r'CommandSpec::builtin\("(\w+)"\)', part):
                items.append(f'{{ name = "{b.group(1)}" }}')
            elif b := re.fullmatch(
                r'CommandSpec \{ weight: (\d+), \.\.CommandSpec::builtin\("(\w+)"\) \}', part
            ):
                items.append(f'{{ name = "{b.group(2)}", weight = {b.group(1)} }}')
            else:
                return None
        return "[" + ", ".join(items) + "]"
    return None


def documented(item: Item) -> Item:
    """The item, once it was read whole and every field of it has a doc comment."""
    if item.error:
        raise ParseError(item.error)
    for f in item.fields:
        if not f.doc:
            raise ParseError(f"{item.source}: field `{f.name}` of {item.name} has no doc comment")
    return item


def default_of(f: Field, src: Source) -> str:
    if "default" not in f.serde:
        return "required"
    fn = f.serde["default"]
    if fn is not None:
        body = src.fns.get(fn)
        if body is None:
            raise ParseError(f"{f.source}: default function `{fn}` of `{f.name}` not found")
        value = toml_value(body, src)
        return f"`{value}`" if value is not None else f"`{body}` (Rust)"
    wrapper, inner = unwrap(f.ty)
    if wrapper == "Option":
        return "none"
    if wrapper == "Vec":
        return "`[]`"
    if inner == "bool":
        return "`false`"
    if inner in ("u8", "u16", "u32", "u64"):
        return "`0`"
    if inner == "String":
        return '`""`'
    item = src.items.get(inner)
    if item and item.kind == "enum":
        chosen = [v for v in item.variants if v.default]
        if len(chosen) != 1:
            raise ParseError(f"{item.source}: enum {inner} has no single #[default] variant")
        return f'`"{written(item, chosen[0])}"`'
    if item and item.kind == "struct":
        return "its fields' defaults"
    if item and item.kind == "tuple":
        raise ParseError(f"{f.source}: `{f.name}` defaults a {inner}: teach gen_reference.py")
    raise ParseError(f"{f.source}: no default known for `{f.name}: {f.ty}`")


def allowed_of(f: Field, path: str, src: Source) -> str:
    out = []
    if path in src.ranges:
        lo, hi = src.ranges[path]
        out.append(f"{lo} or more" if hi == "u64::MAX" else f"{lo} to {hi}")
    for const in re.findall(r"`([A-Z][A-Z_]+)`", f.doc):
        value = src.consts.get(const, "")
        if m := re.fullmatch(r"&\[(.*),?\]", value):
            names = [x.strip().strip('"') for x in split_top(m.group(1)) if x.strip()]
            out.append(", ".join(f"`{n}`" for n in names))
    _, inner = unwrap(f.ty)
    item = src.items.get(inner)
    if item and item.kind == "enum" and named(item):
        out.append(", ".join(f'`"{written(item, v)}"`' for v in item.variants))
    return "; ".join(out)


# ---- the spec ------------------------------------------------------------------------------


def spec_reference(src: Source) -> str:
    root = src.items["Spec"]
    sections: list[tuple[str, Item, str]] = []  # (heading, struct, path prefix)
    value_types: list[str] = []

    def walk(item: Item, heading: str, prefix: str) -> None:
        sections.append((heading, documented(item), prefix))
        for f in item.fields:
            wrapper, inner = unwrap(f.ty)
            if re.fullmatch(r"\[(\w+); \d+\]", inner):
                inner = re.fullmatch(r"\[(\w+); \d+\]", inner).group(1)  # type: ignore[union-attr]
            sub = src.items.get(inner)
            if sub is None:
                continue
            if sub.kind == "struct" and not sub.custom_de:
                path = f"{prefix}{f.name}"
                walk(sub, f"`[[{path}]]`" if wrapper == "Vec" else f"`[{path}]`", path + ".")
            elif inner not in value_types:
                value_types.append(documented(sub).name)
                for v in sub.variants:
                    for vf in v.fields:
                        if vf.ty.removeprefix("Option<").removesuffix(">") in src.items:
                            raise ParseError(f"{sub.source}: nested type in {inner}::{v.name}")

    walk(root, "Top level", "")
    anchors = {item.name: slug(h.strip("`")) for h, item, _ in sections}
    anchors.update({name: slug(name) for name in value_types})
    types = Types(src, anchors)

    out = [
        "<!-- Generated by scripts/gen_reference.py from core/src/spec/*.rs: do not edit by "
        "hand, run `make docs`. -->\n",
        "# Workload spec reference\n",
        "Every field of the workload spec, generated from the doc comments and serde attributes "
        "of the Rust types (`core/src/spec/`), so it lists exactly what the parser accepts. "
        "The [spec guide](../spec.md) explains the fields with examples and what we chose where "
        "the peers differ.\n",
        f"{src.module_docs['core/src/spec/mod.rs']}\n",
        "Columns: **default** is what an absent field means (*none*: the field stays unset, "
        "and the description says what that does; *required*: it must be given); **allowed** "
        "lists the values and ranges checked before any traffic (other checks are in the "
        "description). Unknown fields are errors. Durations, distributions, value sizes and "
        "templates have several written forms: see [Value types](#value-types).\n",
    ]
    for heading, item, prefix in sections:
        out.append(f"## {heading}\n")
        where = f"`{item.name}` in `{item.source}`"
        out.append(f"{item.doc} ({where})\n")
        out.append("| field | type | default | allowed | description |")
        out.append("|---|---|---|---|---|")
        if item is root:
            out.append(
                "| `phases` | list of tables | none | | Phases run in order, each a partial "
                "workload (any field of this table) laid over the base: tables merge, arrays "
                "and values replace. Without `phases` the spec is one phase. |"
            )
        for f in item.fields:
            path = f"{prefix}{f.name}"
            allowed = allowed_of(f, path, src)
            out.append(
                f"| `{f.name}` | {cell(types.name(f.ty))} | {cell(default_of(f, src))} | "
                f"{cell(allowed)} | {cell(f.doc)} |"
            )
        out.append("")
    out.append("## Value types\n")
    out.append("The forms a field of these types may be written in.\n")
    for name in value_types:
        item = src.items[name]
        out.append(f"### {name}\n")
        doc = item.doc
        if item.kind == "tuple":
            doc = f"{item.module_doc} {doc}".strip()
        out.append(f"{doc} (`{item.source}`)\n")
        if item.kind != "enum":
            continue
        by_name = named(item)
        out.append("| value | parameters | description |" if by_name else "| form | description |")
        out.append("|---|---|---|" if by_name else "|---|---|")
        for v in item.variants:
            if by_name:
                params = " ".join(f"`{vf.name}`: {vf.doc}" for vf in v.fields)
                mark = " (default)" if v.default else ""
                out.append(f'| `"{written(item, v)}"`{mark} | {cell(params)} | {cell(v.doc)} |')
            else:
                kind = types.name(v.payload) if v.payload else f'`"{written(item, v)}"`'
                out.append(f"| {cell(kind)} | {cell(v.doc)} |")
        out.append("")
    return "\n".join(out).rstrip() + "\n"


# ---- the report ----------------------------------------------------------------------------


def presence(f: Field) -> str:
    skip = f.serde.get("skip_serializing_if")
    if skip is None:
        return "always"
    return {
        "Option::is_none": "when set",
        "Vec::is_empty": "when not empty",
        "BTreeMap::is_empty": "when not empty",
        "is_zero": "when not 0",
    }.get(skip) or f"unless `{skip}`"


def report_reference(src: Source) -> str:
    root = src.items["Report"]
    order: list[Item] = []
    used: dict[str, dict[str, list[str]]] = {}  # type -> parent type -> keys in the parent

    def walk(item: Item) -> None:
        order.append(documented(item))
        for f in item.fields:
            wrapper, inner = unwrap(f.ty)
            sub = src.items.get(inner)
            if sub is None:
                continue
            if sub.kind != "struct":
                raise ParseError(f"{sub.source}: report type {inner} is not a struct")
            key = f.name
            if wrapper == "Vec":
                key += "[]"
            elif wrapper == "BTreeMap":
                key += "." + MAP_KEYS.get(f.name, "<key>")
            used.setdefault(inner, {}).setdefault(item.name, []).append(key)
            if sub not in order:
                walk(sub)

    walk(root)
    anchors = {item.name: slug(item.name) for item in order}
    types = Types(src, anchors)
    out = [
        "<!-- Generated by scripts/gen_reference.py from core/src/stats/report.rs and "
        "core/src/observe/: do not edit by hand, run `make docs`. -->\n",
        "# Report reference\n",
        "Every key of the report, generated from the doc comments of the Rust types "
        "(`core/src/stats/report.rs`, `core/src/observe/`): the JSON that `respload run --json` "
        "writes, `Report.to_json()` in Python and `report.toJSON()` in Node. Python's typed "
        "attributes have the same names; Node's report objects use the camelCase name in the "
        "**Node** column. [Reading the report](../report.md) explains the figures and "
        "[How respload measures](../measuring.md) what they include.\n",
        f"{root.doc} The schema version is `SCHEMA_VERSION` = "
        f"`{src.consts.get('SCHEMA_VERSION', '?')}`, bumped when a field changes meaning or "
        "goes away.\n",
        "Columns: **present** says when a key is written (keys left out when empty keep the "
        "JSON small: outside cluster mode there is no `nodes`, in closed loop no "
        "`service_ms`); in maps, `<LABEL>` is a command label (`GET`, `SESSION:HSET`), "
        "`<KIND>` an error kind, `<host:port>` a cluster node. Node keeps map keys as they "
        "are.\n",
    ]
    for item in order:
        out.append(f"## {item.name}\n")
        out.append(f"{item.doc}\n")
        where = [
            f"[{parent}](#{anchors[parent]}) " + ", ".join(f"`{k}`" for k in keys)
            for parent, keys in used.get(item.name, {}).items()
        ]
        at = f"At: {'; '.join(where)}. " if where else ""
        out.append(f"{at}(`{item.name}` in `{item.source}`)\n")
        out.append("| key | Node | type | present | description |")
        out.append("|---|---|---|---|---|")
        for f in item.fields:
            out.append(
                f"| `{f.name}` | `{camel(f.name)}` | {cell(types.name(f.ty))} | {presence(f)} "
                f"| {cell(f.doc)} |"
            )
        out.append("")
    return "\n".join(out).rstrip() + "\n"


def generate() -> dict[Path, str]:
    spec, report = Source(), Source()
    for path in SPEC_FILES:
        parse_file(path, spec)
    for path in REPORT_FILES:
        parse_file(path, report)
    return {OUT_SPEC: spec_reference(spec), OUT_REPORT: report_reference(report)}


def main() -> int:
    check = "--check" in sys.argv[1:]
    try:
        pages = generate()
    except ParseError as e:
        print(f"gen_reference: {e}", file=sys.stderr)
        return 2
    stale = []
    for path, text in pages.items():
        old = path.read_text(encoding="utf-8") if path.exists() else None
        if old == text:
            continue
        if check:
            stale.append(path.relative_to(ROOT).as_posix())
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
            print(f"gen_reference: wrote {path.relative_to(ROOT)}", file=sys.stderr)
    if stale:
        print(
            f"gen_reference: {', '.join(stale)} differ from the Rust sources: run `make docs` "
            "and commit the result",
            file=sys.stderr,
        )
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
