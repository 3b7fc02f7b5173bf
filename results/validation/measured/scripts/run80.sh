# Run 80, on nvidia-h200: the eight seventh-round held-out configurations (results/validation/heldout7/, predicted and
# committed at 2e18205: fp16 with GradScaler, bf16 parameters, tied heads), one GPU, then their five measured
# counterparts again in the same machine start; each timed over 2 s (train_gpt.py --timed-seconds 2), CUDA-only
# profiling, three steady steps; nvidia-smi samples clocks and power every 50 ms. Run 81 is `RUN=run81 bash …run80.sh`
# on another machine start: do the runs of each configuration agree?
set -u
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
RUN=${RUN:-run80}
R=/tmp/$RUN; mkdir -p $R
T0=$(date +%s); stamp(){ echo "[$(( $(date +%s) - T0 )) s] $*" | tee -a $R/timings.txt; }
(date -u; nvidia-smi; nvidia-smi -q -d CLOCK,POWER,PERFORMANCE) > $R/env.txt 2>&1
nvidia-smi --query-gpu=timestamp,index,clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_event_reasons.active \
  --format=csv,noheader -lms 50 > $R/smi.csv 2>&1 &
SMI=$!
IDS=s1-l24-h2048-s2048-mb4-fp16,s1-l24-h2048-s2048-mb4-pbf16,s1-l16-h2560-s2048-mb2-swiglu-fp16
IDS=$IDS,s1-l16-h2560-s2048-mb2-swiglu-pbf16,s1-l8-h4096-s2048-mb2-fp16,s1-l24-h2048-s2048-mb2-ga2-fp16
IDS=$IDS,s1-l24-h1280-s2048-mb4-tied,s1-l12-h768-s1024-mb8-tied
IDS=$IDS,s1-l24-h2048-s2048-mb4,s1-l16-h2560-s2048-mb2-swiglu,s1-l8-h4096-s2048-mb2,s1-l24-h2048-s2048-mb2-ga2
IDS=$IDS,s1-l24-h1280-s2048-mb4,s1-l12-h768-s1024-mb8
timeout 500 python3 calibration/validation/sweep.py --out $R/sweep --worlds 1 --ids $IDS --profile-cpu off \
  --steady-steps 3 --timed-seconds 2 --max-steps 300 --deadline-s 480 --config-timeout-s 90 \
  --init-timeout-s 90 > $R/sweep.log 2>&1
stamp "sweep rc $?"
kill $SMI
gzip $R/smi.csv
cp $R/timings.txt $OUT/timings.txt
tar -C /tmp -czf $OUT/$RUN.tar.gz $RUN
grep -h "ok step\|error\|oom" $R/sweep/*.log | cut -c1-140 | tail -20
