"""The version is one number, kept in Cargo.toml's [workspace.package]: check that every other
place that must state it agrees, and say where it does not (scripts/test-dist.sh runs this).

    python3 scripts/check_version.py

- the crates take it from the workspace (`version.workspace = true`);
- pyproject.toml declares it dynamic (maturin reads the crate's) and states none itself;
- package.json, every platform package of bindings-node/npm/ and the versions that napi's
  generated loader (bindings-node/native.js) checks the platform packages against.

To release X.Y.Z: set it in Cargo.toml and package.json, then `npx napi version` (the
platform packages) and `npm run build` (native.js).
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import tomllib

ROOT = Path(__file__).resolve().parent.parent


def problems(version: str) -> list[str]:
    found = []
    for crate in ("core", "bindings-python", "bindings-node"):
        package = tomllib.loads((ROOT / crate / "Cargo.toml").read_text())["package"]
        if package.get("version") != {"workspace": True}:
            found.append(f"{crate}/Cargo.toml: version is not `version.workspace = true`")
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    if "version" in project or "version" not in project.get("dynamic", []):
        found.append("pyproject.toml: the version must be dynamic (read from Cargo.toml)")
    platforms = sorted((ROOT / "bindings-node/npm").glob("*/package.json"))
    manifests = [ROOT / "package.json", *platforms]
    for manifest in manifests:
        stated = json.loads(manifest.read_text()).get("version")
        if stated != version:
            found.append(f"{manifest.relative_to(ROOT)}: version {stated}, not {version}")
    loader = (ROOT / "bindings-node/native.js").read_text()
    for stated in sorted(set(re.findall(r"bindingPackageVersion !== '([^']*)'", loader))):
        if stated != version:
            found.append(f"bindings-node/native.js: checks for {stated}, not {version}")
    return found


def main() -> int:
    cargo = tomllib.loads((ROOT / "Cargo.toml").read_text())
    version = cargo["workspace"]["package"]["version"]
    found = problems(version)
    for problem in found:
        print(f"check_version: {problem}", file=sys.stderr)
    if found:
        return 1
    print(f"check_version: {version} everywhere", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
