#!/usr/bin/env bash
# One-node calibration without the stepsim binary (for GPU machines that have only CUDA, NCCL and PyTorch):
# builds stepsim-bench, runs it on every local GPU, then the PyTorch kernel benchmarks, and records how long
# each stage took. Fit the result elsewhere with `stepsim calibrate fit OUTDIR/*.jsonl -o profile.yaml`.
#
#   calibration/bench/calibrate.sh OUTDIR [--quick] [extra stepsim-bench options...]
#
# NCCL: the CUDA toolkit's, unless PyTorch's nvidia-nccl wheel is present (what training uses), or NCCL_ROOT.
# NVLink multicast (NVLS) stays off: NCCL_NVLS_ENABLE=0 unless already set.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:?usage: calibrate.sh OUTDIR [--quick] [stepsim-bench options]}
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
build=${STEPSIM_BENCH_BUILD:-$out/build}
t() { date +%s.%N; }
t0=$(t)
cmake -S "$here" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release ${NCCL_ROOT:+-DNCCL_ROOT="$NCCL_ROOT"} >"$out/build.log" 2>&1
cmake --build "$build" >>"$out/build.log" 2>&1 || { tail -40 "$out/build.log"; exit 1; }
t1=$(t)
"$build/stepsim-bench" --out "$out/bench.jsonl" --gemm-shapes "$here/shapes/pytorch-micro.txt" "$@" ||
  echo "calibrate.sh: stepsim-bench exited with $? (see its errors above; what it measured is kept)" >&2
t2=$(t)
quick=""
for a in "$@"; do [ "$a" = "--quick" ] && quick="--quick"; done
"$py" "$here/../pytorch/stepsim_torch_bench.py" --out "$out/torch.jsonl" --gemm-shapes "$here/shapes/pytorch-micro.txt" $quick || echo "calibrate.sh: PyTorch benchmarks failed (rc $?)" >&2
# What a training step sees (as `stepsim calibrate` runs them): attention as SDPA runs it, PyTorch's GEMMs, the
# host's costs (one GPU with checkpointing's, then DDP over two GPUs when there are two), the gaps inside a step,
# and with two GPUs the step's kernels beside bucket-sized all-reduces and every GPU's speed, all loaded at once.
for s in attention_default gemm_training_shapes host_overhead kernel_gaps; do
  rm -f "$out/$s.jsonl"
  extra=""; [ "$s" = gemm_training_shapes ] && extra="--step"
  "$py" "$here/../pytorch/$s.py" --out "$out/$s.jsonl" $extra || echo "calibrate.sh: $s.py failed (rc $?)" >&2
done
if [ "$("$py" -c 'import torch; print(torch.cuda.device_count())' 2>/dev/null || echo 0)" -ge 2 ]; then
  "$py" -m torch.distributed.run --standalone --nproc-per-node 2 "$here/../pytorch/host_overhead.py" \
    --out "$out/host_overhead.jsonl" --ddp || echo "calibrate.sh: host_overhead.py --ddp failed (rc $?)" >&2
  rm -f "$out/interference_training.jsonl" "$out/device_speed.jsonl"
  "$py" -m torch.distributed.run --standalone --nproc-per-node 2 "$here/../pytorch/interference_training.py" \
    --bucket-mib 4,25,64,128 --out "$out/interference_training.jsonl" || echo "calibrate.sh: interference_training.py failed (rc $?)" >&2
  "$py" -m torch.distributed.run --standalone --nproc-per-node "$("$py" -c 'import torch; print(torch.cuda.device_count())')" \
    "$here/../pytorch/device_speed.py" --out "$out/device_speed.jsonl" || echo "calibrate.sh: device_speed.py failed (rc $?)" >&2
fi
t3=$(t)
{
  awk -v a="$t0" -v b="$t1" -v c="$t2" -v d="$t3" 'BEGIN {
    printf "build_s %.1f\nharness_s %.1f\npytorch_s %.1f\ntotal_s %.1f\n", b - a, c - b, d - c, d - a }'
} | tee "$out/timings.txt"
