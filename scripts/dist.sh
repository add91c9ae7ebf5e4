#!/usr/bin/env bash
# `make dist`: this machine's release artifacts (Linux x86_64, glibc) into dist/:
#
#   respload-V-cp39-abi3-manylinux_2_17_x86_64.manylinux2014_x86_64.whl
#                                     the Python wheel: one for every Python from 3.9 (abi3),
#                                     glibc 2.17 or newer (maturin --zig, manylinux2014)
#   respload-V.tar.gz                 the Python sdist (pip builds it with Rust 1.88+)
#   respload-V.tgz                    the npm package `respload` (JavaScript, types, testing
#                                     helpers; optionalDependencies name the platform packages)
#   respload-linux-x64-gnu-V.tgz      the npm package `@respload/linux-x64-gnu`, the Linux x64 glibc addon
#   respload-V-x86_64-linux.tar.gz    the `respload` binary with README.md and LICENSE
#
#   scripts/dist.sh                   # all of them
#   scripts/dist.sh wheel npm ...     # only these (wheel, sdist, npm, cli)
#
# What is compiled: the wheel, with the cargo profile `dist` (release without debug info),
# in target/x86_64-unknown-linux-gnu/dist/; scripts/python-env.sh installs this same wheel for
# the Python tests, so that crate graph is built once for both. The addon and the binary are
# the release builds the tests use (scripts/node-build.sh, `cargo build --release`), copied
# with their debug info stripped (objcopy --strip-debug, what the `dist` profile's
# `strip = "debuginfo"` does), not compiled again. Quick when everything is built.
# scripts/test-dist.sh installs and tests the artifacts; the release workflow
# (.github/workflows/release.yml) builds them for every platform.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"
mkdir -p dist
VERSION=$(python3 -c 'import tomllib; print(tomllib.load(open("Cargo.toml", "rb"))["workspace"]["package"]["version"])')
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

# maturin and zig (the ziglang package) in the project's venv, installed when missing.
python_tools() {
  scripts/venv.sh
  local missing=()
  [ -x .venv/bin/maturin ] || missing+=("maturin>=1.16,<2")
  .venv/bin/python -c "import ziglang" 2>/dev/null || missing+=(ziglang)
  if [ ${#missing[@]} -gt 0 ]; then
    echo "dist: installing ${missing[*]} into .venv" >&2
    .venv/bin/python -m pip install --quiet --disable-pip-version-check "${missing[@]}"
  fi
}

wheel() {
  python_tools
  echo "dist: the wheel (maturin --zig, profile dist, manylinux2014)" >&2
  rm -f dist/respload-*.whl
  # .venv/bin first: maturin runs zig as `python -m ziglang`.
  PATH="$PWD/.venv/bin:$PATH" maturin build --profile dist --zig --compatibility manylinux2014 \
    --out dist --quiet
}

sdist() {
  python_tools
  echo "dist: the sdist" >&2
  rm -f "dist/respload-$VERSION.tar.gz"
  .venv/bin/maturin sdist --out dist >/dev/null
}

npm_packages() {
  scripts/node-build.sh
  echo "dist: the npm packages" >&2
  objcopy --strip-debug bindings-node/respload.linux-x64-gnu.node \
    bindings-node/npm/linux-x64-gnu/respload.linux-x64-gnu.node
  scripts/npm-pack.sh linux-x64-gnu
}

cli() {
  echo "dist: the CLI archive" >&2
  cargo build --release -p respload --bin respload --quiet
  local name="respload-$VERSION-x86_64-linux"
  mkdir "$TMP/$name"
  objcopy --strip-debug target/release/respload "$TMP/$name/respload"
  cp README.md LICENSE "$TMP/$name/"
  tar -czf "dist/$name.tar.gz" -C "$TMP" "$name"
}

parts=("$@")
[ ${#parts[@]} -gt 0 ] || parts=(wheel sdist npm cli)
for part in "${parts[@]}"; do
  case "$part" in
    wheel) wheel ;;
    sdist) sdist ;;
    npm) npm_packages ;;
    cli) cli ;;
    *)
      echo "dist: unknown part '$part' (wheel, sdist, npm, cli)" >&2
      exit 2
      ;;
  esac
done
echo "dist: in dist/:" >&2
(cd dist && ls -l --block-size=K -- *"$VERSION"* >&2)
