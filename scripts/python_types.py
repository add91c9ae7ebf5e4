"""The Python package's report classes, their fields from the report's JSON Schema.

bindings-python/python/respload/report.py holds one frozen dataclass per report struct (the ones
report.d.ts declares). Each class's decorator, docstring and fields are generated here from the
struct as the schema the core derives gives it (its `///` doc comments as descriptions; read by
schema_source.py), between two marks:

    # generated: Stats (from core/src/report/stats.rs by scripts/gen_reference.py)
    @dataclass(frozen=True)
    class Stats:
        ...
        # end generated: Stats

with a `from_dict` that reads the JSON object (but the report's: `Report.from_json` is by hand),
and whatever follows the end mark in the class (methods) is written by hand. A key
serde fills in when absent (`#[serde(default)]`, `skip_serializing_if`) gets a default: `None`,
0, false, an empty string, list or dict; the rest are required and come first (dataclasses of
Python 3.9 have no keyword-only fields), each group in the Rust order. gen_reference.py writes
the regions and checks them with the reference pages.
"""

from __future__ import annotations

import re
import textwrap

from reference_items import ROOT, Field, Item, ParseError, Source, documented, unwrap

OUT = ROOT / "bindings-python/python/respload/report.py"
WIDTH = 100
PRIMITIVES = {
    "u32": "int",
    "u64": "int",
    "f64": "float",
    "bool": "bool",
    "String": "str",
    "Json": "dict[str, Any]",
}
EMPTY = {"int": "0", "float": "0.0", "bool": "False", "str": '""'}
# Fields left out of `repr()`: encoded histograms, the normalized workload, per-interval and
# per-node collections (a report's repr stays a screenful).
HIDDEN = {
    "Stats": {"histogram", "service_histogram", "send_lag_histogram"},
    "TimelineRow": {"histogram"},
    "Snapshot": {"histogram"},
    "PhaseReport": {"workload", "server_timeline", "nodes", "server_nodes", "steps"},
    "Report": {"server_timeline", "nodes", "server_nodes"},
    "ShardOf": {"workload"},
    "HostReport": {"client"},
}
# Defaults that are not the type's empty value: a struct serde defaults (its `Default`), and a
# report read before `passed` was written (complete is passed; `Report.from_json` judges it).
# `None`: no default, although serde has one (a validity is always given: `_validity` makes
# the trusted one of reports written before it was kept).
DEFAULTS: dict[tuple[str, str], str | None] = {
    ("Report", "passed"): "True",
    ("Report", "availability"): "field(default_factory=lambda: Availability(0.0, 0.0))",
    ("PhaseReport", "availability"): "field(default_factory=lambda: Availability(0.0, 0.0))",
    ("Report", "validity"): None,
    ("PhaseReport", "validity"): None,
    # A report written before the transport was named ran on epoll, the only one then.
    ("ClientStats", "io"): '"epoll"',
}
# Fields of the Python class alone, after the required ones: the report's own JSON text.
EXTRA = {
    "Report": ["_json: str = field(compare=False)"],
    # compare.py's comparison keeps its text and the reports compared.
    "Comparison": [
        "text: str",
        '"""The comparison as ``respload compare`` prints it (also ``str(comparison)``): a table',
        'per phase, each value with its change, ``worse`` where worse beyond noise."""',
        "_reports: list[Report] = field(compare=False)",
    ],
}
# Classes whose `from_dict` is written by hand: the report keeps its JSON text and shares its
# phases' timeline rows, and judges `passed` for reports written before it was kept.
HAND_READ = {"Report", "Comparison"}
# How `from_dict` reads a field that serde defaults to a struct's `Default` (the helpers are in
# report.py): a report written before the field was kept reads as the core reads it.
READS = {
    ("PhaseReport", "validity"): "_validity(d)",
    ("PhaseReport", "availability"): "_availability(d)",
    ("ClientStats", "io"): 'd.get("io", "epoll")',
}
# Rust paths the doc comments name that Python spells its own way.
PYTHON_NAMES = {
    "Stats::histogram": "Stats.histogram",
    "Workload::shard": "Workload.shard",
    "Report::merge": "merge_reports()",
}
# Decorators other than `@dataclass(frozen=True)`: the report has a repr of its own.
DECORATORS = {
    "Report": "@dataclass(frozen=True, repr=False)",
    "Comparison": "@dataclass(frozen=True, repr=False)",
}


