# Run 85, on nvidia-h200: the seven eighth-round held-out configurations (results/validation/heldout8/, predicted and
# committed at 97f8eff: AdamW's default foreach step), one GPU, then their seven fused twins again in the same machine
# start; each timed over 2 s, CUDA-only profiling, three steady steps; nvidia-smi every 50 ms. Then the 1.4B model's
# foreach steps (bf16 and fp16 with GradScaler) once more with their steady traces kept, to read the kernels off.
# Run 86 is `RUN=run86 bash …run85.sh` on another machine start.
set -u
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
RUN=${RUN:-run85}
R=/tmp/$RUN; mkdir -p $R/traces
T0=$(date +%s); stamp(){ echo "[$(( $(date +%s) - T0 )) s] $*" | tee -a $R/timings.txt; }
(date -u; nvidia-smi) > $R/env.txt 2>&1
nvidia-smi --query-gpu=timestamp,index,clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_event_reasons.active \
  --format=csv,noheader -lms 50 > $R/smi.csv 2>&1 &
SMI=$!
IDS=s1-l24-h2048-s2048-mb4-foreach,s1-l24-h1280-s2048-mb4-foreach,s1-l12-h768-s1024-mb8-foreach
IDS=$IDS,s1-l24-h2048-s2048-mb4-fp16-foreach,s1-l16-h2560-s2048-mb2-swiglu-foreach
IDS=$IDS,s1-l24-h2048-s2048-mb4-pbf16-foreach,s1-l24-h2048-s2048-mb2-ga2-foreach
IDS=$IDS,s1-l24-h2048-s2048-mb4,s1-l24-h1280-s2048-mb4,s1-l12-h768-s1024-mb8,s1-l24-h2048-s2048-mb4-fp16
IDS=$IDS,s1-l16-h2560-s2048-mb2-swiglu,s1-l24-h2048-s2048-mb4-pbf16,s1-l24-h2048-s2048-mb2-ga2
timeout 420 python3 calibration/validation/sweep.py --out $R/sweep --worlds 1 --ids $IDS --profile-cpu off \
  --steady-steps 3 --timed-seconds 2 --max-steps 300 --deadline-s 400 --config-timeout-s 90 \
  --init-timeout-s 90 > $R/sweep.log 2>&1
stamp "sweep rc $?"
if [ "$RUN" = run85 ]; then
  timeout 150 python3 calibration/validation/train_gpt.py --ids s1-l24-h2048-s2048-mb4-foreach,s1-l24-h2048-s2048-mb4-fp16-foreach \
    --out $R/steps.jsonl --timed-seconds 2 --max-steps 60 --steady-steps 3 --steady-trace-dir $R/traces \
    --profile-cpu off > $R/steps.log 2>&1
  stamp "traced steps rc $?"
fi
kill $SMI
gzip $R/smi.csv
cp $R/timings.txt $OUT/timings.txt
tar -C /tmp -czf $OUT/$RUN.tar.gz $RUN
grep -h "ok step\|error\|oom" $R/sweep/*.log $R/steps.log 2>/dev/null | cut -c1-140 | tail -20
