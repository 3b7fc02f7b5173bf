#!/usr/bin/env bash
# ops-round1's measurements, on the GPU machine, from the repository root: every configuration's measure command of
# calibration/capture/validation_round.txt (its third column), one after another, each under a time limit, appending
# one JSON line per configuration to OUT_FILE (default results/validation/ops-round1/measured.jsonl), with the id.
# Run only after the round's predictions are committed (predicted.jsonl beside this file).
set -uo pipefail
out=${1:-results/validation/ops-round1/measured.jsonl}
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,power.limit,clocks.max.sm,memory.total --format=csv,noheader
python3 -c 'import torch, transformers, timm; print("torch", torch.__version__, "transformers", transformers.__version__, "timm", timm.__version__)'
grep -v '^#' calibration/capture/validation_round.txt | while IFS='|' read -r id capture measure; do
  id=$(echo "$id" | xargs); measure=$(echo "$measure" | sed 's/^ *//')
  [ -n "$id" ] || continue
  tmp=$(mktemp)
  cmd=${measure/--out results\/validation\/ops-round1\/measured.jsonl/--out $tmp}
  echo "== $id: $cmd"
  start=$(date +%s)
  if timeout 150 bash -c "$cmd"; then
    python3 -c 'import json,sys; [print(json.dumps({"id": sys.argv[1], **json.loads(l)})) for l in open(sys.argv[2]) if l.strip()]' "$id" "$tmp" >> "$out"
  else
    echo "{\"id\": \"$id\", \"error\": \"exit $?\"}" >> "$out"
  fi
  echo "== $id took $(( $(date +%s) - start )) s"
  rm -f "$tmp"
done