def py_type(ty: str, items: dict[str, Item], where: str) -> str:
    """A Rust field type in Python's annotations (`Option<Vec<u64>>` -> `list[int] | None`)."""
    wrapper, inner = unwrap(ty)
    if wrapper == "Option":
        return f"{py_type(inner, items, where)} | None"
    if wrapper == "Vec":
        return f"list[{py_type(inner, items, where)}]"
    if wrapper == "BTreeMap":
        return f"dict[str, {py_type(inner, items, where)}]"
    if ty in PRIMITIVES:
        return PRIMITIVES[ty]
    if ty in items and items[ty].kind == "struct":
        return ty
    raise ParseError(f"{where}: no Python type for `{ty}`: teach python_types.py")


def docstring(text: str, indent: str, escape: bool = False) -> list[str]:
    """A doc comment as a docstring: rustdoc's `code` as ``code``, wrapped to the width;
    `escape`: with its backslashes and quotes escaped (else they are an error)."""
    if escape:
        text = text.replace("\\", "\\\\").replace('"""', '\\"\\"\\"')
        text = text + " " if text.endswith('"') else text
    elif '"""' in text or "\\" in text or text.endswith('"'):
        raise ParseError(f"a doc comment a docstring cannot hold as written: {text[:60]!r}")
    for rust, python in PYTHON_NAMES.items():
        text = text.replace(f"`{rust}`", f"`{python}`")
    text = re.sub(r"`([^`]+)`", r"``\1``", text)
    out: list[str] = []
    paragraphs = text.split("\n\n")
    for i, paragraph in enumerate(paragraphs):
        if i:
            out.append("")
        words = paragraph + ('"""' if i == len(paragraphs) - 1 else "")
        lines = textwrap.wrap(
            ('"""' if i == 0 else "") + words,
            WIDTH - len(indent),
            break_long_words=False,
            break_on_hyphens=False,
        )
        out += [indent + line for line in lines]
    return out


def fields_of(item: Item, items: dict[str, Item]) -> list[Field]:
    """Each field, a flattened struct's fields in its place."""
    out = []
    for f in item.fields:
        if "flatten" in f.serde:
            out += fields_of(documented(items[f.ty]), items)
        else:
            out.append(f)
    return out


def declaration(item: Item, f: Field, items: dict[str, Item]) -> tuple[str, bool]:
    """`name: type = default` of a field of `item`, and whether it has a default."""
    name, ty = f.name, f.ty
    where = f"{f.source}: `{f.name}`"
    annotation = py_type(ty, items, where)
    wrapper, _ = unwrap(ty)
    hidden = name in HIDDEN.get(item.name, set())
    defaulted = "default" in f.serde or "skip_serializing_if" in f.serde
    default: str | None = None
    if (item.name, name) in DEFAULTS:
        default = DEFAULTS[(item.name, name)]
    elif defaulted:
        if wrapper == "Option":
            default = "None"
        elif wrapper in ("Vec", "BTreeMap"):
            factory = "list" if wrapper == "Vec" else "dict"
            default = f"field(default_factory={factory}{', repr=False' if hidden else ''})"
            hidden = False
        elif annotation in EMPTY:
            default = EMPTY[annotation]
        else:
            raise ParseError(f"{where}: serde defaults a `{ty}`: teach python_types.py its value")
    if hidden:
        if default is None:
            return f"{name}: {annotation} = field(repr=False)", False
        if not default.startswith("field("):
            default = f"field(default={default}, repr=False)"
    if default is None:
        return f"{name}: {annotation}", False
    return f"{name}: {annotation} = {default}", True


def region(item: Item, items: dict[str, Item]) -> str:
    """The generated text of one class, marks included."""
    source = item.source
    out = [
        f"# generated: {item.name} (from {source} by scripts/gen_reference.py)",
        DECORATORS.get(item.name, "@dataclass(frozen=True)"),
        f"class {item.name}:",
        *docstring(item.doc, "    "),
        "",
    ]
    required: list[list[str]] = []
    optional: list[list[str]] = []
    for f in fields_of(item, items):
        line, has_default = declaration(item, f, items)
        (optional if has_default else required).append(["    " + line, *docstring(f.doc, "    ")])
    extra = [["    " + line] for line in EXTRA.get(item.name, [])]
    for lines in required + extra + optional:
        out += lines
    if item.name not in HAND_READ:
        out += [
            "",
            "    @classmethod",
            f"    def from_dict(cls, d: _Json) -> {item.name}:",
            f'        """A {item.name} from its JSON object."""',
            "        return cls(",
            *(read(item, f, items) for f in fields_of(item, items)),
            "        )",
            "",
        ]
    out.append(f"    # end generated: {item.name}")
    return "\n".join(out) + "\n"


