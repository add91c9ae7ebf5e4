"""The JSON Schemas the core derives from its Rust types (`respload schema spec|report`), and
the report's types read from its schema.

The core derives the schemas with schemars (the report's with each struct's keys in declared
order as `x-field-order`); this module turns the report's into the `Item`s
and `Field`s that gen_reference.py, node_types.py and python_types.py write the report
reference, report.d.ts and the Python report classes from. No Rust source is parsed: a type's
file is only looked up to name it in the reference.
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any

from rust_source import REPORT_FILES, ROOT, Field, Item, ParseError, Source, join_doc, unwrap

SCHEMA = "core/src/report/schema.rs"

# JSON Schema integer formats (schemars) and the Rust types they stand for.
INTEGERS = {"uint8": "u8", "uint16": "u16", "uint32": "u32", "uint64": "u64", "int64": "i64"}

# How a key that is written only when set is left out, by its type (the reference's
# "present" column reads these).
SKIPPED = {"Option": "Option::is_none", "Vec": "Vec::is_empty", "BTreeMap": "BTreeMap::is_empty"}
SKIPPED_SCALAR = {
    "u64": "is_zero",
    "u32": "is_zero",
    "bool": "is_false",
    "String": "String::is_empty",
}


def load(text: str) -> Source:
    """The report's types from the schema's JSON text."""
    schema = json.loads(text)
    src = Source()
    src.consts["SCHEMA_VERSION"] = str(schema["x-schema-version"])
    defs: dict[str, Any] = schema.get("$defs", {})
    texts = {p: p.read_text(encoding="utf-8") for p in REPORT_FILES}
    files = {name: file_of(name, texts) for name in ["Report", *defs]}
    structs = {"Report": schema, **defs}
    for name, node in structs.items():
        item = Item("struct", name, doc(node), [], files[name])
        item.fields = fields(name, node, structs, files[name])
        src.items[name] = item
    return src


def doc(node: dict[str, Any]) -> str:
    """A description as rust_source writes doc comments: paragraphs on one line each."""
    return join_doc(node.get("description", "").split("\n"))


def file_of(name: str, texts: dict[Path, str]) -> str:
    """The file of core/src/report/ that declares the struct (named in the reference)."""
    pattern = re.compile(rf"^pub struct {name}\b", re.M)
    found = [p for p, text in texts.items() if pattern.search(text)]
    if len(found) != 1:
        raise ParseError(f"report type {name} is declared in {len(found)} files of core/src/report")
    return found[0].relative_to(ROOT).as_posix()


def fields(name: str, node: dict[str, Any], structs: dict[str, Any], source: str) -> list[Field]:
    props: dict[str, Any] = node.get("properties", {})
    required = node.get("required", [])
    where = f"{source}: struct {name}"
    order = node.get("x-field-order")
    flat: dict[str, str] = {}
    if order is None:
        # Serde reads a struct with a flattened field as a map, so it has no order: its own
        # keys (required, in order) and the one struct whose keys are all among its own.
        inner = [
            n
            for n, s in structs.items()
            if n != name and s.get("properties") and set(s["properties"]) <= set(props)
        ]
        if len(inner) != 1:
            raise ParseError(f"{where}: no x-field-order, and it flattens {inner}: teach me")
        own = [k for k in required if k not in structs[inner[0]]["properties"]]
        if set(own) | set(structs[inner[0]]["properties"]) != set(props):
            raise ParseError(f"{where}: optional keys of its own besides a flattened struct")
        flat = {"row": inner[0]}
        order = [*own, "row"]
    out = []
    for key in order:
        if key in flat:
            text = doc(structs[flat[key]])
            out.append(Field(key, flat[key], text, {"flatten": None}, where))
            continue
        prop = props[key]
        ty = rust_type(prop, f"{where}: `{key}`")
        serde: dict[str, str | None] = {}
        if "default" in prop:
            serde["default"] = None
        if key not in required:
            wrapper, _ = unwrap(ty)
            skip = SKIPPED.get(wrapper) or SKIPPED_SCALAR.get(ty)
            if skip is None:
                raise ParseError(f"{where}: `{key}` ({ty}) is written only when set: how?")
            serde["skip_serializing_if"] = skip
        out.append(Field(key, ty, doc(prop), serde, where))
    return out


def rust_type(prop: dict[str, Any], where: str) -> str:
    """A property's schema as the Rust type names the generators know (`Option<Vec<u64>>`)."""
    if "$ref" in prop:
        return prop["$ref"].removeprefix("#/$defs/")
    if "anyOf" in prop:
        kinds = [k for k in prop["anyOf"] if k != {"type": "null"}]
        if len(kinds) == 1 and len(prop["anyOf"]) == 2:
            return f"Option<{rust_type(kinds[0], where)}>"
        raise ParseError(f"{where}: anyOf {prop['anyOf']}: teach schema_source.py")
    ty = prop.get("type")
    if ty is None:
        return "Json"
    if isinstance(ty, list):
        rest = [t for t in ty if t != "null"]
        if len(rest) == 1 and len(ty) == 2:
            return f"Option<{rust_type({**prop, 'type': rest[0]}, where)}>"
        raise ParseError(f"{where}: types {ty}: teach schema_source.py")
    if ty == "integer":
        if prop.get("format") not in INTEGERS:
            raise ParseError(f"{where}: integer format {prop.get('format')}: teach me")
        return INTEGERS[prop["format"]]
    if ty == "number":
        return "f64"
    if ty == "boolean":
        return "bool"
    if ty == "string":
        return "String"
    if ty == "array":
        return f"Vec<{rust_type(prop['items'], where)}>"
    if ty == "object" and "additionalProperties" in prop:
        return f"BTreeMap<String, {rust_type(prop['additionalProperties'], where)}>"
    raise ParseError(f"{where}: schema {prop}: teach schema_source.py")


def generate(of: str = "report") -> str:
    """A schema as the core derives it now (the CLI's `respload schema spec|report`)."""
    command = ["cargo", "run", "-q", "--profile", "ci", "--bin", "respload", "--"]
    done = subprocess.run(
        [*command, "schema", of], cwd=ROOT, capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        raise ParseError(f"`respload schema {of}` failed: {done.stderr.strip()}")
    return done.stdout
