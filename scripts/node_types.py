"""The Node package's TypeScript declarations of the spec and the report, from the JSON Schemas
the core derives from its Rust types (read by schema_source.py).

bindings-node/spec.d.ts: the workload spec as JavaScript objects take it, snake_case keys exactly
as spec files write them; a key serde fills in when absent is optional, and the value types
(durations, distributions, sizes, templates) are unions of their written forms.

bindings-node/report.d.ts: report objects as bindings-node/index.js builds them from the JSON:
camelCase keys (its `camelKey`), except inside the maps whose keys are data (its `MAP_FIELDS`)
and in the normalized workload (its `VERBATIM_FIELDS`, typed by spec.d.ts). A key the JSON
leaves out (`skip_serializing_if`) is optional, an `Option` written as null is `| null`.

Every interface and property carries the Rust `///` doc comment (the schema's description) as
JSDoc. gen_reference.py
writes both files and checks them with the reference pages.
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Callable
from pathlib import Path

from reference_items import (
    ROOT,
    Field,
    Item,
    ParseError,
    RawKey,
    Source,
    documented,
    unwrap,
    written,
)

OUT_SPEC = ROOT / "bindings-node/spec.d.ts"
OUT_REPORT = ROOT / "bindings-node/report.d.ts"
INDEX_JS = ROOT / "bindings-node/index.js"

WIDTH = 100
PRIMITIVES = {
    "u8": "number",
    "u16": "number",
    "u32": "number",
    "u64": "number",
    "i64": "number",
    "f64": "number",
    "bool": "boolean",
    "String": "string",
}
# Types deserialized by hand from several JSON types, as their doc comments describe them (the
# parser cannot read a hand-written deserializer): a new one must be taught here. `Thresholds`
# is written from the core's limit names (`respload schema bindings`, thresholds_form()).
HAND_FORMS = {"SpecDuration": "string | number"}


def thresholds_form(limits: list[str]) -> str:
    """The spec's `[thresholds]` table: each of the core's limits, the same per command, and
    whether crossing one stops the run."""

    def each(indent: str) -> str:
        text = " ".join(f"{name}?: number;" for name in limits).rstrip(";")
        return f"\n{indent}".join(textwrap.wrap(text, WIDTH - len(indent) - 4))

    return (
        f"{{\n  {each('  ')};\n  commands?: Record<string, {{\n    {each('    ')}\n  }}>;\n"
        "  abort_on_fail?: boolean; delay_abort_eval?: SpecDuration\n}"
    )


# What TypeScript users should know of a key read before serde, besides its description.
TS_NOTES = {
    "vars": 'The types describe the values after substitution: a field written `"${name}"` '
    "needs a cast.",
}
# Rust structs whose TypeScript name is not the rule's: the report's root holds the fields of
# index.d.ts's `Report` class (which adds the methods).
TS_NAMES = {"Report": "ReportFields"}
# The fields index.js keeps verbatim (VERBATIM_FIELDS) are normalized specs: their types.
VERBATIM_TYPES = {
    ("Report", "workload"): "Spec",
    ("PhaseReport", "workload"): "PhaseSpec",
    ("ShardOf", "workload"): "Spec",
}


def camel(key: str) -> str:
    """The Node binding's key: an underscore before a lowercase letter goes (docs/node.md)."""
    return re.sub(r"_([a-z])", lambda m: m.group(1).upper(), key)


def spec_name(item: Item) -> str:
    """A spec struct's TypeScript name: `Target` -> `TargetSpec` (the names index.d.ts had)."""
    if item.name in TS_NAMES:
        return TS_NAMES[item.name]
    return item.name if item.name.endswith("Spec") else item.name + "Spec"


def literal(value: str) -> str:
    return f"'{value}'"


def type_names(ty: str) -> list[str]:
    """The named types inside a field type (`Option<Vec<Template>>` -> [`Template`])."""
    names = re.findall(r"[A-Za-z_]\w*", ty)
    wrappers = ("Option", "Vec", "BTreeMap", "Json")
    return [n for n in names if n not in wrappers and n not in PRIMITIVES]


