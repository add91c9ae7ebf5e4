"""What each artifact of `make dist` must hold (scripts/test-dist.sh runs this on dist/): every
file the repository says belongs in it, the metadata that installs it right, and a size under
10 MB. A missing file fails the check with its name; the last lines list the sizes.

    python3 scripts/dist-tests/check_artifacts.py [DIST]
"""

from __future__ import annotations

import configparser
import glob
import json
import re
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import tomllib

ROOT = Path(__file__).resolve().parents[2]
LIMIT_BYTES = 10 * 1024 * 1024
PLATFORM = "linux-x64-gnu"


def tracked(under: str) -> list[str]:
    """The files git tracks below `under`, relative to the repository."""
    out = subprocess.run(
        ["git", "ls-files", "--", under], cwd=ROOT, capture_output=True, text=True, check=True
    )
    return out.stdout.split()


def missing(names: set[str], expected: set[str], artifact: str) -> list[str]:
    return [f"{artifact}: missing {name}" for name in sorted(expected - names)]


def one(dist: Path, pattern: str) -> Path:
    found = sorted(dist.glob(pattern))
    if len(found) != 1:
        raise SystemExit(f"check_artifacts: expected one {pattern} in {dist}, found {found}")
    return found[0]


def readme_problems(description: str, artifact: str) -> list[str]:
    """The PyPI page is the readme alone: no snippet includes, no relative links."""
    found = []
    if "--8<--" in description:
        found.append(f"{artifact}: the readme has a --8<-- include")
    for target in re.findall(r"\]\(([^)\s]+)\)", description):
        if not target.startswith(("https://", "http://")):
            found.append(f"{artifact}: the readme links to {target} (not absolute)")
    return found


def check_wheel(dist: Path, version: str) -> list[str]:
    wheel = one(dist, f"respload-{version}-*.whl")
    found = []
    for tag in ("-cp39-abi3-", "manylinux_2_17_x86_64", "manylinux2014_x86_64"):
        if tag not in wheel.name:
            found.append(f"{wheel.name}: not tagged {tag.strip('-')}")
    with zipfile.ZipFile(wheel) as zf:
        names = set(zf.namelist())
        info = f"respload-{version}.dist-info"
        expected = {
            "respload/" + Path(p).relative_to("bindings-python/python/respload").as_posix()
            for p in tracked("bindings-python/python/respload")
        }
        expected |= {"respload/_native.abi3.so", f"{info}/METADATA", f"{info}/entry_points.txt"}
        found += missing(names, expected, wheel.name)
        if f"{info}/entry_points.txt" in names:
            entry_points = configparser.ConfigParser()
            entry_points.read_string(zf.read(f"{info}/entry_points.txt").decode())
            wanted = {
                "console_scripts": "respload.cli:console_main",
                "pytest11": "respload.pytest_plugin",
            }
            for group, target in wanted.items():
                if entry_points.get(group, "respload", fallback=None) != target:
                    found.append(f"{wheel.name}: no entry point {group}: respload = {target}")
        if f"{info}/METADATA" in names:
            meta = zf.read(f"{info}/METADATA").decode()
            head, _, description = meta.partition("\n\n")
            for line in ("Requires-Python: >=3.9", "Description-Content-Type: text/markdown"):
                if not any(h.startswith(line) for h in head.splitlines()):
                    found.append(f"{wheel.name}: METADATA lacks `{line}`")
            found += readme_problems(description, wheel.name)
    return found


def check_sdist(dist: Path, version: str) -> list[str]:
    sdist = one(dist, f"respload-{version}.tar.gz")
    with tarfile.open(sdist) as tf:
        names = {n.split("/", 1)[1] for n in tf.getnames() if "/" in n}
        manifest = tf.extractfile(f"respload-{version}/Cargo.toml")
        workspace = tomllib.load(manifest) if manifest else {}
    expected = {"PKG-INFO", "pyproject.toml", "Cargo.toml", "Cargo.lock", "LICENSE"}
    expected |= {"bindings-python/README.md", "bindings-python/Cargo.toml", "core/Cargo.toml"}
    expected |= set(tracked("bindings-python/src")) | set(tracked("bindings-python/python"))
    expected |= {p for p in tracked("core/src") if p.endswith(".rs")}
    found = missing(names, expected, sdist.name)
    # pip builds the sdist with pyproject's profile, `dist`: the workspace must define it.
    if "dist" not in workspace.get("profile", {}):
        found.append(f"{sdist.name}: Cargo.toml has no [profile.dist]")
    return found


