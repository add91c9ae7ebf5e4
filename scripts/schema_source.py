"""The JSON Schemas the core derives from its Rust types (`respload schema spec|report`), read
into the types and fields the generators write from.

The core derives both schemas with schemars: each struct's keys in declared order as
`x-field-order`, doc comments as descriptions, defaults, ranges and enum variants. This module
turns them into the `Item`s and `Field`s of reference_items.py that gen_reference.py,
node_types.py and python_types.py write the reference pages, the `.d.ts` files and the Python
report classes from. No Rust type is parsed: a type's file is only looked up to name it in the
reference, and the spec reference's introduction is core/src/spec/mod.rs's `//!` comment.
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any

from reference_items import (
    ROOT,
    Field,
    Item,
    NameList,
    ParseError,
    RawKey,
    Source,
    Variant,
    join_doc,
    unwrap,
)

REPORT_FILES = sorted((ROOT / "core/src/report").glob("*.rs"))
SPEC_FILES = sorted((ROOT / "core/src/spec").glob("*.rs"))
SPEC_MOD = "core/src/spec/mod.rs"

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
        item = Item("struct", name, doc(node), files[name])
        item.fields = fields(name, node, structs, files[name])
        src.items[name] = item
    return src


def doc(node: dict[str, Any]) -> str:
    """A description as the generators take doc comments: paragraphs on one line each."""
    return join_doc(node.get("description", "").split("\n"))


def file_of(name: str, texts: dict[Path, str]) -> str:
    """The file that declares the type (named in the reference)."""
    pattern = re.compile(rf"^pub (struct|enum) {name}\b", re.M)
    found = [p for p, text in texts.items() if pattern.search(text)]
    if len(found) != 1:
        raise ParseError(f"type {name} is declared in {len(found)} files: {found}")
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
        inner = rust_type(prop["items"], where)
        n = prop.get("minItems")
        if n is not None and n == prop.get("maxItems"):
            return f"[{inner}; {n}]"
        return f"Vec<{inner}>"
    if ty == "object" and "additionalProperties" in prop:
        return f"BTreeMap<String, {rust_type(prop['additionalProperties'], where)}>"
    raise ParseError(f"{where}: schema {prop}: teach schema_source.py")


# ---- the spec ------------------------------------------------------------------------------

# The largest value of each integer format: a range no narrower is the type's, not a check.
NATURAL = {"uint8": 255, "uint16": 65535, "uint32": 4294967295, "uint64": None}


def load_spec(text: str) -> Source:
    """The spec's types from the schema's JSON text: its tables (structs), value types and the
    keys read before serde."""
    schema = json.loads(text)
    defs: dict[str, Any] = schema.get("$defs", {})
    src = Source()
    src.consts["SCHEMA_VERSION"] = str(schema["x-schema-version"])
    mod = (ROOT / SPEC_MOD).read_text(encoding="utf-8")
    src.module_docs[SPEC_MOD] = join_doc(
        [line[3:] for line in mod.splitlines() if line.startswith("//!")]
    )
    texts = {p: p.read_text(encoding="utf-8") for p in SPEC_FILES}
    nodes = {schema["title"]: schema, **{k: v for k, v in defs.items() if k != "Phase"}}
    for name, node in nodes.items():
        if "enum" in node:
            src.name_lists[name] = NameList(name, doc(node), list(node["enum"]))
            continue
        src.items[name] = spec_item(name, node, file_of(name, texts), defs)
    src.raw_keys = [raw_key(k, schema, defs) for k in schema.get("x-read-before-serde", [])]
    return src


def spec_item(name: str, node: dict[str, Any], source: str, defs: dict[str, Any]) -> Item:
    where = f"{source}: {name}"
    if "x-field-order" in node:
        item = Item("struct", name, doc(node), source)
        required = node.get("required", [])
        for key in node["x-field-order"]:
            prop = node["properties"][key]
            ty = rust_type(prop, f"{where}: `{key}`")
            serde: dict[str, str | None] = {} if key in required else {"default": None}
            f = Field(key, ty, doc(prop), serde, where)
            f.default = "required" if key in required else default_text(prop, ty, defs, where)
            f.names = prop.get("x-names", "").removeprefix("#/$defs/")
            f.allowed = allowed_text(prop, ty, defs, f.names)
            item.fields.append(f)
        return item
    forms = node.get("oneOf") or node.get("anyOf")
    if forms is None:
        if node.get("type") != "object":
            raise ParseError(f"{where}: neither a table, an enum nor forms: teach schema_source")
        # A table read by hand (its keys are the schema's, not a struct's fields).
        return Item("struct", name, doc(node), source, custom_de=True)
    variants = [form for form in forms if "enum" not in form]
    if not all("description" in form for form in variants):
        # Forms without a variant each (a duration): described as a whole.
        return Item("tuple", name, doc(node), source, custom_de=True)
    item = Item("enum", name, doc(node), source, custom_de=True)
    item.named = len(variants) < len(forms) or all("const" in form for form in variants)
    for form in variants:
        kind = form.get("properties", {}).get("kind", {}).get("const")
        if "const" in form:
            v = Variant(form["const"], doc(form), rename=form["const"])
        elif kind is not None:
            v = Variant(kind, doc(form), rename=kind)
            for key, prop in form["properties"].items():
                if key != "kind":
                    ty = rust_type(prop, f"{where}::{kind}: `{key}`")
                    v.fields.append(Field(key, ty, doc(prop), {"default": None}, where))
        else:
            v = Variant("", doc(form), payload=rust_type(form, where))
        v.default = v.rename is not None and node.get("default") == v.rename
        item.variants.append(v)
    return item


def toml(value: Any) -> str:
    """A JSON value as TOML writes it inline."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, list):
        return "[" + ", ".join(toml(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{k} = {toml(v)}" for k, v in value.items()) + " }"
    raise ParseError(f"default {value!r}: no TOML form")


def default_text(prop: dict[str, Any], ty: str, defs: dict[str, Any], where: str) -> str:
    """What an absent key means: a table's own defaults, a value, or none."""
    wrapper, inner = unwrap(ty)
    def_ = defs.get(inner, {})
    if wrapper == "" and "x-field-order" in def_:
        return "its fields' defaults"
    if "default" in prop:
        return f"`{toml(prop['default'])}`"
    if wrapper == "Option":
        return "none"
    if wrapper == "Vec":
        return "`[]`"
    # A key serde defaults to its type's empty value and leaves out when writing it (schemars
    # writes no default then; spec/schema.rs's `never_skipped` marks the other kind).
    empty = {"bool": "`false`", "String": '`""`'}
    if inner in empty:
        return empty[inner]
    if inner in ("u8", "u16", "u32", "u64"):
        return "`0`"
    if "default" in def_:
        return f"`{toml(def_['default'])}`"
    raise ParseError(f"{where}: no default known for `{ty}`")


def allowed_text(prop: dict[str, Any], ty: str, defs: dict[str, Any], names: str) -> str:
    """The values and ranges checked before any traffic."""
    out = []
    lo, hi = prop.get("minimum"), prop.get("maximum")
    natural = NATURAL.get(prop.get("format", ""), -1)
    if lo is not None and (lo != 0 or hi not in (None, natural)):
        out.append(f"{lo} or more" if hi is None else f"{lo} to {hi}")
    if names:
        out.append(", ".join(f"`{n}`" for n in defs[names]["enum"]))
    def_ = defs.get(unwrap(ty)[1], {})
    forms = def_.get("oneOf", [])
    written = [f["const"] for f in forms if "const" in f]
    written += [n for f in forms for n in f.get("enum", [])]
    if written:
        out.append(", ".join(f'`"{n}"`' for n in written))
    return "; ".join(out)


def raw_key(key: str, schema: dict[str, Any], defs: dict[str, Any]) -> RawKey:
    prop = schema["properties"][key]
    ty = prop.get("type")
    table = prop.get("additionalProperties", {}).get("type") == "object"
    if ty == "array" and prop["items"] == {"$ref": "#/$defs/Phase"}:
        md, ts = "list of tables", "PhaseSpec[]"
    elif ty == "object":
        md = "table of tables" if table else "table"
        ts = "Record<string, Record<string, unknown>>" if table else "Record<string, unknown>"
    elif ty == "integer":
        md, ts = "integer", "number"
    else:
        raise ParseError(f"key `{key}` read before serde is {prop}: teach schema_source.py")
    default = f"`{toml(prop['default'])}`" if "default" in prop else "none"
    return RawKey(
        key,
        bool(prop.get("x-top-level-only")),
        md,
        ts,
        default,
        allowed_text(prop, "", defs, ""),
        doc(prop),
    )


def generate(of: str = "report") -> str:
    """A schema as the core derives it now (the CLI's `respload schema spec|report`)."""
    command = ["cargo", "run", "-q", "--profile", "ci", "--bin", "respload", "--"]
    done = subprocess.run(
        [*command, "schema", of], cwd=ROOT, capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        raise ParseError(f"`respload schema {of}` failed: {done.stderr.strip()}")
    return done.stdout
