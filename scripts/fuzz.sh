#!/usr/bin/env bash
# Fuzzes the scenario, --set, topology and profile readers with libFuzzer (Debian's clang), under ASan and UBSan.
# Usage: scripts/fuzz.sh [SECONDS_PER_TARGET (default 60)] [TARGET...]   (targets: scenario set topology profile sweep)
# They build in build-asan (scripts/sanitized-build.sh, the build scripts/sanitize.sh tests). Each target's corpus
# (build-asan/corpus/TARGET) is seeded from the repository's files; a crash, hang, leak or sanitizer report stops the
# run with the input saved as build-asan/crash-* and a non-zero exit status. The random
# seed is fixed (-seed=1), so a run over the same corpus explores the same inputs.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(scenario set topology profile sweep)
source scripts/sanitized-build.sh
cmake --build build-asan -j"$jobs" --target $(printf 'fuzz_%s ' "${targets[@]}")
for t in "${targets[@]}"; do
  corpus=build-asan/corpus/$t
  mkdir -p "$corpus"
  case $t in
    # (an array, not `ls | head`: under pipefail the listing's SIGPIPE, when head closes early, would stop the script)
    scenario) cp scenarios/*.yaml "$corpus"/; validation=(scenarios/validation/*.yaml); cp "${validation[@]:0:20}" "$corpus"/ ;;
    set) printf '%s\n' ddp.bucket_cap_mb=100 'parallel={tp: 2}' 'name="x"' model.layers=4 > "$corpus"/seed.txt ;;
    topology) cp topology/examples/*.yaml "$corpus"/ ;;
    sweep) cp scenarios/sweeps/*.yaml tests/sweep/data/*.yaml "$corpus"/ ;;
    profile) for p in calibration/profiles/*/profile.yaml; do cp "$p" "$corpus/$(basename "$(dirname "$p")").yaml"; done ;;
  esac
  echo "fuzz_$t: ${seconds}s"
  if ! (build-asan/tests/fuzz/fuzz_"$t" -max_total_time="$seconds" -seed=1 -timeout=10 -rss_limit_mb=4096 \
          -artifact_prefix=build-asan/ -print_final_stats=1 "$corpus" 2>&1 | tail -n 12); then
    echo "fuzz_$t found a failure (build-asan/crash-* or timeout-*)"
    exit 1
  fi
done