def ts_type(ty: str, name_of: Callable[[str], str], string: str = "string") -> str:
    """A Rust field type in TypeScript; `name_of` names the parsed types, `string` is String's."""
    wrapper, inner = unwrap(ty)
    if wrapper == "Option":
        return ts_type(inner, name_of, string)
    if wrapper == "Vec":
        return array(ts_type(inner, name_of, string))
    if wrapper == "BTreeMap":
        return f"Record<string, {ts_type(inner, name_of, string)}>"
    if m := re.fullmatch(r"\[(\w+); (\d+)\]", ty):
        one = ts_type(m.group(1), name_of, string)
        return "[" + ", ".join([one] * int(m.group(2))) + "]"
    if ty == "String":
        return string
    if ty in PRIMITIVES:
        return PRIMITIVES[ty]
    return name_of(ty)


def array(ty: str) -> str:
    simple = re.fullmatch(r"\w+(\[\])*", ty) or re.fullmatch(r"\[[\w, ]+\]", ty)
    return f"{ty}[]" if simple else f"Array<{ty}>"


def jsdoc(text: str, indent: str = "") -> list[str]:
    """A doc comment as JSDoc lines: paragraphs split on blank lines, `- ` lines kept apart."""
    text = text.replace("*/", "*\\/")
    one = f"{indent}/** {text} */"
    if "\n" not in text and len(one) <= WIDTH:
        return [one]
    out = [f"{indent}/**"]
    for i, paragraph in enumerate(text.split("\n\n")):
        if i:
            out.append(f"{indent} *")
        for line in paragraph.split("\n"):
            hanging = "  " if line.startswith("- ") else ""
            wrapped = textwrap.wrap(
                line,
                WIDTH - len(indent) - 3,
                subsequent_indent=hanging,
                break_long_words=False,
                break_on_hyphens=False,
            )
            out.extend(f"{indent} * {w}" for w in wrapped)
    out.append(f"{indent} */")
    return out


def union(head: str, forms: list[str]) -> str:
    """`head = a | b` on one line when it fits, else one form per line."""
    flat = f"{head} = " + " | ".join(forms)
    if "\n" not in flat and len(flat) <= WIDTH:
        return flat
    return f"{head} =" + "".join(f"\n  | {f}" for f in forms)


# ---- the spec ------------------------------------------------------------------------------


