#!/usr/bin/env bash
# Mutation testing (`make mutants`, issue 50): cargo-mutants over the modules whose results
# users act on (the report's compare, check, thresholds and merge; the RESP framer; the
# open-loop pacer, the arrivals sample and the validity checks), each mutant judged by the
# core's unit tests and the integration suites named below. A mutant that survives is a
# line no test would miss: it is killed by a new test or explained in docs/development.md
# ("Mutation testing"), where the counts are published.
#
#   scripts/mutants.sh                               # every module below (hours on 2 cores)
#   scripts/mutants.sh core/src/report/thresholds.rs # one module
#
# Results: target/mutants/mutants.out/ (caught.txt, missed.txt, unviable.txt, timeout.txt).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"
command -v cargo-mutants >/dev/null || cargo install --locked cargo-mutants
files=("$@")
if [ ${#files[@]} -eq 0 ]; then
  files=(
    core/src/report/thresholds.rs
    core/src/stats/validity.rs
    core/src/report/check.rs
    core/src/stats/arrivals.rs
    core/src/engine/pacer.rs
    core/src/report/compare.rs
    core/src/resp/framer.rs
    core/src/report/merge.rs
  )
fi
args=()
for f in "${files[@]}"; do args+=(--file "$f"); done
# The unit tests and the suites that judge these modules' figures without timing: a timing
# test's verdict depends on the machine, which would make a mutant's outcome noise.
exec cargo mutants -p respload "${args[@]}" --output target/mutants --timeout-multiplier 3 \
  -- --lib --test thresholds --test merge --test join --test workload
