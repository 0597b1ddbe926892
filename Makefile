# mcpline front door.  The README's two commands:
#
#   make demo   build into .venv and run the demo server (`mcpline demo`)
#   make test   everything CI runs: venv, build, node, lint, test-rust, test-python
#
# Needs python3 (>= 3.11 with the venv module; Debian: apt-get install python3-venv), cargo
# (rustup, with clippy and rustfmt), node >= 20 with npm, make and a C compiler.
#
# Build choice: `maturin develop` with cargo's dev profile (unoptimised, debug assertions on).
# On 2 cores it is the fastest way to an importable extension: it compiles the dependency
# graph in the same profile as `cargo test`, so the two share most of ./target, whereas
# `--release` (fat LTO, one codegen unit, see [profile.release]) is a separate, much slower
# build, and `pip install -e .` goes through maturin's PEP 517 backend, which builds in release
# mode as well.  Set MATURIN_PROFILE=release for an optimised extension (e.g. benchmarks).

PYTHON ?= python3
VENV ?= .venv
VPY := $(VENV)/bin/python
MATURIN_PROFILE ?= dev
INTEROP := tests/interop
# Pass extra arguments to the demo: make demo DEMO_ARGS="--help"
DEMO_ARGS ?=

# Let pyo3's build script see the same interpreter in every cargo run (lint, test-rust and
# maturin develop), so they reuse each other's artefacts instead of rebuilding pyo3.
export PYO3_PYTHON := $(abspath $(VPY))
export PIP_DISABLE_PIP_VERSION_CHECK := 1

.PHONY: venv build node lint test-rust test-python test demo clean help

help:
	@echo "make demo | make test | venv build node lint test-rust test-python | clean"

# --- environment ---------------------------------------------------------------------------

venv: $(VENV)/.installed

# Rebuilt when pyproject.toml changes.  The test extra's requirements are read from
# pyproject.toml (the one list of them) and installed without building the project itself.
$(VENV)/.installed: pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 11))' || \
	  { echo "error: $(PYTHON) is older than 3.11 (tomllib is needed): set PYTHON=python3.x" >&2; exit 1; }
	@test -x $(VPY) || $(PYTHON) -m venv $(VENV) || \
	  { rm -rf $(VENV); echo "error: '$(PYTHON) -m venv' failed (Debian/Ubuntu: apt-get install python3-venv)" >&2; exit 1; }
	$(VPY) -c 'import tomllib; print("\n".join(tomllib.load(open("pyproject.toml", "rb"))["project"]["optional-dependencies"]["test"]))' > $(VENV)/test-requirements.txt
	$(VPY) -m pip install --quiet 'maturin>=1.8,<2' -r $(VENV)/test-requirements.txt
	@touch $@

build: venv
	$(VENV)/bin/maturin develop --profile $(MATURIN_PROFILE)

node: $(INTEROP)/node_modules/.package-lock.json

# npm ci writes node_modules/.package-lock.json: reinstall only when the lockfile changes.
$(INTEROP)/node_modules/.package-lock.json: $(INTEROP)/package-lock.json $(INTEROP)/package.json
	npm ci --prefix $(INTEROP) --no-audit --no-fund

# --- checks --------------------------------------------------------------------------------

# stubtest imports the built extension, hence `build`.
lint: build
	cargo fmt --all --check
	cargo clippy --workspace --all-targets -- -D warnings
	$(VENV)/bin/ruff check python tests
	$(VPY) -m mypy python/mcpline
	@if [ -f .stubtest-allowlist ]; then \
	  echo "$(VPY) -m mypy.stubtest mcpline._core --allowlist .stubtest-allowlist"; \
	  $(VPY) -m mypy.stubtest mcpline._core --allowlist .stubtest-allowlist; \
	else \
	  echo "$(VPY) -m mypy.stubtest mcpline._core"; \
	  $(VPY) -m mypy.stubtest mcpline._core; \
	fi
	@if command -v actionlint >/dev/null 2>&1; then \
	  echo actionlint; actionlint; \
	else \
	  echo "actionlint not installed: workflow lint skipped"; \
	fi

test-rust: venv
	cargo test --workspace

test-python: build node
	$(VPY) -m pytest

# Prerequisites run left to right with plain `make`; the dependencies above keep `make -j`
# correct too.
test: venv build node lint test-rust test-python

# The demo speaks MCP on stdout, so the build's chatter goes to stderr: `make -s demo` can
# itself be an MCP client's server command.
demo:
	@$(MAKE) --no-print-directory build 1>&2
	@echo "$(VENV)/bin/mcpline demo $(DEMO_ARGS)" >&2
	@$(VENV)/bin/mcpline demo $(DEMO_ARGS)

clean:
	rm -rf $(VENV) $(INTEROP)/node_modules python/mcpline/_core*.so python/mcpline/_core*.pyd
