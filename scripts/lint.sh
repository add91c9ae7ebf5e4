#!/usr/bin/env bash
# `make lint`: the linters of every language of the repository, each tool installed first when
# missing (quick when all is there). Every check runs even after one fails; the last line
# names the failed ones and the exit status is non-zero then.
#   Rust        cargo fmt --check; cargo clippy -D warnings (workspace, all targets, release)
#   Python      ruff check and ruff format --check over the whole repository (.py, .pyi and
#               notebooks, scripts/ and examples/ included; settings in pyproject.toml)
#   JavaScript  node --check on each file, then scripts/check-js.mjs (syntax, names, unused
#               and unreachable code: no type checking); npm run typecheck (the .d.ts files)
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"
# Pinned: a new ruff release can change what the formatter and the rules accept.
RUFF_VERSION=0.17.6

# ---- Tools, installed when missing.
command -v cargo >/dev/null 2>&1 || scripts/ensure-deps.sh
cargo fmt --version >/dev/null 2>&1 || rustup component add rustfmt
cargo clippy --version >/dev/null 2>&1 || rustup component add clippy

scripts/venv.sh
RUFF="$PWD/.venv/bin/ruff"
if [ "$("$RUFF" --version 2>/dev/null)" != "ruff $RUFF_VERSION" ]; then
  echo "lint: installing ruff $RUFF_VERSION into .venv" >&2
  .venv/bin/python -m pip install --quiet --disable-pip-version-check "ruff==$RUFF_VERSION"
fi

if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  echo "lint: node and npm are needed (Node 20 or newer)" >&2
  exit 1
fi
if [ ! -x node_modules/.bin/tsc ]; then
  echo "lint: npm install" >&2
  # npm may rewrite an up-to-date package-lock.json (npm 11 does); keep the committed one
  # unless package.json itself was changed.
  lock_clean=0
  git diff --quiet HEAD -- package.json package-lock.json 2>/dev/null && lock_clean=1
  npm install --no-audit --no-fund --loglevel=error
  [ "$lock_clean" -eq 0 ] || git checkout --quiet -- package-lock.json
fi

# ---- The checks.
failed=()
check() { # check NAME COMMAND...: run the command, remember NAME when it fails
  local name=$1
  shift
  echo "lint: $name" >&2
  "$@" || failed+=("$name")
}
node_check() {
  local f status=0
  for f in "$@"; do node --check "$f" || status=1; done
  return $status
}

check "cargo fmt" cargo fmt --all -- --check
check "cargo clippy" cargo clippy --workspace --all-targets --release --quiet -- -D warnings
# The core and the Node addon type-checked for macOS and Windows: no Linux-only API unguarded.
check "clippy for macOS and Windows" scripts/check-targets.sh
# The crate is publishable: it packs, and the packed sources build alone (issue 27).
check "cargo package" cargo package -p respload --allow-dirty --quiet

check "ruff check" "$RUFF" check --quiet .
check "ruff format" "$RUFF" format --check --quiet .

# The repository's JavaScript: tracked files and new ones not ignored (so never node_modules/),
# less the minified uPlot bundled into the HTML report as published;
# outside a git checkout, every file but the ignored directories'.
js_files() {
  if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    git ls-files --cached --others --exclude-standard -- '*.js' '*.mjs' '*.cjs' \
      ':!core/src/report/html/uplot.min.js'
  else
    find . \( -name .git -o -name node_modules -o -name target -o -name site -o -name '.venv*' \) \
      -prune -o -type f \( -name '*.js' -o -name '*.mjs' -o -name '*.cjs' \) \
      ! -name uplot.min.js -print | sed 's|^\./||'
  fi
}
js=()
while IFS= read -r f; do
  [ -f "$f" ] && js+=("$f")
done < <(js_files | sort -u)
check "node --check (${#js[@]} files)" node_check "${js[@]}"
check "check-js" node scripts/check-js.mjs "${js[@]}"
check "npm run typecheck" npm run --silent typecheck
# The HTML report bundles uPlot as its npm package publishes it (the pinned devDependency).
check "bundled uPlot" cmp node_modules/uplot/dist/uPlot.iife.min.js core/src/report/html/uplot.min.js

if [ ${#failed[@]} -gt 0 ]; then
  echo "lint: FAILED: $(printf '%s, ' "${failed[@]}" | sed 's/, $//')" >&2
  exit 1
fi
echo "lint: all checks passed (Rust, Python, JavaScript)" >&2
