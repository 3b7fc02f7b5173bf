#!/usr/bin/env bash
# ops-round2, phase 2: the measurements, on the GPU machine (one GPU), from the repository root:
#   bash results/validation/ops-round2/run_round.sh [OUT_FILE]   (default $OUT/measured.jsonl)
# Every ID of round.txt measured twice, each run its own process (measure_step.py with the row's model, step and
# wrapping flags: median of 30 steps after 5 of warm-up, torch.cuda.max_memory_allocated), in two passes over the
# rows (a..g-fsdp2, then a..g-fsdp2 again), so the two runs of one row are minutes apart. One JSON line per run,
# with the row's id and "run": 1 or 2. Run only after the round's predictions are committed (predicted.jsonl).
# Each run is cut at 100 s; the whole under 10 minutes.
set -uo pipefail
out=${1:-${OUT:?give OUT_FILE or set OUT}/measured.jsonl}
R=results/validation/ops-round2
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
t0=$(date +%s)
date -u +%Y-%m-%dT%H:%M:%SZ
nvidia-smi --query-gpu=name,power.limit,clocks.max.sm,memory.total --format=csv,noheader
python3 -c 'import torch, transformers, timm; print("torch", torch.__version__, "transformers", transformers.__version__, "timm", timm.__version__)'
# The host's speed on this start (it moves between machine starts): the 4-layer example Llama's host split, the
# same probe phase 1 ran, into host_probe.jsonl beside OUT_FILE; before the rows and, time allowing, after them.
probe() {
  timeout 60 python3 calibration/capture/measure_step.py --model transformers:LlamaForCausalLM \
    --config calibration/capture/configs/llama-4l-h1024.json --micro-batch 2 --seq-len 1024 --steps 10 --warmup 5 \
    --host-split 20 --out "$(dirname "$out")/host_probe.jsonl" < /dev/null > /dev/null 2>&1 || echo "host probe failed"
  echo "== host probe at $(( $(date +%s) - t0 )) s"
}
probe
for run in 1 2; do
  while IFS='|' read -r id stem flags second extra; do
    id=$(echo "$id" | xargs)
    [ -n "$id" ] || continue
    tmp=$(mktemp)
    echo "== $id run $run"
    s=$(date +%s)
    if timeout 100 python3 calibration/capture/measure_step.py $flags $extra --steps 30 --warmup 5 --out "$tmp" < /dev/null; then
      python3 -c 'import json,sys; [print(json.dumps({"id": sys.argv[1], "run": int(sys.argv[3]), **json.loads(l)})) for l in open(sys.argv[2]) if l.strip()]' "$id" "$tmp" "$run" >> "$out"
    else
      echo "{\"id\": \"$id\", \"run\": $run, \"error\": \"exit $?\"}" >> "$out"
    fi
    echo "== $id run $run took $(( $(date +%s) - s )) s (total $(( $(date +%s) - t0 )) s)"
    rm -f "$tmp"
  done < <(grep -v '^#' $R/round.txt)
done
[ $(( $(date +%s) - t0 )) -lt 510 ] && probe
echo "== phase 2 done in $(( $(date +%s) - t0 )) s"
