# Run 98, on nvidia-h200: the seven twelfth-round held-out configurations (results/validation/heldout12/, predicted and
# committed before run 98: gradient accumulation over small micro-batches),
# one GPU, then two measured rows they pair with again in the same machine start; each timed over 2 s,
# CUDA-only profiling, three steady steps; nvidia-smi every 50 ms. Run 99 is `RUN=run99 bash …run98.sh` on another
# machine start.
set -u
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
RUN=${RUN:-run98}
R=/tmp/$RUN; mkdir -p $R
T0=$(date +%s); stamp(){ echo "[$(( $(date +%s) - T0 )) s] $*" | tee -a $R/timings.txt; }
(date -u; nvidia-smi) > $R/env.txt 2>&1
nvidia-smi --query-gpu=timestamp,index,clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_event_reasons.active \
  --format=csv,noheader -lms 50 > $R/smi.csv 2>&1 &
SMI=$!
IDS=s1-l12-h2048-s2048-mb1-ga4,s1-l24-h1024-s2048-mb2-ga4,s1-l16-h1536-s2048-mb1-ga8,s1-l8-h4096-s2048-mb1-ga4
IDS=$IDS,s1-l12-h768-s1024-mb2-ga4,s1-l24-h2048-s2048-mb1-ga2,s1-l12-h3072-s2048-mb2-ga4
IDS=$IDS,s1-l24-h2048-s2048-mb1-ga4,s1-l12-h3072-s2048-mb2
timeout 560 python3 calibration/validation/sweep.py --out $R/sweep --worlds 1 --ids $IDS --profile-cpu off \
  --steady-steps 3 --timed-seconds 2 --max-steps 300 --deadline-s 540 --config-timeout-s 90 \
  --init-timeout-s 90 > $R/sweep.log 2>&1
stamp "sweep rc $?"
kill $SMI
gzip $R/smi.csv
tar -C /tmp -czf $OUT/$RUN.tar.gz $RUN
grep -h "ok step\|error\|oom" $R/sweep/*.log | cut -c1-140
