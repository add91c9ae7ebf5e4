#!/usr/bin/env bash
# Start a throwaway redis-server on a free loopback port (respload-servers: the
# respload-testing crate, which starts every test's servers too), run the quickstart scenario
# against it, print the report, stop the server.
set -euo pipefail
cd "$(dirname "$0")/.."
# The server stops, and its files go, when this pipe closes: at the end of this script,
# however it ends.
coproc SERVERS { exec target/release/respload-servers; }
stop() {
  # Gone already (bash unset these) when it failed to start.
  [ -z "${SERVERS[1]:-}" ] || eval "exec ${SERVERS[1]}>&-"
  [ -z "${SERVERS_PID:-}" ] || wait "$SERVERS_PID" 2>/dev/null || true
}
trap stop EXIT
read -r started <&"${SERVERS[0]}" || { echo "demo: redis-server did not start" >&2; exit 1; }
port=$(sed -E 's/.*"port": ([0-9]+).*/\1/' <<<"$started")
echo "demo: redis-server $(redis-server --version | awk '{print $3}') on 127.0.0.1:$port" >&2
# The command docs/getting-started.md shows (a snippet of this file).
# --8<-- [start:run]
target/release/respload run examples/scenarios/quickstart.toml \
  --url "redis://127.0.0.1:$port" --json target/demo-report.json
# --8<-- [end:run]
echo "demo: JSON report in target/demo-report.json" >&2
