#!/usr/bin/env bash
# `make test`'s proof that respload installs and runs from its release artifacts alone, with
# no Rust toolchain (issue 27). Builds what is missing (scripts/dist.sh: quick after the other
# suites, which built the wheel, the addon and the binary), then:
#   1. the version is one number (scripts/check_version.py) and the release workflow's YAML
#      parses;
#   2. each artifact holds every file it must, and is under 10 MB
#      (scripts/dist-tests/check_artifacts.py); `auditwheel show` accepts the wheel as
#      manylinux2014;
#   3. with cargo and rustc off PATH, in temporary directories: a fresh venv with the wheel
#      (and pytest) runs a workload against a throwaway redis-server, the `respload` console
#      script and the PyPI page's examples (installed_smoke.py), and a one-test suite on the
#      pytest plugin's fixtures; each extra (pandas, plot, hdrhistogram, ray) in a venv of
#      its own with the wheel, running what it is for (installed_extras.py); a fresh
#      npm project with the two tarballs runs node:test files importing `respload` and
#      `respload/testing` as ES modules and from CommonJS, and `npx respload` (the package's
#      bin); the CLI archive's binary runs.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
export PATH="$HOME/.cargo/bin:$PATH"
scripts/venv.sh
PY="$ROOT/.venv/bin/python"
VERSION=$(python3 -c 'import tomllib; print(tomllib.load(open("Cargo.toml", "rb"))["workspace"]["package"]["version"])')

echo "test-dist: the version, the release workflow" >&2
python3 scripts/check_version.py
"$PY" -c 'import yaml, auditwheel' 2>/dev/null ||
  "$PY" -m pip install --quiet --disable-pip-version-check pyyaml auditwheel
"$PY" -c 'import sys, yaml; yaml.safe_load(open(sys.argv[1]))' .github/workflows/release.yml

scripts/dist.sh
echo "test-dist: the artifacts' contents" >&2
python3 scripts/dist-tests/check_artifacts.py dist
WHEEL=$(ls dist/respload-"$VERSION"-*.whl)
"$ROOT/.venv/bin/auditwheel" show "$WHEEL" >"$ROOT/dist/auditwheel.txt"
grep -q 'manylinux_2_17_x86_64' "$ROOT/dist/auditwheel.txt" || {
  cat "$ROOT/dist/auditwheel.txt" >&2
  echo "test-dist: auditwheel does not accept $WHEEL as manylinux2014" >&2
  exit 1
}

# No Rust from here on: PATH without the directories holding cargo or rustc.
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
path=()
IFS=: read -r -a dirs <<<"$PATH"
for dir in "${dirs[@]}"; do
  [ -e "$dir/cargo" ] || [ -e "$dir/rustc" ] || path+=("$dir")
done
PATH=$(IFS=:; echo "${path[*]}")
export PATH
if command -v cargo >/dev/null || command -v rustc >/dev/null; then
  echo "test-dist: cargo or rustc is still on PATH" >&2
  exit 1
fi
unset VIRTUAL_ENV

echo "test-dist: the wheel in a fresh venv" >&2
python3 -m venv "$TMP/venv"
"$TMP/venv/bin/python" -m pip install --quiet --disable-pip-version-check "$ROOT/$WHEEL" "pytest>=7"
mkdir "$TMP/python"
cp scripts/dist-tests/installed_smoke.py scripts/dist-tests/test_installed_plugin.py "$TMP/python/"
(
  cd "$TMP/python"
  "$TMP/venv/bin/python" installed_smoke.py "$VERSION"
  "$TMP/venv/bin/python" -m pytest -q -p no:cacheprovider test_installed_plugin.py
)

# Each extra alone in a venv of its own: what it is for works from the wheel and the extra's
# own dependencies (installed_extras.py), nothing else of the development environment.
cp scripts/dist-tests/installed_extras.py "$TMP/python/"
for extra in pandas plot hdrhistogram ray; do
  echo "test-dist: the wheel with [$extra] in a fresh venv" >&2
  python3 -m venv "$TMP/venv-$extra"
  "$TMP/venv-$extra/bin/python" -m pip install --quiet --disable-pip-version-check \
    "$ROOT/$WHEEL[$extra]"
  (cd "$TMP/python" && "$TMP/venv-$extra/bin/python" installed_extras.py "$extra")
  rm -rf "$TMP/venv-$extra"
done

echo "test-dist: the npm packages in a fresh project" >&2
mkdir "$TMP/node"
cp scripts/dist-tests/installed.test.mjs scripts/dist-tests/installed.test.cjs "$TMP/node/"
(
  cd "$TMP/node"
  echo '{ "name": "respload-dist-test", "private": true }' >package.json
  # --offline: the other platforms' optional packages are not fetched (nor needed here).
  npm install --offline --no-audit --no-fund --loglevel=error \
    "$ROOT/dist/respload-$VERSION.tgz" "$ROOT/dist/respload-linux-x64-gnu-$VERSION.tgz"
  node --test installed.test.mjs installed.test.cjs
  # The package's bin: the Rust binary's command line, through the addon.
  shown=$(npx --no-install respload --version)
  [ "$shown" = "respload $VERSION" ] || {
    echo "test-dist: npx respload --version said '$shown'" >&2
    exit 1
  }
  npx --no-install respload check "$ROOT/examples/scenarios/quickstart.toml" >/dev/null
)

echo "test-dist: the CLI archive" >&2
tar -xzf "dist/respload-$VERSION-x86_64-linux.tar.gz" -C "$TMP"
shown=$("$TMP/respload-$VERSION-x86_64-linux/respload" --version)
[ "$shown" = "respload $VERSION" ] || {
  echo "test-dist: the archive's respload --version said '$shown'" >&2
  exit 1
}
"$TMP/respload-$VERSION-x86_64-linux/respload" check examples/scenarios/quickstart.toml >/dev/null
echo "test-dist: every artifact installs and runs without Rust" >&2
