# schedlab — the README's commands: `make demo`, `make test`, `make bench`.
# Everything needed is installed by these targets on a fresh machine (Debian + rustup + CPython).

SHELL := /bin/bash
VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(VENV)/bin/pip
STAMP := $(VENV)/.deps-stamp

.PHONY: demo test test-rust test-python lint fmt-check bench develop clean

$(STAMP): pyproject.toml
	python3 -m venv $(VENV)
	$(PIP) install --quiet --upgrade pip
	$(PIP) install --quiet "maturin>=1.5,<2" "click>=8.1" "rich>=13" "polars>=1.0" "matplotlib>=3.7" "jinja2>=3.1" "pytest>=7" "ruff>=0.5" "hypothesis>=6" "distributed>=2024.1" "pyyaml>=6" "scipy>=1.10"
	touch $(STAMP)

# Build the Rust extension into the venv (release: the simulator is the hot path).
develop: $(STAMP)
	VIRTUAL_ENV=$(abspath $(VENV)) PATH=$(abspath $(VENV))/bin:$$PATH $(VENV)/bin/maturin develop --release --quiet
	@# `schedlab readyq` (seed 002): the probe next to the venv's python, valgrind for exact counts
	cargo build --release -p schedlab-rtq-probe --quiet
	install -m 755 "$${CARGO_TARGET_DIR:-target}/release/rtq-probe" $(VENV)/bin/rtq-probe
	@command -v valgrind >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq valgrind; } \
		|| echo "warning: valgrind could not be installed; schedlab readyq will report instruction counts as unavailable" >&2
	@# the report's host cross-check runs the real cyclictest (Debian package rt-tests 2.4)
	@command -v cyclictest >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq rt-tests; } \
		|| echo "warning: rt-tests could not be installed; the report's host cross-check will say cyclictest did not run" >&2
	@# the host cross-checks also run Debian's rt-app 1.0 and fio (`schedlab reproduce --host`)
	@command -v rt-app >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq rt-app; } \
		|| echo "warning: rt-app could not be installed; the host cross-checks will say rt-app did not run" >&2
	@command -v fio >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq fio; } \
		|| echo "warning: fio could not be installed; the host cross-checks will say fio did not run" >&2

demo: develop
	$(VENV)/bin/schedlab reproduce --quick --out report
	@echo "report written to report/index.html"

test: test-rust test-python

test-rust: fmt-check
	cargo test --workspace --exclude schedlab-py --quiet
	@# rust-version is true: no dependency needs more, and clippy's incompatible_msrv lint
	@# flags any standard-library API newer than it
	python3 scripts/check-rust-version.py
	cargo clippy --workspace --all-targets --quiet -- -D warnings
	@# the ready-queue crate must build for no_std without alloc (the workspace enables alloc)
	cargo build -p schedlab-rtq --no-default-features --quiet

test-python: develop
	$(PY) -m pytest -q tests

# rustfmt on every file: `cargo fmt` does not reach modules declared inside a macro (the
# policy registry's)
RS_FILES = $(shell find crates -name '*.rs' -not -path '*/target/*')

fmt-check:
	@echo "rustfmt --edition 2021 --check <every .rs file under crates/>"
	@rustfmt --edition 2021 --check $(RS_FILES)

lint: $(STAMP) fmt-check
	cargo clippy --workspace --all-targets -- -D warnings
	$(VENV)/bin/ruff check python tests

bench: develop
	cargo run --release -p schedlab-sim --example bench --quiet
	cargo run --release -p schedlab-spec --example validate_scale --quiet
	cargo bench -p schedlab-rtq --bench readyq --quiet
	$(VENV)/bin/schedlab readyq --quick
