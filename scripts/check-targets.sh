#!/usr/bin/env bash
# Type-check and lint the core and the Node binding for the macOS and Windows targets package.json
# declares, from this Linux machine: `cargo check` compiles the Rust code but links nothing,
# so ring's C and assembly (built by its build script with a compiler for the target, which
# is not here) are replaced by empty objects. Catches Linux-only APIs; it runs nothing.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"
fake="$(mktemp -d)"
trap 'rm -rf "$fake"' EXIT
# A "compiler" and an "archiver" that write the empty files they are asked for.
cat >"$fake/cc" <<'SH'
#!/bin/sh
out=""; prev=""
for a in "$@"; do [ "$prev" = "-o" ] && out="$a"; prev="$a"; done
[ -n "$out" ] && : >"$out"
exit 0
SH
cat >"$fake/ar" <<'SH'
#!/bin/sh
for a in "$@"; do case "$a" in -out:*) : >"${a#-out:}" ;; *.a) : >"$a" ;; esac; done
exit 0
SH
chmod +x "$fake/cc" "$fake/ar"
for target in x86_64-apple-darwin aarch64-apple-darwin x86_64-pc-windows-msvc; do
  rustup target list --installed | grep -qx "$target" || rustup target add "$target"
  var="${target//-/_}"
  echo "== $target"
  env "CC_$var=$fake/cc" "AR_$var=$fake/ar" cargo clippy --target "$target" \
    -p respload -p respload-node --target-dir target/check-targets -- -D warnings
done
