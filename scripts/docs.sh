#!/usr/bin/env bash
# Build the documentation site (mkdocs-material) into site/, with `mkdocs build --strict`: a
# broken link or a missing anchor fails the build.
#
#   scripts/docs.sh           # regenerate docs/reference/ from the Rust sources and the code the
#                             # pages show from the files it comes from, then build
#   scripts/docs.sh --check   # fail if docs/reference/ or a page's code is stale, naming it,
#                             # then build (what `make test` runs)
#
# mkdocs-material is installed into .venv/ (created by scripts/venv.sh when
# missing) only when it is not there; quick when everything is there.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/venv.sh
VENV="$PWD/.venv"
PY="$VENV/bin/python"
if ! "$PY" -c "import material, pymdownx, mkdocs" 2>/dev/null; then
  echo "docs: installing mkdocs-material" >&2
  "$PY" -m pip install --quiet --disable-pip-version-check \
    "mkdocs>=1.6,<2" "mkdocs-material>=9.5,<10" "pymdown-extensions>=10"
fi

if [ "${1:-}" = "--check" ]; then
  # Both checks run, so one run names everything that is out of date.
  stale=0
  "$PY" scripts/gen_reference.py --check || stale=1
  "$PY" scripts/gen_includes.py --check || stale=1
  [ "$stale" = 0 ] || exit 1
else
  "$PY" scripts/gen_reference.py
  "$PY" scripts/gen_includes.py
fi
NO_MKDOCS_2_WARNING=1 "$PY" -m mkdocs build --strict
echo "docs: site built in site/ (open site/index.html)" >&2
