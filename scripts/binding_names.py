"""The names the Python and Node packages share with the core, from `respload schema bindings`.

The core lists its error kinds (code, class, doc comment, parent class, fields), the limit names
(one vocabulary: `check()`, `--check`, `[thresholds]`, `compare --fail-on`,
`Comparison.check()` and a comparison's rows) and the JSON Schema of the comparison
(core/src/error.rs, core/src/report/names.rs). From them:

- bindings-python/python/respload/exceptions.py, between `# generated: errors` and
  `# end generated: errors` (and the `__all__` region): one exception class per kind;
- bindings-python/python/respload/compare.py: the regions of `ComparisonRow` and `Comparison`
  (as report.py's report classes, by python_types.py);
- bindings-python/python/respload/_limits.pyi: the keyword arguments of `Report.check()` and
  `Comparison.check()` as TypedDicts;
- bindings-node/names.js and names.d.ts, whole: the error classes, the map from a code to its
  class, the limit keys of `report.check()` and `comparison.check()` (camelCase, and the core's
  name of each) and the comparison's row type; index.js and index.mjs export what names.js does.

A new error kind, limit or metric in the core thus appears in both packages when
gen_reference.py runs, and `--check` fails while a committed file is older than the core.
"""

from __future__ import annotations

import json
import re
import textwrap
from pathlib import Path
from typing import Any

import python_types
from node_types import camel, jsdoc, union
from reference_items import ROOT, Item, ParseError, Source, join_doc
from schema_source import doc as schema_doc
from schema_source import fields as schema_fields
from schema_source import file_of, generate

PY_EXCEPTIONS = ROOT / "bindings-python/python/respload/exceptions.py"
PY_COMPARE = ROOT / "bindings-python/python/respload/compare.py"
PY_LIMITS = ROOT / "bindings-python/python/respload/_limits.pyi"
NODE_NAMES = ROOT / "bindings-node/names.js"
NODE_NAMES_DTS = ROOT / "bindings-node/names.d.ts"
INDEX_MJS = ROOT / "bindings-node/index.mjs"
WIDTH = 100

# The Python built-in exception each kind's class also derives from, so `except ValueError`
# and friends catch it; a kind not named here derives from RespLoadError alone.
PYTHON_BASES = {
    "Spec": "ValueError",
    "Connect": "ConnectionError",
    "File": "OSError",
    "Internal": "RuntimeError",
}
# Lines a Python class's __init__ adds after its fields, for its built-in base.
PYTHON_EXTRA = {"File": ["self.filename = path  # OSError's name of the file"]}
PYTHON_TYPES = {"string": "str", "errno": "int | None"}
NODE_TYPES = {"string": "string", "errno": "number"}


def load() -> dict[str, Any]:
    """The core's document, checked for the shape this script knows."""
    names: dict[str, Any] = json.loads(generate("bindings"))
    kinds = {e["kind"] for e in names["errors"]}
    for table in (PYTHON_BASES, PYTHON_EXTRA):
        for kind in table:
            if kind not in kinds:
                raise ParseError(f"binding_names.py names an error kind `{kind}` the core lacks")
    for e in names["errors"]:
        e["doc"] = join_doc((e["doc"] or "").split("\n"))
        if not e["doc"]:
            raise ParseError(f"core/src/error.rs: ErrorKind::{e['kind']} has no doc comment")
        for f in e["fields"]:
            if f["type"] not in PYTHON_TYPES:
                raise ParseError(f"error field type `{f['type']}`: teach binding_names.py")
    return names


def wrap(text: str, indent: str, width: int = WIDTH) -> list[str]:
    return textwrap.wrap(
        text,
        width - len(indent),
        initial_indent=indent,
        subsequent_indent=indent,
        break_long_words=False,
        break_on_hyphens=False,
    )


def rst(text: str) -> str:
    """A doc comment's `code` as reStructuredText's ``code``."""
    return re.sub(r"`([^`]+)`", r"``\1``", text)


# ---- Python --------------------------------------------------------------------------------