def conversion(ty: str, value: str, items: dict[str, Item]) -> str:
    """The expression that makes a field of type `ty` from the JSON `value` (report.py's
    `_maybe`, `_each` and `_by_key` apply a conversion to an optional, a list and a map)."""
    wrapper, inner = unwrap(ty)
    if wrapper == "" and ty in items:
        return f"{ty}.from_dict({value})"
    if wrapper == "" or inner not in items:
        return {"Vec": f"list({value})", "BTreeMap": f"dict({value})"}.get(wrapper, value)
    helper = {"Option": "_maybe", "Vec": "_each", "BTreeMap": "_by_key"}[wrapper]
    return f"{helper}({inner}.from_dict, {value})"


def read(item: Item, f: Field, items: dict[str, Item]) -> str:
    """`name=expression,` of the field in `from_dict`."""
    where = f"{f.source}: `{f.name}`"
    key = f'"{f.name}"'
    wrapper, _ = unwrap(f.ty)
    if (item.name, f.name) in READS:
        value = READS[(item.name, f.name)]
    elif wrapper == "Option":
        value = conversion(f.ty, f"d.get({key})", items)
    elif "default" in f.serde or "skip_serializing_if" in f.serde:
        if wrapper in ("Vec", "BTreeMap"):
            empty = "[]" if wrapper == "Vec" else "{}"
            value = conversion(f.ty, f"d.get({key}, {empty})", items)
        elif f.ty in items:
            raise ParseError(f"{where}: serde defaults a `{f.ty}`: teach READS how to read it")
        else:
            value = f"d.get({key}, {EMPTY[py_type(f.ty, items, where)]})"
    else:
        value = conversion(f.ty, f"d[{key}]", items)
    line = f"            {f.name}={value},"
    if len(line) > WIDTH:
        raise ParseError(f"{where}: its `from_dict` line is too long: add a helper to report.py")
    return line


MARKED = re.compile(
    r"^# generated: (?P<name>\w+) \(.*?\n.*?^    # end generated: (?P=name)\n", re.M | re.S
)


def report_py(src: Source, order: list[Item], current: str) -> str:
    """report.py with every class region written anew from the Rust types."""
    wanted = {item.name: item for item in order}
    found: set[str] = set()

    def replace(m: re.Match[str]) -> str:
        name = m.group("name")
        if name not in wanted:
            raise ParseError(f"{OUT.name} has a generated region of `{name}`, no report type")
        found.add(name)
        return region(wanted[name], src.items)

    text = MARKED.sub(replace, current)
    missing = sorted(set(wanted) - found)
    if missing:
        raise ParseError(
            f"{OUT.name} has no generated region of {', '.join(missing)}: add its marks "
            "(`# generated: NAME (...)` above the class, `    # end generated: NAME` in it)"
        )
    return text


# ---- the spec as TypedDicts ----------------------------------------------------------------

OUT_SPEC = ROOT / "bindings-python/python/respload/spec_types.pyi"
SPEC_PRIMITIVES = {
    "u8": "int",
    "u16": "int",
    "u32": "int",
    "u64": "int",
    "i64": "int",
    "f64": "float",
    "bool": "bool",
    "String": "str",
    "Json": "Any",
}
# Value types read by hand from several JSON types (the forms node_types.py's HAND_FORMS
# gives TypeScript): a new one must be taught here.
SPEC_HAND_FORMS = {"SpecDuration": "str | float"}
# The keys read before serde, by their TypeScript type (schema_source.raw_key's).
RAW_KEY_TYPES = {
    "PhaseSpec[]": "list[PhaseSpec]",
    "Record<string, unknown>": "dict[str, Any]",
    "Record<string, Record<string, unknown>>": "dict[str, dict[str, Any]]",
    "number": "int",
}


