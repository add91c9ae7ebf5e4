#!/usr/bin/env bash
# Build the Node addon (release) for the Node tests and examples, installing the npm dev
# dependencies when they are missing. Works from a fresh clone; quick when all is there.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"
scripts/ensure-deps.sh
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  echo "node-build: node and npm are needed (Node 20 or newer)" >&2
  exit 1
fi
major=$(node -p 'process.versions.node.split(".")[0]')
if [ "$major" -lt 20 ]; then
  echo "node-build: Node $(node --version) is too old: Node 20 or newer is needed" >&2
  exit 1
fi
if [ ! -x node_modules/.bin/napi ] || [ ! -x node_modules/.bin/tsc ]; then
  echo "node-build: npm install" >&2
  npm install --no-audit --no-fund --loglevel=error
fi
echo "node-build: building the native addon (release)" >&2
npm run --silent build
