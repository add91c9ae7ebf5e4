#!/usr/bin/env bash
# make bench: respload against redis-benchmark and resp-benchmark (PyPI), see docs/performance.md.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -x .venv-bench/bin/resp-benchmark ]; then
  python3 -m venv .venv-bench && .venv-bench/bin/pip install -q resp-benchmark
fi
PATH="$PWD/.venv-bench/bin:$PATH" python3 scripts/bench.py "$@"
