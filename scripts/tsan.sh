#!/usr/bin/env bash
# The threaded parts under ThreadSanitizer (clang): parallelFor itself, Monte Carlo samples, sweeps on several
# threads, --advice's candidates and compare's seeds, each running whole simulations on worker threads. Any data
# race fails the test it is in. Usage: scripts/tsan.sh [GTEST_ARGS...]   (builds build-tsan)
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=${STEPSIM_JOBS:-$(nproc)}
targets=(parallel_for_test monte_carlo_test sweep_test advice_test compare_test)
CC=clang CXX=clang++ cmake -S . -B build-tsan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1" -DCMAKE_CXX_FLAGS="-fsanitize=thread -fno-omit-frame-pointer" \
  -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=thread" -DCMAKE_SHARED_LINKER_FLAGS="-fsanitize=thread" \
  -DSTEPSIM_BUILD_TESTS=ON -DSTEPSIM_BUILD_BENCH=OFF -DSTEPSIM_SHARED_LAYERS=ON >/dev/null
cmake --build build-tsan -j"$jobs" --target stepsim "${targets[@]}"
export TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1
# Each executable run whole (their tests are fast-labelled; the working directory is the repository, as ctest's).
status=0
for t in "${targets[@]}"; do
  exe=$(find build-tsan/tests -name "$t" -type f -perm -u+x | head -n 1)
  echo "tsan: $t"
  timeout 900 "$exe" "$@" --gtest_brief=1 || status=1
done
exit $status
