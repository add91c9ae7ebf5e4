#!/usr/bin/env bash
# Create the project's Python venv in .venv when it is missing (Debian's python3 needs the
# python3-venv package for it, installed then). Used by python-env.sh and docs.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
VENV="$PWD/.venv"
[ -x "$VENV/bin/python" ] && exit 0
echo "venv: creating $VENV" >&2
if ! python3 -m venv "$VENV" 2>/dev/null; then
  rm -rf "$VENV"
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y python3-venv >/dev/null 2>&1 || {
    $SUDO apt-get update >/dev/null && DEBIAN_FRONTEND=noninteractive \
      $SUDO apt-get install -y python3-venv >/dev/null
  }
  python3 -m venv "$VENV"
fi
