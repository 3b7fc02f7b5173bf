#!/usr/bin/env bash
# Configures build-asan, the one sanitized build that scripts/sanitize.sh (the test suite) and scripts/fuzz.sh (the
# libFuzzer targets) share: Debian's clang, AddressSanitizer and UndefinedBehaviorSanitizer, and libFuzzer's
# coverage instrumentation (fuzzer-no-link; in the test executables its callbacks are the sanitizer runtime's
# no-ops), so the simulator is compiled once for both. -O1 -g1 (line tables only: a report's stack still names file
# and line) and shared layers (each of the hundred test executables links a dozen libraries instead of a copy of
# the simulator) keep it short. Sourced, not run: it sets $jobs and leaves the build to the caller.
jobs=${STEPSIM_JOBS:-$(nproc)}
sanitizers="-fsanitize=address,undefined -fno-sanitize-recover=undefined"
CC=clang CXX=clang++ cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1" -DCMAKE_CXX_FLAGS="$sanitizers -fsanitize=fuzzer-no-link -fno-omit-frame-pointer" \
  -DCMAKE_EXE_LINKER_FLAGS="$sanitizers" -DCMAKE_SHARED_LINKER_FLAGS="$sanitizers" \
  -DSTEPSIM_BUILD_TESTS=ON -DSTEPSIM_BUILD_BENCH=OFF -DSTEPSIM_SHARED_LAYERS=ON -DSTEPSIM_FUZZ=ON >/dev/null
