# mcpline front door.  The README's two commands:
#
#   make demo   build into .venv and run the demo server (`mcpline demo`)
#   make test   everything CI runs, in this order: venv, lint-rust, lint-ci, test-rust, fuzz
#               (the core's stdio fuzz target for FUZZ_SECONDS), wheel (release build +
#               audit), wheel-venv (fresh venv with the wheel and its test extra), lint-python,
#               test-python, test-demo and test-conformance (against the installed wheel),
#               then test-windows
#
# Needs python3 (>= 3.10 with the venv module; Debian: apt-get install python3-venv), cargo
# (rustup, with clippy and rustfmt), node >= 20 with npm, make, a C compiler and (for `make
# fuzz`, which builds libFuzzer) a C++ compiler.  CI also has actionlint and shellcheck
# (.ci/run installs them); without them `make lint-ci` skips them, except when CI is set.
#
# Build choices:
# - The Python suite runs once, against what users install: the release wheel (`maturin build
#   --release`, abi3: one cp310-abi3 wheel for every CPython >= 3.10) installed into a fresh
#   venv, $(WHEEL_VENV).  That venv has no path into the source tree (no .pth, no PYTHONPATH,
#   and pytest's rootdir holds python/, not mcpline/), and wheel-venv checks that
#   mcpline._core imports from its site-packages.
# - ruff, mypy and stubtest (lint-python) run from that venv too: stubtest needs an importable
#   extension, and the installed wheel is one, so `make test` needs no second, dev build of the
#   extension, and stubtest checks the _core.pyi the wheel ships against the extension it ships.
# - clippy and `cargo test` use cargo's dev profile and share ./target; the release profile
#   (fat LTO, one codegen unit, see [profile.release]) is a separate build, the slowest step.
# - `make demo` (and `make build`) use `maturin develop` with the dev profile into .venv: the
#   quickest way to an importable extension when nothing else has been built.  Set
#   MATURIN_PROFILE=release for an optimised one (e.g. benchmarks).

PYTHON ?= python3
VENV ?= .venv
VPY := $(VENV)/bin/python
WHEEL_VENV ?= .venv-wheel
WPY := $(WHEEL_VENV)/bin/python
# Where `make wheel` leaves the wheel (emptied of older mcpline wheels first).
DIST ?= dist
MATURIN_PROFILE ?= dev
INTEROP := tests/interop
# Pass extra arguments to the demo: make demo DEMO_ARGS="--help"
DEMO_ARGS ?=
# How long `make fuzz` fuzzes (after building the target).
FUZZ_SECONDS ?= 60

# Let pyo3's build script see the same interpreter in every cargo run (clippy, cargo test,
# maturin), so they reuse each other's artefacts instead of rebuilding pyo3.
export PYO3_PYTHON := $(abspath $(VPY))
export PIP_DISABLE_PIP_VERSION_CHECK := 1

.PHONY: venv build node lint lint-rust lint-ci lint-python test-rust fuzz wheel wheel-venv \
	test-python test-demo test-conformance test-windows test demo clean help

help:
	@echo "make demo | make test | venv build node lint lint-rust lint-ci lint-python test-rust"
	@echo "fuzz wheel wheel-venv test-python test-demo test-conformance test-windows | clean"

# --- environment ---------------------------------------------------------------------------

venv: $(VENV)/.installed

# The build tools only: maturin, and auditwheel for `make wheel`.  The test extra goes into
# the wheel's own venv (wheel-venv).  Rebuilt when pyproject.toml changes (it pins maturin
# for PEP 517 builds; keep the two ranges in step).
$(VENV)/.installed: pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 10))' || \
	  { echo "error: $(PYTHON) is older than 3.10: set PYTHON=python3.x" >&2; exit 1; }
	@test -x $(VPY) || $(PYTHON) -m venv $(VENV) || \
	  { rm -rf $(VENV); echo "error: '$(PYTHON) -m venv' failed (Debian/Ubuntu: apt-get install python3-venv)" >&2; exit 1; }
	$(VPY) -m pip install --quiet 'maturin>=1.8,<2' 'auditwheel>=6.8,<7'
	@touch $@

