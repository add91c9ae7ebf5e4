#!/usr/bin/env python3
"""Generate the spec and report references and the bindings' types from the Rust types' schemas.

    scripts/gen_reference.py           # write every generated file (below)
    scripts/gen_reference.py --check   # exit 1 if a committed file differs from a fresh run

Both halves are read from the JSON Schemas the core derives from its Rust types
(`respload schema spec|report`, read by schema_source.py, published as
docs/reference/spec.schema.json and report.schema.json): each field's `///` doc comment, its
type, its default, its allowed values (enums, the ranges validation checks, name lists) and
each enum's variants come from there, so neither the reference pages (docs/reference/spec.md,
report.md, written here), the TypeScript declarations (bindings-node/spec.d.ts, report.d.ts,
written by node_types.py), the Python report classes (the marked regions of
bindings-python/python/respload/report.py, written by python_types.py) nor the spec's
TypedDicts (bindings-python/python/respload/spec_types.pyi, python_types.py) can drift from
the code. A third document, `respload schema bindings`, gives the names both packages share
with the core (error kinds, limit names, comparison types): binding_names.py writes them.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import binding_names
import node_types
import python_types
import schema_source
from node_types import camel
from reference_items import ROOT, Field, Item, ParseError, Source, documented, unwrap, written

OUT_SPEC = ROOT / "docs/reference/spec.md"
OUT_REPORT = ROOT / "docs/reference/report.md"
# The report's JSON Schema, published beside its reference (what the report half is read from).
OUT_REPORT_SCHEMA = ROOT / "docs/reference/report.schema.json"
# The spec's JSON Schema, published beside its reference (what the spec half is read from;
# editors and checks of spec files use it too).
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


# ---- the spec ------------------------------------------------------------------------------


def spec_reference(src: Source) -> str:
    root = src.items["PhaseSpec"]
    sections: list[tuple[str, Item]] = []  # (heading, struct)
    value_types: list[str] = []

    def walk(item: Item, heading: str, prefix: str) -> None:
        sections.append((heading, documented(item)))
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
    anchors = {item.name: slug(h.strip("`")) for h, item in sections}
    anchors.update({name: slug(name) for name in value_types})
    types = Types(src, anchors)

    out = [
        "<!-- Generated by scripts/gen_reference.py from the spec's JSON Schema (core/src/spec/"
        "*.rs): do not edit by hand, run `make docs`. -->\n",
        "# Workload spec reference\n",
        "Every field of the workload spec, generated from the JSON Schema the core derives from "
        "the Rust types (`core/src/spec/`) and their doc comments, so it lists exactly what the "
        "parser accepts. The [spec guide](../spec.md) explains the fields with examples and what "
        "we chose where the peers differ. The schema itself, for editors and checks of spec "
        "files: [spec.schema.json](spec.schema.json) (`respload schema spec` prints it).\n",
        f"{src.module_docs['core/src/spec/mod.rs']}\n",
        "Columns: **default** is what an absent field means (*none*: the field stays unset, "
        "and the description says what that does; *required*: it must be given); **allowed** "
        "lists the values and ranges checked before any traffic (other checks are in the "
        "description). Unknown fields are errors. Durations, distributions, value sizes and "
        "templates have several written forms: see [Value types](#value-types).\n",
    ]
    for heading, item in sections:
        out.append(f"## {heading}\n")
        where = f"`{item.name}` in `{item.source}`"
        out.append(f"{item.doc} ({where})\n")
        out.append("| field | type | default | allowed | description |")
        out.append("|---|---|---|---|---|")
        if item is root:
            for k in src.raw_keys:
                where = " Top level only." if k.top_only and k.name != "phases" else ""
                out.append(
                    f"| `{k.name}` | {k.md_type} | {k.default} | {k.allowed} | {k.doc}{where} |"
                )
        for f in item.fields:
            out.append(
                f"| `{f.name}` | {cell(types.name(f.ty))} | {cell(f.default)} | "
                f"{cell(f.allowed)} | {cell(f.doc)} |"
            )
        out.append("")
    out.append("## Value types\n")
    out.append("The forms a field of these types may be written in.\n")
    for name in value_types:
        item = src.items[name]
        out.append(f"### {name}\n")
        out.append(f"{item.doc} (`{item.source}`)\n")
        if item.kind != "enum":
            continue
        by_name = item.named
        out.append("| value | parameters | description |" if by_name else "| form | description |")
        out.append("|---|---|---|" if by_name else "|---|---|")
        for v in item.variants:
            if by_name:
                params = " ".join(f"`{vf.name}`: {vf.doc}" for vf in v.fields)
                mark = " (default)" if v.default else ""
                out.append(f'| `"{written(v)}"`{mark} | {cell(params)} | {cell(v.doc)} |')
            else:
                kind = types.name(v.payload) if v.payload else f'`"{written(v)}"`'
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
    spec_schema = schema_source.generate("spec")
    spec = schema_source.load_spec(spec_schema)
    schema = schema_source.generate()
    report = schema_source.load(schema)
    pages = {
        OUT_SPEC: spec_reference(spec),
        OUT_REPORT: report_reference(report),
        OUT_REPORT_SCHEMA: schema,
        OUT_SPEC_SCHEMA: spec_schema,
    }
    python = python_types.report_py(
        report, node_types.report_items(report), python_types.OUT.read_text(encoding="utf-8")
    )
    python_spec = {python_types.OUT_SPEC: python_types.spec_pyi(spec)}
    names = binding_names.load()
    limits = [limit["name"] for limit in names["limits"]]
    return (
        pages
        | node_types.generate(spec, report, limits)
        | {python_types.OUT: python}
        | python_spec
        | binding_names.generate_all(names)
    )


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
            f"gen_reference: {', '.join(stale)} differ from the Rust types: run `make docs` "
            "and commit the result",
            file=sys.stderr,
        )
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
