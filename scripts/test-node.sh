#!/usr/bin/env bash
# Build the Node addon and run the Node test suite (node:test, real redis-server processes).
# Works from a fresh clone: installs the npm dev dependencies when they are missing.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/node-build.sh
node --test bindings-node/tests/ examples/node/
