#!/usr/bin/env bash
# The test suite under AddressSanitizer and UndefinedBehaviorSanitizer (clang): any report fails the test it is in.
# Usage: scripts/sanitize.sh [CTEST_ARGS...]   (builds build-asan, scripts/sanitized-build.sh; e.g. -R ScenarioLoader)
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/sanitized-build.sh
cmake --build build-asan -j"$jobs"
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
# The slow-labelled tests (the validation table, every example scenario, the benchmarks; minutes each under the
# sanitizers) ran in the plain build; give -L slow to run them here too.
[ $# -gt 0 ] || set -- -LE slow
ctest --test-dir build-asan --output-on-failure -j"$jobs" "$@"
