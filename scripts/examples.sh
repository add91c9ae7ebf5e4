#!/usr/bin/env bash
# `make examples`: replay every published scenario of examples/scenarios/ at CI scale on
# local servers the replays start themselves, through the Python binding, the Node binding
# and the notebooks (and scenario 2 from 3 hosts of a local Ray cluster), and the captured
# trace of examples/traces/ through the Node binding, and a capture, replay and model of the
# example cache service's traffic (notebook your-own-traffic); one verdict line per scenario
# and runner, non-zero on any failure.
# Installs and builds what is missing first (the Python venv and module, the Node addon).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/python-env.sh
scripts/node-build.sh

echo "examples: Python replays" >&2
python examples/python/replay.py
echo "examples: the cluster sizing scenario from 3 hosts of a local Ray cluster" >&2
python examples/python/distributed.py
echo "examples: Node replays" >&2
node examples/node/replay.mjs
echo "examples: Node replay of a captured trace (examples/traces/)" >&2
node --test examples/node/trace-replay.test.mjs
echo "examples: notebooks" >&2
python scripts/run-notebook.py \
  examples/notebooks/managed-cache-guide.ipynb \
  examples/notebooks/cluster-sizing-3x2.ipynb \
  examples/notebooks/ram-flash-tiering.ipynb \
  examples/notebooks/instance-comparison.ipynb \
  examples/notebooks/distributed.ipynb \
  examples/notebooks/your-own-traffic.ipynb