class SpecTypes:
    """The spec's structs (reached from `PhaseSpec`), its value types and string lists, in
    order."""

    def __init__(self, src: Source, limits: list[str] | None = None) -> None:
        self.src = src
        self.forms = dict(HAND_FORMS)
        if limits is not None:
            self.forms["Thresholds"] = thresholds_form(limits)
        self.structs: list[Item] = []
        self.values: list[Item] = []
        self.lists: list[str] = []
        self.walk(src.items["PhaseSpec"])

    def walk(self, item: Item) -> None:
        self.structs.append(documented(item))
        for f in item.fields:
            for name in type_names(f.ty):
                sub = self.src.items.get(name)
                if sub is None:
                    raise ParseError(f"{f.source}: type `{name}` of `{f.name}` was not parsed")
                if sub.kind == "struct" and not sub.custom_de:
                    if sub not in self.structs:
                        self.walk(sub)
                elif sub not in self.values:
                    self.values.append(documented(sub))
            if f.names and f.names not in self.lists:
                if f.names not in self.src.name_lists:
                    raise ParseError(f"{f.source}: `{f.name}` takes names of {f.names}: unknown")
                self.lists.append(f.names)

    def name(self, ty: str) -> str:
        item = self.src.items[ty]
        return spec_name(item) if item in self.structs else item.name

    def field_type(self, f: Field) -> str:
        string = "string"
        if f.names:
            string = f.names
            # The doc comment says when names match in any case: upper case is typed too.
            if "case-insensitive" in f.doc:
                string = f"{string} | Uppercase<{string}> | (string & {{}})"
        if string != "string" and unwrap(f.ty)[1] != "String":
            string = f"({string})"
        return ts_type(f.ty, self.name, string)

    def variant_fields(self, item: Item) -> list[str]:
        """The table forms of an enum written by name, `{ kind: ..., parameters }`."""
        units = [literal(written(v)) for v in item.variants if not v.fields]
        out = [f"{{ kind: {' | '.join(units)} }}"] if units else []
        for v in item.variants:
            if not v.fields:
                continue
            pad = " " * 6  # inside `  | {`
            lines = [f"{pad}kind: {literal(written(v))}"]
            for vf in v.fields:
                # Parameters are all optional: the hand-written deserializer defaults them.
                lines += jsdoc(vf.doc, pad)
                lines.append(f"{pad}{vf.name}?: {ts_type(vf.ty, self.name)}")
            out.append("{\n" + "".join(f"{line}\n" for line in lines) + "    }")
        return out

    def value_type(self, item: Item) -> list[str]:
        if item.kind != "enum":
            if item.name not in self.forms:
                raise ParseError(
                    f"{item.source}: the written forms of {item.name}: teach node_types.py"
                )
            return [*jsdoc(item.doc), f"export type {item.name} = {self.forms[item.name]}", ""]
        forms: list[str] = []
        bullets: list[str] = []
        if item.named:
            tables = any(v.fields for v in item.variants)
            for v in item.variants:
                form = literal(written(v))
                forms.append(form)
                mark = " (the default)" if v.default else ""
                bullets.append(f"- `{form}`{mark}: {v.doc}")
            if tables:
                forms += self.variant_fields(item)
        else:
            for v in item.variants:
                if v.fields:
                    raise ParseError(
                        f"{item.source}: {item.name}::{v.name} has fields: teach node_types.py"
                    )
                form = ts_type(v.payload, self.name) if v.payload else literal(written(v))
                forms.append(form)
                bullets.append(f"- `{form}`: {v.doc}")
        doc = item.doc + "\n\n" + "\n".join(bullets)
        return [*jsdoc(doc), union(f"export type {item.name}", forms), ""]

    def interface(self, item: Item, extra: list[str]) -> list[str]:
        """A struct's interface, with `extra` properties after its fields."""
        out = [*jsdoc(item.doc), f"export interface {spec_name(item)} {{"]
        for f in item.fields:
            # serde fills in an absent field with a default; an absent Option is None.
            optional = "default" in f.serde or unwrap(f.ty)[0] == "Option"
            out += jsdoc(f.doc, "  ")
            out.append(f"  {f.name}{'?' if optional else ''}: {self.field_type(f)}")
        return [*out, *extra, "}", ""]


def raw_key(k: RawKey) -> list[str]:
    """The property of a key read before serde (always optional)."""
    note = TS_NOTES.get(k.name)
    doc = k.doc + (f"\n\n{note}" if note else "")
    return [*jsdoc(doc, "  "), f"  {k.name}?: {k.ts_type}"]


def spec_dts(src: Source, limits: list[str]) -> str:
    types = SpecTypes(src, limits)
    out = [
        "// Generated by scripts/gen_reference.py from the Rust types of core/src/spec/*.rs and",
        "// their doc comments: do not edit by hand, run `make docs`.",
        "//",
        "// The workload spec as JavaScript objects take it: snake_case keys, exactly as spec",
        "// files write them (docs/reference/spec.md). A key with a default may be left out.",
        "",
    ]
    phase_keys = [line for k in src.raw_keys if not k.top_only for line in raw_key(k)]
    top_keys = [line for k in src.raw_keys if k.top_only for line in raw_key(k)]
    root = types.structs[0]
    out += [
        *jsdoc(src.module_docs[root.source]),
        f"export interface Spec extends {spec_name(root)} {{",
        *top_keys,
        "}",
        "",
    ]
    for item in types.structs:
        out += types.interface(item, phase_keys if item is root else [])
    for name in types.lists:
        names = src.name_lists[name]
        out += [
            *jsdoc(names.doc),
            union(f"export type {name}", list(map(literal, names.values))),
            "",
        ]
    for item in types.values:
        out += types.value_type(item)
    return "\n".join(out).rstrip() + "\n"


# ---- the report ----------------------------------------------------------------------------


def kept_keys(index_js: str, const: str) -> set[str]:
    """The keys of one of index.js's sets of fields (`MAP_FIELDS`, `VERBATIM_FIELDS`)."""
    m = re.search(rf"const {const} = new Set\(\[([^\]]*)\]\)", index_js)
    if not m:
        raise ParseError(f"bindings-node/index.js has no `{const}` set: teach node_types.py")
    return set(re.findall(r"'([^']*)'", m.group(1)))


