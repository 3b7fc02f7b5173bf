# Run 106, on nvidia-h200: the six fourteenth-round held-out configurations (results/validation/heldout14/,
# predicted and committed before run 106: the power state with idle time), one GPU, each timed over 2 s, CUDA-only
# profiling, three steady steps; nvidia-smi every 50 ms beside them (the clock each step held). Run 107 is
# `RUN=run107 bash …run106.sh` on another machine start.
set -u
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
RUN=${RUN:-run106}
R=/tmp/$RUN; mkdir -p $R
T0=$(date +%s); stamp(){ echo "[$(( $(date +%s) - T0 )) s] $*" | tee -a $R/timings.txt; }
(date -u; nvidia-smi) > $R/env.txt 2>&1
nvidia-smi --query-gpu=timestamp,index,clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_event_reasons.active \
  --format=csv,noheader -lms 50 > $R/smi.csv 2>&1 &
SMI=$!
IDS=s1-l8-h1024-s2048-mb2,s1-l12-h1536-s2048-mb2-pbf16,s1-l20-h1280-s4096-mb1,s1-l6-h2560-s2048-mb2-fp16
IDS=$IDS,s1-l16-h1792-s2048-mb2-swiglu,s1-l10-h4096-s1024-mb4
timeout 500 python3 calibration/validation/sweep.py --out $R/sweep --worlds 1 --ids $IDS --profile-cpu off \
  --steady-steps 3 --timed-seconds 2 --max-steps 300 --deadline-s 480 --config-timeout-s 90 \
  --init-timeout-s 90 > $R/sweep.log 2>&1
stamp "sweep rc $?"
kill $SMI
gzip $R/smi.csv
tar -C /tmp -czf $OUT/$RUN.tar.gz $RUN
grep -h "ok step\|error\|oom" $R/sweep/*.log | cut -c1-140
