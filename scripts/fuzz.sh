#!/usr/bin/env bash
# Coverage-guided fuzzing of respload's parsers (issue 29): each target of fuzz/ runs for
# SECONDS (default 300) from its committed seed corpus, on the nightly toolchain.
#
#   scripts/fuzz.sh [SECONDS] [TARGET...]     # make fuzz; FUZZ_SECONDS=30 make fuzz
#
# Crashes are written to fuzz/artifacts/TARGET/ and the script exits 1; each one found
# becomes a regression test in the normal suite. New inputs found go to a scratch corpus,
# so the committed seeds stay as reviewed.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"
seconds="${1:-${FUZZ_SECONDS:-300}}"
shift || true
targets=("$@")
# Every target of fuzz/fuzz_targets/ by default: a new one is never left out.
if [ ${#targets[@]} -eq 0 ]; then
  for f in fuzz/fuzz_targets/*.rs; do targets+=("$(basename "$f" .rs)"); done
fi
rustup toolchain list | grep -q '^nightly' || rustup toolchain install nightly --profile minimal
command -v cargo-fuzz >/dev/null || cargo install cargo-fuzz --locked
status=0
for t in "${targets[@]}"; do
  scratch="$(mktemp -d)"
  echo "fuzz: $t for ${seconds}s" >&2
  if ! (cd fuzz && cargo +nightly fuzz run "$t" "$scratch" "corpus/$t" -- \
      -max_total_time="$seconds" -rss_limit_mb=2048 -max_len=65536 -print_final_stats=1 \
      2> >(grep -E '^(stat::number_of_executed_units|stat::peak_rss_mb|==|SUMMARY|Done)' >&2)); then
    echo "fuzz: $t FAILED (crash input in fuzz/artifacts/$t/)" >&2
    status=1
  fi
  rm -rf "$scratch"
done
exit $status
