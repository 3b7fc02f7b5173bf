# Run 95, on nvidia-h200: the six eleventh-round held-out configurations (results/validation/heldout11/, predicted and
# committed before run 95: SwiGLU under autocast),
# one GPU, then its measured twin again in the same machine start (the pairs' other ends); each timed over 2 s,
# CUDA-only profiling, three steady steps; nvidia-smi every 50 ms; then (run 95 only) the hidden-3072 SwiGLU step with
# its steady trace kept, to read its casts off. Run 96 is `RUN=run96 bash …run95.sh` on another
# machine start.
set -u
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
RUN=${RUN:-run95}
R=/tmp/$RUN; mkdir -p $R
T0=$(date +%s); stamp(){ echo "[$(( $(date +%s) - T0 )) s] $*" | tee -a $R/timings.txt; }
(date -u; nvidia-smi) > $R/env.txt 2>&1
nvidia-smi --query-gpu=timestamp,index,clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_event_reasons.active \
  --format=csv,noheader -lms 50 > $R/smi.csv 2>&1 &
SMI=$!
IDS=s1-l12-h3072-s2048-mb2-swiglu,s1-l24-h1536-s2048-mb4-swiglu,s1-l16-h2048-s4096-mb2-swiglu-gqa4
IDS=$IDS,s1-l8-h4096-s2048-mb2-swiglu-gqa8,s1-l16-h1024-s2048-mb8-swiglu,s1-l16-h2048-s2048-mb4-swiglu-fp16
IDS=$IDS,s1-l16-h2048-s2048-mb4-swiglu
timeout 400 python3 calibration/validation/sweep.py --out $R/sweep --worlds 1 --ids $IDS --profile-cpu off \
  --steady-steps 3 --timed-seconds 2 --max-steps 300 --deadline-s 380 --config-timeout-s 90 \
  --init-timeout-s 90 > $R/sweep.log 2>&1
stamp "sweep rc $?"
if [ "$RUN" = run95 ]; then
  mkdir -p $R/traces
  timeout 100 python3 calibration/validation/train_gpt.py --ids s1-l12-h3072-s2048-mb2-swiglu --out $R/steps.jsonl \
    --timed-seconds 2 --max-steps 60 --steady-steps 3 --steady-trace-dir $R/traces --profile-cpu off > $R/steps.log 2>&1
  stamp "traced step rc $?"
fi
kill $SMI
gzip $R/smi.csv
tar -C /tmp -czf $OUT/$RUN.tar.gz $RUN
grep -h "ok step\|error\|oom" $R/sweep/*.log | cut -c1-140
