#!/usr/bin/env bash
# One-node calibration without the stepsim binary (for GPU machines that have only CUDA, NCCL and PyTorch): builds
# stepsim-bench, then runs every stage of calibration/bench/stages.txt (the harness, then the PyTorch scripts) through
# stages.py, the runner `stepsim calibrate` uses. Fit the result anywhere with
# `stepsim calibrate fit --manifest OUTDIR/inputs.txt -o profile.yaml`.
#
#   calibration/bench/calibrate.sh OUTDIR [stages.py options: --only, --skip, --budget-scale, --gemm-shapes ...]
#
# NCCL: the CUDA toolkit's, unless PyTorch's nvidia-nccl wheel is present (what training uses), or NCCL_ROOT.
# NVLink multicast (NVLS) stays off: NCCL_NVLS_ENABLE=0 unless already set. STEPSIM_BENCH: a built harness to use
# instead of building one.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:?usage: calibrate.sh OUTDIR [stages.py options]}
shift
mkdir -p "$out"
export NCCL_NVLS_ENABLE=${NCCL_NVLS_ENABLE:-0}
export TORCH_SYMM_MEM_DISABLE_MULTICAST=${TORCH_SYMM_MEM_DISABLE_MULTICAST:-1}
export NVSHMEM_DISABLE_NVLS=${NVSHMEM_DISABLE_NVLS:-1}
py=${PYTHON:-python3}
if [ -z "${NCCL_ROOT:-}" ]; then
  NCCL_ROOT=$("$py" -c 'import nvidia.nccl as m; print(list(m.__path__)[0])' 2>/dev/null || true)
fi
if [ -n "${NCCL_ROOT:-}" ]; then
  export NCCL_ROOT
  export LD_LIBRARY_PATH="$NCCL_ROOT/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi
t0=$(date +%s.%N)
bench=${STEPSIM_BENCH:-}
if [ -z "$bench" ]; then
  build=${STEPSIM_BENCH_BUILD:-$out/build}
  cmake -S "$here" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release ${NCCL_ROOT:+-DNCCL_ROOT="$NCCL_ROOT"} >"$out/build.log" 2>&1
  cmake --build "$build" >>"$out/build.log" 2>&1 || { tail -40 "$out/build.log"; exit 1; }
  bench=$build/stepsim-bench
fi
t1=$(date +%s.%N)
awk -v a="$t0" -v b="$t1" 'BEGIN { printf "calibrate.sh: the harness built in %.1f s\n", b - a }'
"$py" "$here/stages.py" --out-dir "$out" --harness "$bench" --python "$py" "$@"
