#!/usr/bin/env bash
# The README's test command: install what is missing, build everything (with the MPI sweep runner), run every test
# (among them a sweep under `mpirun -n 2`, tests/sweep/mpi_matches_one_process.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DSTEPSIM_BUILD_TESTS=ON -DSTEPSIM_WITH_MPI=ON >/dev/null
cmake --build build -j"$(nproc)"
ctest --test-dir build --output-on-failure -j"$(nproc)"
