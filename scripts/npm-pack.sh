#!/usr/bin/env bash
# Pack the npm packages into dist/: the main package `respload` and the platform package
# `@respload/PLATFORM` (bindings-node/npm/PLATFORM, the layout of napi's create-npm-dirs, whose
# addon respload.PLATFORM.node must be in place). Used by scripts/dist.sh and the release
# workflow.
#
#   scripts/npm-pack.sh linux-x64-gnu
#
# The main package is what package.json's `files` selects, with optionalDependencies on every
# platform package of bindings-node/npm/ (what `napi prepublish` adds before publishing) and
# without the development fields (devDependencies, scripts).
set -euo pipefail
cd "$(dirname "$0")/.."
platform=${1:?usage: scripts/npm-pack.sh PLATFORM (a directory of bindings-node/npm/)}
dir="bindings-node/npm/$platform"
if [ ! -f "$dir/respload.$platform.node" ]; then
  echo "npm-pack: $dir/respload.$platform.node is missing" >&2
  exit 1
fi
mkdir -p dist
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
npm pack "./$dir" --pack-destination dist --silent >/dev/null
npm pack --pack-destination "$tmp" --silent >/dev/null
tar -xzf "$tmp"/respload-*.tgz -C "$tmp"
node -e '
  const fs = require("node:fs")
  const file = process.argv[1]
  const pkg = JSON.parse(fs.readFileSync(file, "utf8"))
  pkg.optionalDependencies = {}
  for (const dir of fs.readdirSync("bindings-node/npm").sort()) {
    const platform = JSON.parse(fs.readFileSync(`bindings-node/npm/${dir}/package.json`, "utf8"))
    pkg.optionalDependencies[platform.name] = platform.version
  }
  delete pkg.devDependencies
  delete pkg.scripts
  fs.writeFileSync(file, JSON.stringify(pkg, null, 2) + "\n")
' "$tmp/package/package.json"
npm pack "$tmp/package" --pack-destination dist --silent >/dev/null
