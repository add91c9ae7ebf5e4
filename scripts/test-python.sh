#!/usr/bin/env bash
# Build the Python package into .venv (created when missing) and run its checks and tests:
# ruff, mypy --strict, pytest against real redis-server processes. Quick when all is there.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"

source scripts/python-env.sh

ruff check bindings-python examples/python scripts/run-notebook.py scripts/bench.py scripts/soak.py
ruff format --check bindings-python examples/python scripts/run-notebook.py scripts/bench.py \
  scripts/soak.py
mypy
pytest bindings-python/tests -q

# The examples, each against a throwaway redis-server it starts itself (respload.testing).
echo "test-python: examples" >&2
python examples/python/quickstart.py
python examples/python/pipeline_depths.py
pytest examples/python -q
python scripts/run-notebook.py examples/notebooks/quickstart.ipynb

# The chaos soak for 2 minutes (make soak runs it for an hour): faults injected while four
# workloads run, six 20 s rounds, so every workload meets each of its (at most four) faults;
# fails on a hang, counts that do not add up, a fault the timeline does not show, a heap that
# grows between rounds by 10 MB/h or more, or RSS that grows after the first minute. (It was 3
# minutes; cut to keep `make test` under 35.)
echo "test-python: chaos soak (120 s)" >&2
python scripts/soak.py --seconds 120
# The leak judge must be able to fail: the same soak with a deliberate leak of 20 MB/h (a
# thread that mallocs and never frees; nothing of the library changed) fails unless the judge
# says "leak".
echo "test-python: chaos soak with a deliberate 20 MB/h leak (120 s)" >&2
python scripts/soak.py --seconds 120 --leak 20 --out target/soak-leak
