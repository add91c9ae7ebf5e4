#!/usr/bin/env bash
# Build the Python package into .venv (created when missing) and run its checks and tests:
# ruff, mypy --strict, pytest against real redis-server processes. Quick when all is there.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"

scripts/ensure-deps.sh

VENV="$PWD/.venv"
if [ ! -x "$VENV/bin/python" ]; then
  echo "test-python: creating $VENV" >&2
  if ! python3 -m venv "$VENV" 2>/dev/null; then
    # Debian's python3 has no venv/ensurepip without this package.
    rm -rf "$VENV"
    SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y python3-venv >/dev/null 2>&1 || {
      $SUDO apt-get update >/dev/null && DEBIAN_FRONTEND=noninteractive \
        $SUDO apt-get install -y python3-venv >/dev/null
    }
    python3 -m venv "$VENV"
  fi
fi
export VIRTUAL_ENV="$VENV"
export PATH="$VENV/bin:$PATH"
PY="$VENV/bin/python"

# Tools and optional dependencies the tests exercise, installed only when missing.
missing=()
[ -x "$VENV/bin/maturin" ] || missing+=("maturin>=1.16,<2")
[ -x "$VENV/bin/ruff" ] || missing+=(ruff)
[ -x "$VENV/bin/mypy" ] || missing+=(mypy)
"$PY" -c "import pytest" 2>/dev/null || missing+=("pytest>=7")
"$PY" -c "import hdrh" 2>/dev/null || missing+=("hdrhistogram>=0.10")
"$PY" -c "import pandas" 2>/dev/null || missing+=("pandas>=1.5")
"$PY" -c "import matplotlib" 2>/dev/null || missing+=("matplotlib>=3.5")
# The example notebook is executed with nbclient on an ipykernel.
"$PY" -c "import nbclient, nbformat" 2>/dev/null || missing+=("nbclient>=0.7")
"$PY" -c "import ipykernel" 2>/dev/null || missing+=(ipykernel)
if [ ${#missing[@]} -gt 0 ]; then
  echo "test-python: installing ${missing[*]}" >&2
  "$PY" -m pip install --quiet --disable-pip-version-check "${missing[@]}"
fi

# The native module (release build, shared target/), installed editable into the venv.
maturin develop --release --quiet

ruff check bindings-python examples/python scripts/run-notebook.py
ruff format --check bindings-python examples/python scripts/run-notebook.py
mypy
pytest bindings-python/tests -q

# The examples, each against a throwaway redis-server it starts itself (respload.testing).
echo "test-python: examples" >&2
python examples/python/quickstart.py
python examples/python/pipeline_depths.py
pytest examples/python -q
python scripts/run-notebook.py examples/notebooks/quickstart.ipynb