def spec_pyi(src: Source) -> str:
    """spec_types.pyi: the spec as TypedDicts (the keyword fields of ``run()``, ``Runner()``
    and ``Workload()``), read by type checkers only (a stub without a module: users import it
    under ``typing.TYPE_CHECKING``)."""
    import keyword

    from node_types import SpecTypes, spec_name

    types = SpecTypes(src)

    def name_of(ty: str) -> str:
        return types.name(ty)

    def py(ty: str, names: str = "", any_case: bool = False) -> str:
        wrapper, inner = unwrap(ty)
        if wrapper == "Option":
            return py(inner, names, any_case)
        if wrapper == "Vec":
            return f"list[{py(inner, names, any_case)}]"
        if wrapper == "BTreeMap":
            return f"dict[str, {py(inner, names, any_case)}]"
        if m := re.fullmatch(r"\[(\w+); (\d+)\]", ty):
            # A fixed-size array: a tuple, or a list as Python code writes it.
            one = py(m.group(1))
            return "tuple[" + ", ".join([one] * int(m.group(2))) + f"] | list[{one}]"
        if ty == "String" and names and not any_case:
            return names
        if ty in SPEC_PRIMITIVES:
            return SPEC_PRIMITIVES[ty]
        return name_of(ty)

    out = [
        "# Generated by scripts/gen_reference.py from the Rust types of core/src/spec/*.rs and",
        "# their doc comments: do not edit by hand, run `make docs`.",
        '"""The workload spec as TypedDicts: the keyword fields of ``run()``, ``Runner()`` and',
        "``Workload()``, so that type checkers and editors catch an unknown or mistyped field. A",
        'stub: imported by type checkers only (docs/reference/spec.md lists every field)."""',
        "",
        "from typing import Any, Literal, TypedDict",
        "",
        "from typing_extensions import Required",
        "",
        "from ._limits import Limits",
        "",
    ]

    def klass(name: str, base: str, doc: str, lines: list[str]) -> list[str]:
        return [
            f"class {name}({base}, total=False):",
            *docstring(doc, "    ", escape=True),
            "",
            *lines,
            "",
        ]

    def field_lines(item: Item) -> list[str]:
        lines = []
        for f in item.fields:
            if keyword.iskeyword(f.name):
                raise ParseError(f"{f.source}: `{f.name}` is a Python keyword: teach me")
            any_case = "case-insensitive" in f.doc
            ty = py(f.ty, f.names, any_case)
            optional = "default" in f.serde or unwrap(f.ty)[0] == "Option"
            lines.append(f"    {f.name}: {ty if optional else f'Required[{ty}]'}")
            lines += docstring(f.doc, "    ", escape=True)
        return lines

    root = types.structs[0]
    top = []
    for k in src.raw_keys:
        if k.top_only:
            if k.ts_type not in RAW_KEY_TYPES:
                raise ParseError(f"key `{k.name}` read before serde is {k.ts_type}: teach me")
            top += [
                f"    {k.name}: {RAW_KEY_TYPES[k.ts_type]}",
                *docstring(k.doc, "    ", escape=True),
            ]
    out += klass("Spec", spec_name(root), src.module_docs[root.source], top)
    for item in types.structs:
        lines = field_lines(item)
        if item is root:
            for k in src.raw_keys:
                if not k.top_only:
                    if k.ts_type not in RAW_KEY_TYPES:
                        raise ParseError(f"key `{k.name}` read before serde: teach me")
                    lines += [f"    {k.name}: {RAW_KEY_TYPES[k.ts_type]}"]
                    lines += docstring(k.doc, "    ", escape=True)
        out += klass(spec_name(item), "TypedDict", item.doc, lines)
    for name in types.lists:
        values = [f'"{v}"' for v in src.name_lists[name].values]
        one = f"{name} = Literal[{', '.join(values)}]"
        if len(one) > WIDTH:  # as ruff formats it: one name a line
            one = "\n".join([f"{name} = Literal[", *(f"    {v}," for v in values), "]"])
        out += [one, *docstring(src.name_lists[name].doc, "", escape=True), ""]
    for item in types.values:
        if item.name == "Thresholds":
            lines = [
                "    commands: dict[str, Limits]",
                '    """Limits per command label, as at the top."""',
                "    abort_on_fail: bool",
                '    """Stop the run as soon as a limit is crossed."""',
                "    delay_abort_eval: SpecDuration",
                '    """How long into the phase before ``abort_on_fail`` starts judging."""',
            ]
            out += klass("Thresholds", "Limits", item.doc, lines)
            continue
        if item.kind != "enum":
            if item.name not in SPEC_HAND_FORMS:
                raise ParseError(f"{item.source}: the forms of {item.name}: teach python_types")
            out += [
                f"{item.name} = {SPEC_HAND_FORMS[item.name]}",
                *docstring(item.doc, "", escape=True),
                "",
            ]
            continue
        forms: list[str] = []
        units = [f'"{v.rename if v.rename is not None else v.name}"' for v in item.variants]
        if item.named:
            forms.append(f"Literal[{', '.join(units)}]")
            if any(v.fields for v in item.variants):
                forms.append("dict[str, Any]")  # the table forms, `{kind = ..., ...}`
        else:
            for v in item.variants:
                if v.fields:
                    raise ParseError(f"{item.source}: {item.name}::{v.name} has fields")
                if v.payload:
                    forms.append(py(v.payload))
                else:
                    forms.append(f'Literal["{v.rename if v.rename is not None else v.name}"]')
        alias = f"{item.name} = {' | '.join(forms)}"
        if len(alias) > WIDTH:  # as ruff formats it: one form a line
            alias = "\n".join(
                [f"{item.name} = (", f"    {forms[0]}", *(f"    | {f}" for f in forms[1:]), ")"]
            )
        out += [alias, *docstring(item.doc, "", escape=True), ""]
    return "\n".join(out).rstrip() + "\n"
