# respload: `make demo` runs the quickstart against a throwaway local redis-server;
# `make test` runs every test suite. Both install what is missing first.
SHELL := /bin/bash
export PATH := $(HOME)/.cargo/bin:$(PATH)

.PHONY: deps build demo test test-rust test-python test-node lint bench bench-quick clean

deps:
	@scripts/ensure-deps.sh

build: deps
	cargo build --release -p respload

demo: build
	scripts/demo.sh

test: deps test-rust test-python test-node

test-rust:
	cargo test -p respload --release

test-python:
	scripts/test-python.sh

test-node:
	scripts/test-node.sh

lint:
	cargo fmt --all -- --check
	cargo clippy --workspace --all-targets --release -- -D warnings

# A benchmark, never a test: W1-W5, TLS vs plaintext, cluster vs one node (docs/performance.md).
bench: build
	scripts/bench.sh

# Under a minute: W1 and W2 briefly, prints respload's ratios to redis-benchmark.
bench-quick: build
	scripts/bench.sh --quick

clean:
	cargo clean
