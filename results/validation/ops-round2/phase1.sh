#!/usr/bin/env bash
# ops-round2, phase 1, on the GPU machine, from the repository root (one GPU):
#   bash results/validation/ops-round2/phase1.sh [DIR]        (DIR defaults to $OUT)
# 1. Captures each distinct capture of round.txt (capture.py, with its --second), all in parallel (CPU-bound),
#    into DIR/captures/STEM.ops.json.gz (the log beside it), then times each one's ops (time_ops.py, one at a time).
# 2. Calibration, not validation (the example models of tests/data/ops, none of them in this round): times the
#    example captures' ops on this machine start and measures each example model's step once (measure_step.py,
#    the flags of make_captures.sh examples, with --host-split 20: the host's forward, backward and optimizer with
#    the GPU drained), the 4-layer Llama again under FSDP2 and DDP at world size 1, then two of ops-round1's deep
#    models the same way, into DIR/calibration/, so that the
#    host-cost fit has op times and steps from one start. Each skipped if phase 1 has run past 420 s by then.
# DIR/start.txt: the machine start's date, GPU and library versions. Nothing here measures a round-2 step.
set -u
dir=${1:-${OUT:?give DIR or set OUT}}
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
C=calibration/capture; R=results/validation/ops-round2; E=tests/data/ops; K=$C/configs
mkdir -p "$dir/captures" "$dir/calibration"
t0=$(date +%s)
{ date -u +%Y-%m-%dT%H:%M:%SZ; nvidia-smi --query-gpu=name,power.limit,clocks.max.sm,memory.total --format=csv,noheader
  python3 -c 'import torch, transformers, timm; print("torch", torch.__version__, "transformers", transformers.__version__, "timm", timm.__version__)'
  nproc; } > "$dir/start.txt" 2>&1
cat "$dir/start.txt"
declare -A seen
while IFS='|' read -r id stem flags second extra; do
  id=$(echo "$id" | xargs); stem=$(echo "$stem" | xargs); second=$(echo "$second" | xargs)
  [ -n "$id" ] && [ -z "${seen[$stem]:-}" ] || continue
  seen[$stem]=1
  out="$dir/captures/$stem.ops.json.gz"
  echo "== capture $stem"
  ( timeout 240 python3 $C/capture.py $flags ${second:+--second $second} -o "$out" < /dev/null \
      > "$dir/captures/$stem.capture.log" 2>&1 || echo "failed (exit $?): capture $stem" ) &
done < <(grep -v '^#' $R/round.txt)
wait
echo "== captures done in $(( $(date +%s) - t0 )) s"; tail -n 2 "$dir"/captures/*.capture.log
for f in "$dir"/captures/*.ops.json.gz; do
  s=$(date +%s)
  timeout 60 python3 $C/time_ops.py "$f" -o "${f%.ops.json.gz}.op_times.json" > "${f%.ops.json.gz}.time_ops.log" 2>&1 \
    || echo "failed (exit $?): time_ops $f"
  echo "== time_ops $(basename "$f") $(( $(date +%s) - s )) s"
done
echo "== round-2 part done in $(( $(date +%s) - t0 )) s"
cal() { # NAME CAPTURE then measure_step's flags
  name=$1; cap=$2; shift 2
  if [ $(( $(date +%s) - t0 )) -gt 420 ]; then echo "== skipped calibration $name (time)"; return; fi
  [ -n "$cap" ] && { timeout 60 python3 $C/time_ops.py $cap -o "$dir/calibration/$name.op_times.json" \
    > "$dir/calibration/$name.time_ops.log" 2>&1 || echo "failed: time_ops $name"; }
  timeout 90 python3 $C/measure_step.py "$@" --host-split 20 --out "$dir/calibration/measured.jsonl" \
    > "$dir/calibration/$name.measure.log" 2>&1 || echo "failed: measure $name"
  echo "== calibration $name at $(( $(date +%s) - t0 )) s"
}
# In order of use to the fit (the tail is skipped if time runs short): the 4-layer examples with their op times;
# ops-round1's Llama shape (a) with its op times, its step measured and its host split at full size, and again at
# B 1, S 128, where the GPU's work is too small to hold the host back (the host's cost of an op barely depends on
# its size); the 4-layer Llama wrapped at world size 1 (its op times above): the wrappers' host cost.
V=results/validation/ops-round1/captures
LL="--model transformers:LlamaForCausalLM --config $K/llama-4l-h1024.json"
cal hf-llama-4l $E/hf-llama-4l.ops.json.gz $LL --micro-batch 2 --seq-len 1024 --steps 30 --warmup 10
cal timm-vit-small $E/timm-vit-small.ops.json.gz --model timm:vit_small_patch16_224 --micro-batch 32 --steps 30 --warmup 10
R1A="--model transformers:LlamaForCausalLM --config $K/llama-3.2-1b-shape.json"
cal r1-a $V/a-llama3.2-1b-autocast.ops.json.gz $R1A --micro-batch 2 --seq-len 1024 --steps 20 --warmup 5
cal r1-a-small "" $R1A --micro-batch 1 --seq-len 128 --steps 5 --warmup 5
cal hf-llama-4l-fsdp2 "" $LL --micro-batch 2 --seq-len 1024 --steps 20 --warmup 5 --wrap fsdp2
cal hf-gpt2-4l $E/hf-gpt2-4l.ops.json.gz --model transformers:GPT2LMHeadModel --config $K/gpt2-4l-h768.json \
    --micro-batch 4 --seq-len 1024 --steps 30 --warmup 10
cal hf-qwen2-4l $E/hf-qwen2-4l.ops.json.gz --model transformers:Qwen2ForCausalLM --config $K/qwen2-4l-h896.json \
    --micro-batch 2 --seq-len 1024 --steps 30 --warmup 10
R1C="--model transformers:Qwen2ForCausalLM --config $K/qwen2.5-0.5b-shape.json"
cal r1-c $V/c-qwen2.5-0.5b.ops.json.gz $R1C --micro-batch 4 --seq-len 1024 --steps 20 --warmup 5
cal r1-c-small "" $R1C --micro-batch 1 --seq-len 128 --steps 5 --warmup 5
cal hf-llama-4l-ddp "" $LL --micro-batch 2 --seq-len 1024 --steps 20 --warmup 5 --wrap ddp
cal project-gpt-4l $E/project-gpt-4l.ops.json.gz --model project_model:build --config $K/project-gpt-4l-h768.json \
    --micro-batch 4 --seq-len 1024 --steps 30 --warmup 10
echo "== phase 1 done in $(( $(date +%s) - t0 )) s"
