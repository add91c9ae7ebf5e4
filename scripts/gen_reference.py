#!/usr/bin/env python3
"""Generate the spec and report references and the Node package's types from the Rust sources.

    scripts/gen_reference.py           # write every generated file (below)
    scripts/gen_reference.py --check   # exit 1 if a committed file differs from a fresh run

The workload spec is the serde structs of core/src/spec/*.rs (read by rust_source.py); the
report is its JSON Schema, which the core derives from the types of core/src/report/ (read by
schema_source.py, written to docs/reference/report.schema.json): each field's `///`
doc comment, its type, its default (`#[serde(default)]`, or the body of the
`#[serde(default = "fn")]` function) and its allowed values (enums, `range(...)` checks, string
lists) are read from there, so neither the reference pages (docs/reference/spec.md, report.md,
written here), the TypeScript declarations (bindings-node/spec.d.ts, report.d.ts, written by
node_types.py) nor the Python report classes (the marked regions of
bindings-python/python/respload/report.py, written by python_types.py) can drift from the code.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import node_types
import python_types
import schema_source
from node_types import camel
from rust_source import (
    RAW_KEYS,
    ROOT,
    SPEC_FILES,
    Field,
    Item,
    ParseError,
    Source,
    documented,
    named,
    parse_file,
    split_top,
    unwrap,
    written,
)

OUT_SPEC = ROOT / "docs/reference/spec.md"
OUT_REPORT = ROOT / "docs/reference/report.md"
# The report's JSON Schema, published beside its reference (what the report half is read from).
OUT_REPORT_SCHEMA = ROOT / "docs/reference/report.schema.json"
# The spec's JSON Schema, for editors and checks of spec files (the reference is still read
# from the Rust sources).
OUT_SPEC_SCHEMA = ROOT / "docs/reference/spec.schema.json"

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
# Placeholders for the keys of maps in the report, by field name.
MAP_KEYS = {
    "commands": "<LABEL>",
    "nodes": "<host:port>",
    "errors_by_kind": "<KIND>",
    "config": "<name>",
}


def slug(heading: str) -> str:
    """GitHub's heading id (pymdownx.slugs with case=lower, as mkdocs.yml sets)."""
    text = re.sub(r"[^\w\- ]", "", heading.lower())
    return text.replace(" ", "-")


def cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


# ---- types ---------------------------------------------------------------------------------


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
            for k in RAW_KEYS:
                allowed = k.allowed.format(**src.consts)
                where = " Top level only." if k.top_only and k.name != "phases" else ""
                out.append(
                    f"| `{k.name}` | {k.md_type} | {k.default} | {allowed} | {k.doc}{where} |"
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
        "is_false": "when true",
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
        "<!-- Generated by scripts/gen_reference.py from core/src/report/: "
        "do not edit by hand, run `make docs`. -->\n",
        "# Report reference\n",
        "Every key of the report, generated from the doc comments of the Rust types "
        "(`core/src/report/`): the JSON that `respload run --json` "
        "writes, `Report.to_json()` in Python and `report.toJSON()` in Node. Python's typed "
        "attributes have the same names; Node's report objects use the camelCase name in the "
        "**Node** column. [Reading the report](../report.md) explains the figures and "
        "[How respload measures](../measuring.md) what they include. The same types as a JSON "
        "Schema, which this page and the Python and Node report types are generated from: "
        "[report.schema.json](report.schema.json) (`respload schema report` prints it).\n",
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
    spec = Source()
    for path in SPEC_FILES:
        parse_file(path, spec)
    schema = schema_source.generate()
    report = schema_source.load(schema)
    pages = {
        OUT_SPEC: spec_reference(spec),
        OUT_REPORT: report_reference(report),
        OUT_REPORT_SCHEMA: schema,
        OUT_SPEC_SCHEMA: schema_source.generate("spec"),
    }
    python = python_types.report_py(
        report, node_types.report_items(report), python_types.OUT.read_text(encoding="utf-8")
    )
    return pages | node_types.generate(spec, report) | {python_types.OUT: python}


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
