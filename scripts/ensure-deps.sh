#!/usr/bin/env bash
# Install what the build and tests need, when missing; quick when everything is there.
set -euo pipefail
need_apt=()
command -v redis-server >/dev/null 2>&1 || need_apt+=(redis-server)
command -v redis-cli >/dev/null 2>&1 || need_apt+=(redis-tools)
command -v redis-benchmark >/dev/null 2>&1 || need_apt+=(redis-tools)
# The TLS tests encrypt a client key with it, as a user would.
command -v openssl >/dev/null 2>&1 || need_apt+=(openssl)
# The HTML report's tests open its pages in a real browser (headless).
command -v chromium >/dev/null 2>&1 || need_apt+=(chromium)
if [ ${#need_apt[@]} -gt 0 ]; then
  echo "ensure-deps: installing ${need_apt[*]}" >&2
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get install -y "${need_apt[@]}" >/dev/null 2>&1 || {
    $SUDO apt-get update >/dev/null && $SUDO apt-get install -y "${need_apt[@]}" >/dev/null
  }
  # Debian starts a system redis on 6379; our demo and tests use their own ports.
fi
if ! command -v cargo >/dev/null 2>&1; then
  if [ -x "$HOME/.cargo/bin/cargo" ]; then
    export PATH="$HOME/.cargo/bin:$PATH"
  else
    echo "ensure-deps: installing Rust with rustup" >&2
    curl -sSf https://sh.rustup.rs | sh -s -- -y --profile minimal >/dev/null
  fi
fi
