# Run 93, on nvidia-h200: the eight tenth-round held-out configurations (results/validation/heldout10/, predicted and
# committed before run 93: the norms' kernels by size and dtype, AdamW in a step's power state, bf16 foreach passes),
# one GPU, then three measured twins again in the same machine start (the pairs' other ends); each timed over 2 s,
# CUDA-only profiling, three steady steps; nvidia-smi every 50 ms. Run 94 is `RUN=run94 bash …run93.sh` on another
# machine start.
set -u
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
RUN=${RUN:-run93}
R=/tmp/$RUN; mkdir -p $R
T0=$(date +%s); stamp(){ echo "[$(( $(date +%s) - T0 )) s] $*" | tee -a $R/timings.txt; }
(date -u; nvidia-smi) > $R/env.txt 2>&1
nvidia-smi --query-gpu=timestamp,index,clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_event_reasons.active \
  --format=csv,noheader -lms 50 > $R/smi.csv 2>&1 &
SMI=$!
IDS=s1-l16-h1536-s2048-mb4-pbf16,s1-l16-h2048-s2048-mb4-swiglu-pbf16,s1-l12-h3072-s2048-mb2-pbf16-foreach
IDS=$IDS,s1-l24-h1024-s2048-mb4-pbf16,s1-l16-h1024-s4096-mb4,s1-l8-h4096-s2048-mb2-pbf16,s1-l12-h768-s2048-mb8
IDS=$IDS,s1-l24-h2048-s2048-mb4-pbf16-clip1
IDS=$IDS,s1-l24-h1024-s2048-mb4,s1-l8-h4096-s2048-mb2,s1-l24-h2048-s2048-mb4-pbf16
timeout 400 python3 calibration/validation/sweep.py --out $R/sweep --worlds 1 --ids $IDS --profile-cpu off \
  --steady-steps 3 --timed-seconds 2 --max-steps 300 --deadline-s 380 --config-timeout-s 90 \
  --init-timeout-s 90 > $R/sweep.log 2>&1
stamp "sweep rc $?"
kill $SMI
gzip $R/smi.csv
tar -C /tmp -czf $OUT/$RUN.tar.gz $RUN
grep -h "ok step\|error\|oom" $R/sweep/*.log | cut -c1-140
