#!/bin/bash
# Re-make the committed captures on a GPU machine, from the repository root:
#   bash calibration/capture/make_captures.sh examples   the example captures (tests/data/ops; scenarios/ops reads them), each
#                                                        with --second, their op times, and the launch table
#   bash calibration/capture/make_captures.sh round1     ops-round1's captures, the commands of validation_round.txt,
#                                                        and their op times
# Captures run in parallel (one process each, CPU-bound); time_ops runs one at a time, the GPU to itself.
set -u
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
C=calibration/capture; K=$C/configs; E=tests/data/ops; V=results/validation/ops-round1/captures
cap() { out=$1; shift; python3 $C/capture.py "$@" -o $out > ${out%.ops.json.gz}.capture.log 2>&1 || echo "failed: $out"; }
times() { for f in "$@"; do python3 $C/time_ops.py $f -o ${f%.ops.json.gz}.op_times.json; done; }
case "${1:-}" in
examples)
  cap $E/hf-llama-4l.ops.json.gz --model transformers:LlamaForCausalLM --config $K/llama-4l-h1024.json \
      --micro-batch 2 --seq-len 1024 --second 6,2048 &
  cap $E/hf-qwen2-4l.ops.json.gz --model transformers:Qwen2ForCausalLM --config $K/qwen2-4l-h896.json \
      --micro-batch 2 --seq-len 1024 --second 6,2048 &
  cap $E/hf-gpt2-4l.ops.json.gz --model transformers:GPT2LMHeadModel --config $K/gpt2-4l-h768.json \
      --micro-batch 4 --seq-len 1024 --second 12,512 &
  cap $E/timm-vit-small.ops.json.gz --model timm:vit_small_patch16_224 --micro-batch 32 --second 96 &
  cap $E/project-gpt-4l.ops.json.gz --model project_model:build --config $K/project-gpt-4l-h768.json \
      --micro-batch 4 --seq-len 1024 --second 12,2048 &
  wait
  cat $E/*.capture.log
  times $E/*.ops.json.gz
  pairs=""; for f in $E/*.ops.json.gz $V/*.ops.json.gz; do pairs="$pairs $f ${f%.ops.json.gz}.op_times.json"; done
  python3 $C/kernel_table.py $pairs -o $C/data/kernel_counts.json ;;
round1)
  grep -v '^#' $C/validation_round.txt | awk -F' [|] ' '$2 ~ /capture.py/ {print $2}' > /tmp/round1_captures.txt
  while read -r line; do bash -c "$line" < /dev/null > /dev/null 2>&1 || echo "failed: $line" & done < /tmp/round1_captures.txt
  wait
  times $V/*.ops.json.gz ;;
*) echo "usage: make_captures.sh examples | round1" >&2; exit 2 ;;
esac