def report_items(src: Source) -> list[Item]:
    """The report's structs, each once, as the report holds them: the report, then the live
    snapshots (a timeline row with the phase)."""
    order: list[Item] = []

    def walk(item: Item) -> None:
        order.append(documented(item))
        for f in item.fields:
            for name in type_names(f.ty):
                sub = src.items.get(name)
                if sub is None or sub.kind != "struct":
                    raise ParseError(f"{f.source}: report type `{name}` is not a parsed struct")
                if sub not in order:
                    walk(sub)

    for root in ("Report", "Snapshot"):
        if src.items[root] not in order:
            walk(src.items[root])
    return order


def report_dts(src: Source, index_js: str) -> str:
    if "key.replace(/_([a-z])/g," not in index_js:
        raise ParseError("bindings-node/index.js camelizes keys another way: update camel()")
    maps = kept_keys(index_js, "MAP_FIELDS")
    verbatim = kept_keys(index_js, "VERBATIM_FIELDS")
    order = report_items(src)

    def name_of(ty: str) -> str:
        return TS_NAMES.get(ty, ty)

    out = [
        "// Generated by scripts/gen_reference.py from the Rust types of core/src/report/ and",
        "// their doc comments: do not edit by hand, run `make docs`.",
        "//",
        "// Report objects as the Node package gives them: the JSON report",
        "// (docs/reference/report.md) with camelCase keys (`ops_per_sec` -> `opsPerSec`; an",
        "// underscore before a digit stays: `p99_9`); map keys (command labels, error kinds,",
        "// config names, host:port) and the normalized `workload` (a spec) are kept as they are.",
        "// The doc comments name the JSON keys.",
        "",
        "import type { PhaseSpec, Spec } from './spec'",
        "",
    ]
    for item in order:
        extends = [name_of(f.ty) for f in item.fields if "flatten" in f.serde]
        head = f"export interface {name_of(item.name)}"
        out += [
            *jsdoc(item.doc),
            head + (f" extends {', '.join(extends)}" if extends else "") + " {",
        ]
        for f in item.fields:
            if "flatten" in f.serde:
                continue
            out += jsdoc(f.doc, "  ")
            out.append(f"  {report_field(item, f, maps, verbatim, name_of)}")
        out += ["}", ""]
    return "\n".join(out).rstrip() + "\n"


def report_field(
    item: Item, f: Field, maps: set[str], verbatim: set[str], name_of: Callable[[str], str]
) -> str:
    """`key?: type` of a report field, as index.js's camelize leaves it."""
    wrapper, inner = unwrap(f.ty)
    where = f"{f.source}: `{f.name}`"
    if f.name in verbatim:
        if (item.name, f.name) not in VERBATIM_TYPES:
            raise ParseError(f"{where} is kept verbatim by index.js: teach node_types.py its type")
        ty = VERBATIM_TYPES[(item.name, f.name)]
    elif f.ty == "Json":
        raise ParseError(
            f"{where} is free-form JSON that index.js would camelize: teach node_types.py"
        )
    elif wrapper == "BTreeMap" and f.name not in maps:
        raise ParseError(f"{where} is a map: add it to MAP_FIELDS in index.js to keep its keys")
    elif wrapper in ("", "Option") and f.name in maps and inner not in PRIMITIVES:
        raise ParseError(f"{where} is a struct whose keys index.js keeps (MAP_FIELDS)")
    else:
        ty = ts_type(f.ty, name_of)
    optional = "skip_serializing_if" in f.serde
    if wrapper == "Option" and not optional:
        ty += " | null"
    return f"{camel(f.name)}{'?' if optional else ''}: {ty}"


def generate(spec: Source, report: Source, limits: list[str]) -> dict[Path, str]:
    """The two `.d.ts` files, by path; `limits`: the core's limit names."""
    return {
        OUT_SPEC: spec_dts(spec, limits),
        OUT_REPORT: report_dts(report, INDEX_JS.read_text(encoding="utf-8")),
    }