build: venv
	$(VENV)/bin/maturin develop --profile $(MATURIN_PROFILE)

node: $(INTEROP)/node_modules/.package-lock.json

# npm ci writes node_modules/.package-lock.json: reinstall only when the lockfile changes.
$(INTEROP)/node_modules/.package-lock.json: $(INTEROP)/package-lock.json $(INTEROP)/package.json
	npm ci --prefix $(INTEROP) --no-audit --no-fund

# --- the wheel -----------------------------------------------------------------------------

# maturin tags the wheel with the oldest manylinux policy its symbols allow (its built-in
# audit); tests/audit_wheel.py runs auditwheel on the result and fails unless the wheel is
# cp310-abi3, tagged manylinux for this machine, and claims no more than auditwheel verified.
# auditwheel reads Linux ELF files only, hence the skip elsewhere.
wheel: venv
	rm -f $(DIST)/mcpline-*.whl
	$(VENV)/bin/maturin build --release --out $(DIST)
	@if [ "$$(uname -s)" = Linux ]; then \
	  echo "$(VPY) tests/audit_wheel.py --auditwheel $(VENV)/bin/auditwheel $(DIST)/mcpline-*.whl"; \
	  $(VPY) tests/audit_wheel.py --auditwheel $(VENV)/bin/auditwheel $(DIST)/mcpline-*.whl; \
	else \
	  echo "auditwheel checks Linux wheels only: audit skipped on $$(uname -s)"; \
	fi

# A fresh venv every time, with the wheel and the test extra it declares (so the extra comes
# from the wheel's metadata, i.e. pyproject.toml).  Run from the repository root like pytest,
# the check proves that `import mcpline` finds the installed wheel and not python/.
wheel-venv: wheel
	rm -rf $(WHEEL_VENV)
	$(PYTHON) -m venv $(WHEEL_VENV)
	@set -- $(DIST)/mcpline-*.whl; \
	  if [ "$$#" -ne 1 ] || [ ! -f "$$1" ]; then echo "error: expected one wheel in $(DIST), found: $$*" >&2; exit 1; fi; \
	  echo "$(WPY) -m pip install --quiet '$$1[test]'"; \
	  $(WPY) -m pip install --quiet "$$1[test]"
	$(WPY) -c 'import sys, sysconfig, pathlib, mcpline._core as c; \
	  site = pathlib.Path(sysconfig.get_paths()["platlib"]).resolve(); \
	  where = pathlib.Path(c.__file__).resolve(); print("mcpline._core:", where); \
	  sys.exit(0 if site in where.parents else f"error: {where} is not inside {site}")'

# --- checks --------------------------------------------------------------------------------

lint: lint-rust lint-ci lint-python

# The core is also linted as built for macOS and Windows (only each target's standard library
# is needed, no linker), so code behind their cfgs cannot stop compiling unseen.
CROSS_LINT_TARGETS = x86_64-apple-darwin x86_64-pc-windows-gnu

lint-rust: venv
	cargo fmt --all --check
	cargo clippy --workspace --all-targets -- -D warnings
	@for target in $(CROSS_LINT_TARGETS); do \
	  if rustup target list --installed 2>/dev/null | grep -qx "$$target"; then \
	    echo "cargo clippy -p mcpline-core --all-targets --target $$target -- -D warnings"; \
	    cargo clippy -p mcpline-core --all-targets --target "$$target" -- -D warnings || exit 1; \
	  elif [ -n "$$CI" ]; then \
	    echo "error: the Rust target $$target is not installed (CI is set)" >&2; exit 1; \
	  else \
	    echo "Rust target $$target not installed: its lint skipped (rustup target add $$target)"; \
	  fi; \
	done

