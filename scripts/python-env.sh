# Sourced by the scripts that need Python (test-python.sh, examples.sh): the venv in .venv
# (created when missing) with the tools and optional dependencies the tests exercise, and
# the package installed from the release wheel (`make dist`'s). Activates the venv in the
# sourcing shell. Quick when all is there.
export PATH="$HOME/.cargo/bin:$PATH"
scripts/ensure-deps.sh

scripts/venv.sh
VENV="$PWD/.venv"
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
# respload.distributed's tests and example run a local Ray cluster.
"$PY" -c "import ray" 2>/dev/null || missing+=("ray>=2.60")
# The example notebook is executed with nbclient on an ipykernel.
"$PY" -c "import nbclient, nbformat" 2>/dev/null || missing+=("nbclient>=0.7")
"$PY" -c "import ipykernel" 2>/dev/null || missing+=(ipykernel)
# Reports are validated against their published JSON Schema.
"$PY" -c "import jsonschema" 2>/dev/null || missing+=("jsonschema>=4.18")
# The Prometheus endpoint is scraped with the official client's parser.
"$PY" -c "import prometheus_client" 2>/dev/null || missing+=("prometheus_client>=0.17")
if [ ${#missing[@]} -gt 0 ]; then
  echo "python-env: installing ${missing[*]}" >&2
  "$PY" -m pip install --quiet --disable-pip-version-check "${missing[@]}"
fi

# The package from the wheel that ships (scripts/dist.sh wheel: cargo profile `dist`, zig for
# manylinux2014): the tests run the very module users get, and its crate graph is compiled
# once for the tests and the artifact (scripts/test-dist.sh installs the same file in a fresh
# venv). Not editable: after changing bindings-python/python/, run this again (test-python.sh
# and examples.sh do, each time). `maturin develop` still works for a quicker loop.
scripts/dist.sh wheel
"$PY" -m pip install --quiet --disable-pip-version-check --no-deps --force-reinstall \
  dist/respload-*.whl
