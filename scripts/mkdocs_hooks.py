"""MkDocs hooks for the respload site (mkdocs.yml `hooks:`).

The scenarios page lists every workload file under examples/scenarios/ at build time: a
scenario added there appears on the site without editing the docs, shown as the file itself
(included with pymdownx.snippets, so the page is always the file the tests run).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SCENARIOS = ROOT / "examples" / "scenarios"
MARKER = "<!-- scenarios: generated at build time by scripts/mkdocs_hooks.py -->"


def description(path: Path) -> str:
    """The leading comment lines of a TOML scenario, as a paragraph."""
    lines = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.startswith("#"):
            break
        lines.append(line.lstrip("#").strip())
    return "\n".join(lines).strip()


def scenarios_markdown() -> str:
    """One section per scenario file: its comment, how to run it, the file."""
    files = sorted(
        p for p in SCENARIOS.rglob("*") if p.is_file() and p.suffix in (".toml", ".json")
    )
    if not files:
        raise RuntimeError(f"no scenario files under {SCENARIOS}")
    out = []
    for path in files:
        rel = path.relative_to(ROOT).as_posix()
        lang = path.suffix.lstrip(".")
        out.append(f"## `{path.relative_to(SCENARIOS).as_posix()}`\n")
        text = description(path)
        if text:
            out.append(f"{text}\n")
        out.append(
            f"```sh\nrespload check {rel}\nrespload run {rel} --url redis://127.0.0.1:6379\n```\n"
        )
        out.append(f'```{lang} title="{rel}"\n--8<-- "{rel}"\n```\n')
    return "\n".join(out)


def on_page_markdown(markdown: str, page: Any, **_: Any) -> str:
    """Fill the scenarios page's marker with the list of scenario files."""
    if page.file.src_uri != "scenarios.md":
        return markdown
    if MARKER not in markdown:
        raise RuntimeError(f"docs/scenarios.md lost its marker line: {MARKER}")
    return markdown.replace(MARKER, scenarios_markdown())