# The workflows and the shell scripts.  actionlint also runs shellcheck on the workflows'
# run: scripts when shellcheck is on PATH.
lint-ci:
	@if command -v actionlint >/dev/null 2>&1; then \
	  echo actionlint; actionlint; \
	elif [ -n "$$CI" ]; then \
	  echo "error: actionlint is not installed (CI is set)" >&2; exit 1; \
	else \
	  echo "actionlint not installed: workflow lint skipped"; \
	fi
	@scripts=".ci/run $$(find tests fuzz -name '*.sh' | sort | tr '\n' ' ')"; \
	if command -v shellcheck >/dev/null 2>&1; then \
	  echo "shellcheck $$scripts"; shellcheck $$scripts; \
	elif [ -n "$$CI" ]; then \
	  echo "error: shellcheck is not installed (CI is set)" >&2; exit 1; \
	else \
	  echo "shellcheck not installed: shell script lint skipped"; \
	fi

# mypy checks python/ (the source, with its _core.pyi); stubtest checks the installed wheel's
# _core.pyi against its extension.
lint-python: wheel-venv
	$(WHEEL_VENV)/bin/ruff check python tests
	$(WPY) -m mypy python/mcpline
	@if [ -f .stubtest-allowlist ]; then \
	  echo "$(WPY) -m mypy.stubtest mcpline._core --allowlist .stubtest-allowlist"; \
	  $(WPY) -m mypy.stubtest mcpline._core --allowlist .stubtest-allowlist; \
	else \
	  echo "$(WPY) -m mypy.stubtest mcpline._core"; \
	  $(WPY) -m mypy.stubtest mcpline._core; \
	fi

test-rust: venv
	cargo test --workspace

# libFuzzer on the core's stdio framing and dispatch (fuzz/run.sh: built with the flags
# cargo-fuzz uses, into target/fuzz unless CARGO_TARGET_DIR is set; the committed corpus in
# fuzz/corpus/stdio seeds it and is replayed by `cargo test` too).
fuzz:
	bash fuzz/run.sh $(FUZZ_SECONDS)

test-python: wheel-venv node
	$(WPY) -m pytest

# The demo as an MCP host starts it: the wheel venv's `mcpline` console script, driven through
# initialize, tools/list and one tools/call (tests/demo_roundtrip.py).
test-demo: wheel-venv
	$(WPY) tests/demo_roundtrip.py $(WHEEL_VENV)/bin/mcpline

# The official MCP conformance suite (tests/conformance: pinned, with its own Node 22; Linux
# x86_64 only) against tests/servers/conformance_server.py served over Streamable HTTP by the
# wheel venv's console script, for 2025-11-25 and 2026-07-28; results in target/conformance.
test-conformance: wheel-venv
	bash tests/conformance/run.sh $(WHEEL_VENV)/bin/mcpline

# The Windows build and suite under wine (tests/windows/run.sh says what it needs).
# The Windows suite under wine (tests/windows/run.sh): the core's cargo tests and the extension
# cross-built for x86_64-pc-windows-gnu, pytest inside the embeddable Windows CPython, and stdio
# round trips driven from Linux through wine's pipes.
test-windows: venv
	bash tests/windows/run.sh

# Prerequisites run left to right with plain `make`; the dependencies above keep `make -j`
# correct too.
test: venv lint-rust lint-ci test-rust fuzz wheel wheel-venv lint-python test-python test-demo \
	test-conformance test-windows

# The demo speaks MCP on stdout, so the build's chatter goes to stderr: `make -s demo` can
# itself be an MCP client's server command.
demo:
	@$(MAKE) --no-print-directory build 1>&2
	@echo "$(VENV)/bin/mcpline demo $(DEMO_ARGS)" >&2
	@$(VENV)/bin/mcpline demo $(DEMO_ARGS)

clean:
	rm -rf $(VENV) $(WHEEL_VENV) $(DIST) $(INTEROP)/node_modules tests/conformance/node_modules \
	  python/mcpline/_core*.so python/mcpline/_core*.pyd
