# respload: `make demo` runs the quickstart against a throwaway local redis-server;
# `make test` runs every test suite and `make examples`; `make lint` runs every language's
# linters; `make docs` builds the docs site into site/; `make dist` the release artifacts into
# dist/. Each installs what is missing first.
SHELL := /bin/bash
export PATH := $(HOME)/.cargo/bin:$(PATH)

.PHONY: deps build demo test test-rust test-python test-node test-docs test-dist test-timing mutants examples notebooks dist docs lint bench bench-quick fuzz soak clean

deps:
	@scripts/ensure-deps.sh

build: deps
	cargo build --release -p respload -p respload-testing

demo: build
	scripts/demo.sh

test: deps test-rust test-python test-node test-docs examples test-dist

# Then the suites that run workloads a second time on io_uring (load.io = "uring"): exact
# counts, killed connections, stop, thresholds' abort, cluster redirects and failover
# (docs/development.md, "Both transports").
URING_CLUSTER = moved ask_redirections killed_primary failover stop_gives tryagain clusterdown replies_longer sets_are_routed
test-rust:
	cargo test -p respload -p respload-testing --profile ci
	RESPLOAD_TEST_IO=uring cargo test -p respload --profile ci --test engine --test handshake --test workload --test thresholds
	RESPLOAD_TEST_IO=uring cargo test -p respload --profile ci --test cluster --test drills -- $(URING_CLUSTER)

test-python:
	scripts/test-python.sh

test-node:
	scripts/test-node.sh

# Repeat mode of the timing tests (scripts/test_timing.py): every Rust test that judges a time,
# a rate or a latency, run N times (default 20) one at a time; prints each test's pass rate and
# fails when one is under 95%. TIMING=NAME runs only the tests whose name contains NAME.
N ?= 20
TIMING ?=
test-timing: deps
	scripts/test_timing.py $(N) $(TIMING)

# Mutation testing (scripts/mutants.sh): cargo-mutants over the modules whose results users
# act on, judged by the unit tests and the non-timing suites; FILES=... for some of them.
# Hours on 2 cores for all: not part of `make test`. Counts in docs/development.md.
FILES ?=
mutants: deps
	scripts/mutants.sh $(FILES)

# The release artifacts installed and run with no Rust on PATH: the wheel in a fresh venv, the
# npm tarballs in a fresh project, the CLI archive (scripts/test-dist.sh, after `make dist`).
test-dist: deps
	scripts/test-dist.sh

# This machine's release artifacts into dist/ (scripts/dist.sh): the Python wheel
# (manylinux2014, abi3) and sdist, the npm packages `respload` and `@respload/linux-x64-gnu`,
# the CLI archive. Other platforms: .github/workflows/release.yml.
dist: deps
	scripts/dist.sh

# Every published scenario of examples/scenarios/ replayed at CI scale on local servers
# (Python, Node, notebooks): one verdict line per scenario (docs/scenarios.md).
examples: deps
	scripts/examples.sh

# Every notebook of examples/notebooks/ executed and saved with its outputs, so that GitHub
# shows their plots; `make examples` re-executes them without comparing outputs.
notebooks: deps
	source scripts/python-env.sh && python scripts/run-notebook.py --write examples/notebooks/*.ipynb

# The docs site builds with no broken link or anchor, the generated reference pages match the
# Rust sources, and the code the pages show matches the files it is copied from.
test-docs:
	scripts/docs.sh --check

# The docs site, into site/ (the reference pages and the pages' code regenerated first).
docs:
	scripts/docs.sh

# Every language's linters (scripts/lint.sh): Rust (cargo fmt --check, clippy -D warnings),
# Python (ruff check, ruff format --check), JavaScript (node --check, scripts/check-js.mjs,
# the .d.ts typecheck). Installs a missing tool first; quick when all is there.
lint:
	scripts/lint.sh

# A benchmark, never a test: W1-W5, TLS vs plaintext, cluster vs one node (docs/performance.md).
bench: build
	scripts/bench.sh

# Under a minute: W1 and W2 briefly, prints respload's ratios to redis-benchmark.
bench-quick: build
	scripts/bench.sh --quick

# Coverage-guided fuzzing of every parser (scripts/fuzz.sh, cargo-fuzz on nightly): each
# target for FUZZ_SECONDS (default 300); crashes land in fuzz/artifacts/.
fuzz:
	scripts/fuzz.sh $(FUZZ_SECONDS)

# The chaos soak (scripts/soak.py): four workloads (closed and open loop, pipelined and not,
# standalone, TLS, a primary + replica pair, a 6-node cluster) while servers are killed,
# stopped, paused, failed over, filled to maxmemory; asserts no hang, counts that add up,
# every fault in the timeline, no leak (the least-squares slope of the heap in use between
# rounds, glibc's mallinfo2, under 10 MB/h, so a 20 MB/h leak fails, in 120 s as in an hour;
# printed and in target/soak/soak-summary.json as heap_slope_mb_per_h), RSS at most 5 MB up
# after the first minute. SOAK_SECONDS (default 3600); `make test` runs 120, then 120 with
# `--leak 20`, which must be judged a leak (scripts/test-python.sh).
SOAK_SECONDS ?= 3600
soak: deps
	source scripts/python-env.sh && python scripts/soak.py --seconds $(SOAK_SECONDS)

# Build outputs: cargo's, the release artifacts (make dist), the fuzz targets' build.
clean:
	cargo clean
	rm -rf dist fuzz/target
