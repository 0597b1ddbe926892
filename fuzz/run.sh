#!/usr/bin/env bash
# Fuzzes the core's stdio framing and dispatch (fuzz/fuzz_targets/stdio.rs) for a bounded time.
#
#   bash fuzz/run.sh [SECONDS]      (default 60)
#
# Builds the target with plain cargo and the flags cargo-fuzz would pass, so no cargo-fuzz
# install is needed: the nightly toolchain when rustup has one, else the default one with
# RUSTC_BOOTSTRAP=1 (the sanitizer flag is unstable). Needs a C++ compiler (libfuzzer-sys
# compiles libFuzzer). Builds into $CARGO_TARGET_DIR (default: target/fuzz in the repository)
# and downloads into $CARGO_HOME as cargo always does.
#
# The committed corpus (fuzz/corpus/stdio) is only read: what the fuzzer finds goes to a scratch
# directory that is deleted afterwards. A crash makes the script fail and says where the input
# was saved; minimise it (-minimize_crash=1) and add it to the corpus once the bug is fixed.
set -euo pipefail

seconds="${1:-60}"
case "$seconds" in
  '' | *[!0-9]*) echo "usage: fuzz/run.sh [SECONDS]" >&2; exit 2 ;;
esac

fuzz="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(dirname "$fuzz")"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$root/target/fuzz}"
# Instrument the code under test only, never build scripts or proc macros: flags given in
# RUSTFLAGS reach only the crates of an explicit --target.
host="$(rustc -vV | sed -n 's/^host: //p')"

toolchain=()
if command -v rustup >/dev/null 2>&1 && rustup toolchain list | grep -q '^nightly'; then
  toolchain=(+nightly)
else
  export RUSTC_BOOTSTRAP=1
fi

if ! command -v "${CXX:-c++}" >/dev/null 2>&1; then
  echo "error: no C++ compiler (${CXX:-c++}); libfuzzer-sys builds libFuzzer from C++ (Debian: apt-get install g++)" >&2
  exit 1
fi

# What cargo-fuzz passes (its default coverage level 4, compare tracing for the dictionary-like
# progress through string comparisons, the Linux stack-depth feature), with assertions and
# overflow checks on, and AddressSanitizer (its runtime ships with the Linux rust-std).
rustflags=(
  --cfg fuzzing
  -Cpasses=sancov-module
  -Cllvm-args=-sanitizer-coverage-level=4
  -Cllvm-args=-sanitizer-coverage-inline-8bit-counters
  -Cllvm-args=-sanitizer-coverage-pc-table
  -Cllvm-args=-sanitizer-coverage-trace-compares
  -Cdebug-assertions
  -Coverflow-checks
  -Zsanitizer=address
)
case "$host" in
  *-linux-*) rustflags+=(-Cllvm-args=-sanitizer-coverage-stack-depth) ;;
esac

echo "building the fuzz target (cargo ${toolchain[*]:-} build --release, target $host)"
started=$SECONDS
RUSTFLAGS="${rustflags[*]}" cargo "${toolchain[@]}" build --release --locked \
  --manifest-path "$fuzz/Cargo.toml" --target "$host" --bin stdio
echo "built in $((SECONDS - started)) s"
binary="$CARGO_TARGET_DIR/$host/release/stdio"

scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
artifacts="$CARGO_TARGET_DIR/artifacts/stdio"
mkdir -p "$scratch/corpus" "$artifacts"

# libFuzzer writes new inputs into its first corpus directory only: the scratch one.
status=0
"$binary" "$scratch/corpus" "$fuzz/corpus/stdio" \
  -dict="$fuzz/dict/jsonrpc.dict" \
  -max_total_time="$seconds" \
  -max_len=262144 \
  -timeout=10 \
  -rss_limit_mb=2048 \
  -print_final_stats=1 \
  -artifact_prefix="$artifacts/" || status=$?

if [ "$status" -ne 0 ]; then
  echo >&2
  echo "error: the fuzzer failed (exit $status); the failing input is saved in $artifacts:" >&2
  # shellcheck disable=SC2012 # names are libFuzzer's own (crash-<sha1> and the like)
  ls -t "$artifacts" | head -n 3 | sed "s|^|  $artifacts/|" >&2
  echo "replay it with: $binary <file>" >&2
  exit 1
fi
echo "no failure in ${seconds} s of fuzzing"
