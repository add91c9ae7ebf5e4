#!/usr/bin/env bash
# Start a throwaway redis-server on a free loopback port, run the quickstart scenario
# against it, print the report, stop the server.
set -euo pipefail
cd "$(dirname "$0")/.."
port=$(scripts/free-port.sh)
dir=$(mktemp -d)
redis-server --port "$port" --bind 127.0.0.1 --save "" --appendonly no --dir "$dir" \
  --daemonize yes --pidfile "$dir/redis.pid" --logfile "$dir/redis.log"
cleanup() { kill "$(cat "$dir/redis.pid" 2>/dev/null)" 2>/dev/null || true; rm -rf "$dir"; }
trap cleanup EXIT
for _ in $(seq 50); do redis-cli -p "$port" ping >/dev/null 2>&1 && break; sleep 0.1; done
echo "demo: redis-server $(redis-server --version | awk '{print $3}') on 127.0.0.1:$port" >&2
# The command docs/getting-started.md shows (a snippet of this file).
# --8<-- [start:run]
target/release/respload run examples/scenarios/quickstart.toml \
  --url "redis://127.0.0.1:$port" --json target/demo-report.json
# --8<-- [end:run]
echo "demo: JSON report in target/demo-report.json" >&2