def python_class(e: dict[str, Any], by_class: dict[str, dict[str, Any]]) -> list[str]:
    parent = e["parent"] or "RespLoadError"
    bases = [parent, *([PYTHON_BASES[e["kind"]]] if e["kind"] in PYTHON_BASES else [])]
    out = [f"class {e['class']}({', '.join(bases)}):"]
    summary = wrap(rst(e["doc"]), "    ")
    summary[0] = '    """' + summary[0].lstrip()
    out += [*summary, "", "    Attributes:"]
    for f in e["fields"]:
        out += textwrap.wrap(
            f"{f['name']}: {rst(f['doc'])}",
            WIDTH,
            initial_indent=" " * 8,
            subsequent_indent=" " * 12,
            break_long_words=False,
            break_on_hyphens=False,
        )
    out += ['    """', "", f'    code = "{e["code"]}"']
    inherited = {f["name"] for f in by_class[parent]["fields"]} if e["parent"] else {"reason"}
    own = [f for f in e["fields"] if f["name"] not in inherited]
    if own or e["kind"] in PYTHON_EXTRA:
        params = []
        for f in e["fields"]:
            if f["name"] == "reason":
                params.append("reason: str | None = None")
            elif f["type"] == "errno":
                params.append(f"{f['name']}: int | None = None")
            else:
                params.append(f'{f["name"]}: str = ""')
        passed = [f"{f['name']}={f['name']}" for f in e["fields"] if f["name"] in inherited]
        out += [
            "",
            "    def __init__(",
            "        self,",
            "        message: str,",
            "        *,",
            *(f"        {p}," for p in params),
            "        code: str | None = None,",
            "    ) -> None:",
            f"        super().__init__(message, {', '.join([*passed, 'code=code'])})",
            *(f"        self.{f['name']} = {f['name']}" for f in own),
            *(f"        {line}" for line in PYTHON_EXTRA.get(e["kind"], [])),
        ]
    return out


def python_exceptions(names: dict[str, Any], current: str) -> str:
    by_class = {e["class"]: e for e in names["errors"]}
    classes: list[str] = []
    for e in names["errors"]:
        classes += ["", "", *python_class(e, by_class)]
    region = [
        "# generated: errors (from core/src/error.rs by scripts/gen_reference.py)",
        *classes[2:],
        "",
        "",
        "# The class of each code, as the core names them.",
        "ERROR_CLASSES: dict[str, type[RespLoadError]] = {",
        *(f'    "{e["code"]}": {e["class"]},' for e in names["errors"]),
        "}",
        "# end generated: errors",
    ]
    exported = sorted([*by_class, "RespLoadError", "UntrustedReportWarning"])
    all_region = [
        "# generated: __all__ (from core/src/error.rs by scripts/gen_reference.py)",
        "__all__ = [",
        *(f'    "{name}",' for name in exported),
        "]",
        "# end generated: __all__",
    ]
    text = replace_region(current, "errors", "\n".join(region), PY_EXCEPTIONS)
    return replace_region(text, "__all__", "\n".join(all_region), PY_EXCEPTIONS)


def replace_region(text: str, name: str, region: str, path: Path, comment: str = "#") -> str:
    marked = re.compile(
        rf"^{comment} generated: {re.escape(name)}\b.*?^{comment} end generated: "
        rf"{re.escape(name)}\n",
        re.M | re.S,
    )
    if len(marked.findall(text)) != 1:
        raise ParseError(
            f"{path.relative_to(ROOT)} has no generated region `{name}`: add its marks "
            f"(`{comment} generated: {name}` and `{comment} end generated: {name}`)"
        )
    return marked.sub(lambda _: region + "\n", text)


def python_limits(names: dict[str, Any]) -> str:
    out = [
        "# Generated by scripts/gen_reference.py from core/src/report/ (`respload schema",
        "# bindings`): do not edit by hand, run `make docs`.",
        '"""The keyword arguments of ``Report.check()`` and ``Comparison.check()``, typed (a',
        'stub: imported by the type checker only)."""',
        "",
        "from typing import TypedDict",
        "",
        "class Limits(TypedDict, total=False):",
        '    """Limits on one set of stats (the totals, or one command\'s); ``None`` is not',
        '    checked."""',
        "",
    ]
    for limit in names["limits"]:
        out += [f"    {limit['name']}: float | None", *docstring(limit["doc"], "    ")]
    out += [
        "",
        "class CompareLimits(TypedDict, total=False):",
        '    """How far each metric may move against the baseline: ``"+10%"`` (relative) or a',
        '    number in the metric\'s unit. The names are ``Limits``\'."""',
        "",
    ]
    for limit in names["limits"]:
        out.append(f"    {limit['name']}: str | float")
    return "\n".join(out) + "\n"


def docstring(text: str, indent: str) -> list[str]:
    lines = wrap(rst(text), indent)
    lines[0] = indent + '"""' + lines[0].lstrip()
    lines[-1] += '"""'
    return lines


