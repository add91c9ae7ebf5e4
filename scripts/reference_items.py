"""The types and fields the generators write the references and the bindings' types from.

schema_source.py reads them out of the JSON Schemas the core derives from its Rust types
(`respload schema spec|report`); gen_reference.py, node_types.py and python_types.py write the
reference pages, the Node package's `.d.ts` files and the Python report classes from them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


class ParseError(Exception):
    """The schema has a shape this script does not know: teach it rather than skip."""


@dataclass
class Field:
    name: str
    ty: str  # as a Rust type: `Option<Vec<Template>>`, `[u64; 2]`, `BTreeMap<String, Stats>`
    doc: str
    # `default` when serde fills the key in when absent; `skip_serializing_if` (how a key
    # written only when set is left out); `flatten`.
    serde: dict[str, str | None]
    source: str
    default: str = ""  # the spec reference's default cell
    allowed: str = ""  # the spec reference's allowed cell
    names: str = ""  # the name list (a `$defs` entry) a string field takes a value of


@dataclass
class Variant:
    name: str
    doc: str
    payload: str = ""  # a written form's type (`u32`, `Vec<String>`), when not a name
    fields: list[Field] = field(default_factory=list)
    default: bool = False
    rename: str | None = None  # how the name is written in a spec


@dataclass
class Item:
    kind: str  # struct, enum, tuple (a value type with forms but no variants)
    name: str
    doc: str
    source: str
    fields: list[Field] = field(default_factory=list)
    variants: list[Variant] = field(default_factory=list)
    # Read by hand from several written forms (a value type, not a table of the spec).
    custom_de: bool = False
    # Written as one of its variants' names (with parameters in a table, if any).
    named: bool = False


@dataclass
class RawKey:
    """A spec key taken out of the raw spec before serde reads it (`phases`, `repeat`, `vars`,
    `scales`), so it is no struct field."""

    name: str
    top_only: bool  # only at the top level of a spec, not inside a phase
    md_type: str
    ts_type: str
    default: str
    allowed: str
    doc: str


@dataclass
class NameList:
    """A list of names a string field takes (the built-in commands)."""

    name: str
    doc: str
    values: list[str]


@dataclass
class Source:
    items: dict[str, Item] = field(default_factory=dict)
    consts: dict[str, str] = field(default_factory=dict)
    module_docs: dict[str, str] = field(default_factory=dict)
    raw_keys: list[RawKey] = field(default_factory=list)
    name_lists: dict[str, NameList] = field(default_factory=dict)


def join_doc(lines: list[str]) -> str:
    """Doc comment lines as one paragraph, rustdoc links as code."""
    paragraphs = "\n".join(line.strip() for line in lines).split("\n\n")
    text = "\n\n".join(" ".join(p.split()) for p in paragraphs).strip()
    text = re.sub(r"\[`([^`]+)`\]\([^)]*\)", r"`\1`", text)
    text = re.sub(r"\[`([^`]+)`\]", r"`\1`", text)
    return text


def written(v: Variant) -> str:
    """How a variant's name is written in a spec."""
    return v.rename if v.rename is not None else v.name


def unwrap(ty: str) -> tuple[str, str]:
    """(`Option`/`Vec`/`BTreeMap`/`` wrapper, inner type) of a field type."""
    for wrapper in ("Option", "Vec"):
        if ty.startswith(wrapper + "<") and ty.endswith(">"):
            return wrapper, ty[len(wrapper) + 1 : -1]
    if m := re.fullmatch(r"BTreeMap<String, (.+)>", ty):
        return "BTreeMap", m.group(1)
    return "", ty


def documented(item: Item) -> Item:
    """The item, once every field of it has a doc comment."""
    for f in item.fields:
        if not f.doc:
            raise ParseError(f"{item.source}: field `{f.name}` of {item.name} has no doc comment")
    return item
