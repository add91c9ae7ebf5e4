#!/usr/bin/env bash
# Build the Node addon, type-check the package's declarations (tsc --strict on
# bindings-node/tests/types-check.mts) and run the Node test suite (node:test, real
# redis-server processes). Works from a fresh clone: installs the npm dev dependencies when
# they are missing.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/node-build.sh
echo "test-node: type-checking bindings-node/*.d.ts" >&2
npm run --silent typecheck
node --test bindings-node/tests/ examples/node/