def comparison_source(names: dict[str, Any]) -> Source:
    """The comparison's types as python_types.py reads report types."""
    schema = names["comparison"]
    texts = {p: p.read_text(encoding="utf-8") for p in (ROOT / "core/src/report").glob("*.rs")}
    structs = {"Comparison": schema, **schema.get("$defs", {})}
    src = Source()
    for name, node in structs.items():
        source = file_of(name, texts)
        item = Item("struct", name, schema_doc(node), source)
        item.fields = schema_fields(name, node, structs, source)
        src.items[name] = item
    return src


def python_compare(names: dict[str, Any], current: str) -> str:
    src = comparison_source(names)
    order = [src.items["Comparison"], src.items["ComparisonRow"]]
    return python_types.report_py(src, order, current)


# ---- Node ----------------------------------------------------------------------------------


NODE_HEAD = [
    "// Generated by scripts/gen_reference.py from core/src/error.rs and core/src/report/",
    "// (`respload schema bindings`): do not edit by hand, run `make docs`.",
]


def node_names(names: dict[str, Any]) -> str:
    errors = names["errors"]
    out = [
        "'use strict'",
        *NODE_HEAD,
        "//",
        "// The names the package shares with the core: an error class per kind of core error, the",
        "// budget keys of report.check() and the metrics of compare(). index.js re-exports them.",
        "",
        "/** Base class of every error respload throws; `code` is stable (`ERR_RESPLOAD_...`). */",
        "class RespLoadError extends Error {",
        "  constructor(message, options = {}) {",
        "    super(message, options.cause === undefined ? undefined : { cause: options.cause })",
        "    this.code = new.target.code ?? options.code ?? 'ERR_RESPLOAD_INTERNAL'",
        "    if (options.reason !== undefined) this.reason = options.reason",
        "  }",
        "}",
    ]
    by_class = {e["class"]: e for e in errors}
    for e in errors:
        parent = e["parent"] or "RespLoadError"
        inherited = {f["name"] for f in by_class[parent]["fields"]} if e["parent"] else {"reason"}
        own = [f for f in e["fields"] if f["name"] not in inherited]
        out += ["", *jsdoc(node_doc(e)), f"class {e['class']} extends {parent} {{"]
        out.append(f"  static code = '{e['code']}'")
        if own:
            out += ["", "  constructor(message, options = {}) {", "    super(message, options)"]
            for f in own:
                if f["type"] == "errno":
                    out.append(
                        f"    if (options.{f['name']} !== undefined) "
                        f"this.{f['name']} = options.{f['name']}"
                    )
                else:
                    out.append(f"    this.{f['name']} = options.{f['name']} ?? ''")
            out.append("  }")
        out.append("}")
    classes = ["RespLoadError", *(e["class"] for e in errors)]
    out += [
        "",
        "const errorClasses = { " + ", ".join(classes) + " }",
        "for (const cls of Object.values(errorClasses)) {",
        "  Object.defineProperty(cls.prototype, 'name', { value: cls.name, writable: true, "
        "configurable: true })",
        "}",
        "",
        "/** The class of each code. */",
        "const ERROR_CLASSES = {",
        *(f"  {e['code']}: {e['class']}," for e in errors),
        "}",
        "",
        "/**",
        " * The keys of report.check() and comparison.check() (the core's limit names,",
        " * camelCased), and the core's name of each (what a comparison's rows hold as `metric`).",
        " */",
        "const LIMIT_KEYS = {",
        *(f"  {camel(limit['name'])}: '{limit['name']}'," for limit in names["limits"]),
        "}",
        "",
        "module.exports = { errorClasses, ERROR_CLASSES, LIMIT_KEYS }",
    ]
    return "\n".join(out) + "\n"


def node_doc(e: dict[str, Any]) -> str:
    fields = ", ".join(f"`{f['name']}`" for f in e["fields"])
    return f"{e['doc']} Code `{e['code']}`; fields {fields}."


