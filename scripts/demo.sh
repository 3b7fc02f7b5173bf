#!/usr/bin/env bash
# The README's run command: install what is missing, build the `stepsim` command, run the demo scenario.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$(nproc)" --target stepsim
build/stepsim run scenarios/gpt-1p3b-ddp-8xh200.yaml "$@"