def npm_files(tgz: Path) -> tuple[set[str], dict[str, object]]:
    with tarfile.open(tgz) as tf:
        names = {n.removeprefix("package/") for n in tf.getnames()}
        manifest = tf.extractfile("package/package.json")
        pkg = json.load(manifest) if manifest else {}
    return names, pkg


def check_npm(dist: Path, version: str) -> list[str]:
    main = one(dist, f"respload-{version}.tgz")
    names, pkg = npm_files(main)
    source = json.loads((ROOT / "package.json").read_text())
    expected = {"package.json", "README.md", "LICENSE"}
    for pattern in source["files"]:
        expected |= set(glob.glob(pattern, root_dir=ROOT))
    found = missing(names, expected, main.name)
    found += [f"{main.name}: ships the addon {n}" for n in sorted(names) if n.endswith(".node")]
    # `npx respload`: the bin entry, and the script it names.
    command = source["bin"]["respload"]
    if pkg.get("bin") != source["bin"] or command.removeprefix("./") not in names:
        found.append(f"{main.name}: no `respload` bin ({pkg.get('bin')}, {command})")
    platforms = {}
    for manifest in sorted((ROOT / "bindings-node/npm").glob("*/package.json")):
        platform = json.loads(manifest.read_text())
        platforms[platform["name"]] = platform["version"]
    if pkg.get("optionalDependencies") != platforms:
        found.append(f"{main.name}: optionalDependencies {pkg.get('optionalDependencies')}")

    addon = one(dist, f"respload-{PLATFORM}-{version}.tgz")
    names, pkg = npm_files(addon)
    binary = f"respload.{PLATFORM}.node"
    found += missing(names, {"package.json", "README.md", binary}, addon.name)
    want = {"name": f"@respload/{PLATFORM}", "main": binary, "os": ["linux"], "cpu": ["x64"]}
    want["libc"] = ["glibc"]
    found += [
        f"{addon.name}: {key} is {pkg.get(key)!r}, not {value!r}"
        for key, value in want.items()
        if pkg.get(key) != value
    ]
    return found


def check_cli(dist: Path, version: str) -> list[str]:
    archive = one(dist, f"respload-{version}-x86_64-linux.tar.gz")
    top = f"respload-{version}-x86_64-linux"
    with tarfile.open(archive) as tf:
        members = {m.name: m for m in tf.getmembers()}
    expected = {f"{top}/{name}" for name in ("respload", "README.md", "LICENSE")}
    found = missing(set(members), expected, archive.name)
    binary = members.get(f"{top}/respload")
    if binary is not None and not binary.mode & 0o111:
        found.append(f"{archive.name}: {top}/respload is not executable")
    return found


def main() -> int:
    dist = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "dist"
    cargo = tomllib.loads((ROOT / "Cargo.toml").read_text())
    version = cargo["workspace"]["package"]["version"]
    found = []
    for check in (check_wheel, check_sdist, check_npm, check_cli):
        found += check(dist, version)
    artifacts = sorted(p for p in dist.iterdir() if version in p.name)
    for artifact in artifacts:
        size = artifact.stat().st_size
        print(f"check_artifacts: {artifact.name}: {size / 1024 / 1024:.1f} MB", file=sys.stderr)
        if size > LIMIT_BYTES:
            found.append(f"{artifact.name}: {size} bytes, over the 10 MB limit")
    for problem in found:
        print(f"check_artifacts: {problem}", file=sys.stderr)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
