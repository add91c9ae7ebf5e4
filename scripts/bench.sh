#!/usr/bin/env bash
# make bench / make bench-quick: respload against redis-benchmark and resp-benchmark (PyPI),
# see docs/performance.md. Arguments go to scripts/bench.py (--quick, --only, --soak, ...).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"
if [ ! -x .venv-bench/bin/resp-benchmark ]; then
  python3 -m venv .venv-bench && .venv-bench/bin/pip install -q resp-benchmark
fi
cargo build --release -q -p respload -p respload-testing
# The launcher that measures each client's CPU and peak RSS (see scripts/rusage.c).
if [ ! -x target/bench-rusage ] || [ scripts/rusage.c -nt target/bench-rusage ]; then
  cc -O2 -static -o target/bench-rusage scripts/rusage.c 2>/dev/null \
    || cc -O2 -o target/bench-rusage scripts/rusage.c
fi
PATH="$PWD/.venv-bench/bin:$PATH" python3 scripts/bench.py "$@"