def node_names_dts(names: dict[str, Any]) -> str:
    errors = names["errors"]
    by_class = {e["class"]: e for e in errors}
    children: dict[str, list[str]] = {}
    for e in errors:
        if e["parent"]:
            children.setdefault(e["parent"], []).append(e["class"])

    def codes(cls: str) -> list[str]:
        return [
            by_class[cls]["code"],
            *(c for child in children.get(cls, []) for c in codes(child)),
        ]

    out = [
        *NODE_HEAD,
        "//",
        "// The error classes of the package (one per kind of core error), the budget of",
        "// report.check() and the types of a comparison's rows.",
        "",
        union("export type RespLoadErrorCode", [f"'{e['code']}'" for e in errors]),
        "",
        "/** Base class of every respload error. */",
        "export declare class RespLoadError extends Error {",
        "  readonly code: RespLoadErrorCode",
        "  /** The underlying reason, without the context in `message` (as Python's `reason`). */",
        "  readonly reason?: string",
        "}",
    ]
    for e in errors:
        parent = e["parent"] or "RespLoadError"
        inherited = {f["name"] for f in by_class[parent]["fields"]} if e["parent"] else {"reason"}
        out += [*jsdoc(node_doc(e)), f"export declare class {e['class']} extends {parent} {{"]
        out.append(f"  readonly code: {' | '.join(repr(c) for c in codes(e['class']))}")
        for f in e["fields"]:
            if f["name"] in inherited:
                continue
            out += jsdoc(f["doc"], "  ")
            optional = "?" if f["type"] == "errno" else ""
            out.append(f"  readonly {f['name']}{optional}: {NODE_TYPES[f['type']]}")
        out.append("}")
    out += ["", "/** Budgets for `Report.check()`; every one given must be met. */"]
    out.append("export interface Budget {")
    for limit in names["limits"]:
        out += [*jsdoc(limit["doc"], "  "), f"  {camel(limit['name'])}?: number"]
    out += ["}", ""]
    out.append(
        "/** A comparison row's `metric`: the core's limit names, as data (not camelCased). */"
    )
    out.append(union("export type CompareMetric", [f"'{m['name']}'" for m in names["limits"]]))
    out += [
        "",
        "/**",
        " * How far each metric may move against the baseline for `Comparison.check()`",
        " * (`'+10%'`, or a number in the metric's unit): the keys of `Budget`.",
        " */",
        "export type CompareLimits = { [K in keyof Budget]?: string | number }",
        "",
    ]
    # The comparison's JSON, as index.js's Comparison holds it (its keys are single words, the
    # same in camelCase): the row type, and the fields the Comparison class merges in.
    src = comparison_source(names)
    for name, ts_name, readonly in [
        ("ComparisonRow", "ComparisonRow", ""),
        ("Comparison", "ComparisonFields", "readonly "),
    ]:
        item = src.items[name]
        out += [*([""] if out[-1] else []), *jsdoc(item.doc), f"export interface {ts_name} {{"]
        for f in item.fields:
            ts = {
                "String": "string",
                "Vec<String>": "string[]",
                "Vec<Option<f64>>": "Array<number | null>",
                "Vec<bool>": "boolean[]",
                "Vec<ComparisonRow>": "ComparisonRow[]",
            }.get(f.ty)
            if ts is None or camel(f.name) != f.name:
                raise ParseError(f"{item.source}: {name}.{f.name} is a {f.ty}: teach me")
            out += [*jsdoc(f.doc, "  "), f"  {readonly}{f.name}: {ts}"]
        out.append("}")
    return "\n".join(out) + "\n"


def node_index_mjs(names: dict[str, Any], current: str) -> str:
    classes = ["RespLoadError", *(e["class"] for e in names["errors"])]
    region = [
        "  // generated: errors (from core/src/error.rs by scripts/gen_reference.py)",
        *(f"  {c}," for c in classes),
        "  // end generated: errors",
    ]
    marked = re.compile(r"^  // generated: errors\b.*?^  // end generated: errors\n", re.M | re.S)
    if len(marked.findall(current)) != 1:
        raise ParseError("bindings-node/index.mjs has no generated region `errors`")
    return marked.sub(lambda _: "\n".join(region) + "\n", current)


def generate_all(names: dict[str, Any]) -> dict[Path, str]:
    """Every file this script writes, by path, from the core's document (``load()``)."""
    return {
        PY_EXCEPTIONS: python_exceptions(names, PY_EXCEPTIONS.read_text(encoding="utf-8")),
        PY_COMPARE: python_compare(names, PY_COMPARE.read_text(encoding="utf-8")),
        PY_LIMITS: python_limits(names),
        NODE_NAMES: node_names(names),
        NODE_NAMES_DTS: node_names_dts(names),
        INDEX_MJS: node_index_mjs(names, INDEX_MJS.read_text(encoding="utf-8")),
    }
