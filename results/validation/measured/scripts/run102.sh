# Run 102, on nvidia-h200: the six thirteenth-round held-out configurations (results/validation/heldout13/, predicted
# and committed before run 102: the power state), one GPU, each timed over 2 s, CUDA-only profiling, three steady
# steps; nvidia-smi every 50 ms beside them (the clock each step held). Run 103 is `RUN=run103 bash …run102.sh` on
# another machine start.
set -u
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
RUN=${RUN:-run102}
R=/tmp/$RUN; mkdir -p $R
T0=$(date +%s); stamp(){ echo "[$(( $(date +%s) - T0 )) s] $*" | tee -a $R/timings.txt; }
(date -u; nvidia-smi) > $R/env.txt 2>&1
nvidia-smi --query-gpu=timestamp,index,clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_event_reasons.active \
  --format=csv,noheader -lms 50 > $R/smi.csv 2>&1 &
SMI=$!
IDS=s1-l16-h1024-s8192-mb1,s1-l12-h2048-s4096-mb2,s1-l8-h3072-s4096-mb1,s1-l24-h1536-s4096-mb2
IDS=$IDS,s1-l4-h6144-s2048-mb2,s1-l32-h768-s2048-mb8
timeout 500 python3 calibration/validation/sweep.py --out $R/sweep --worlds 1 --ids $IDS --profile-cpu off \
  --steady-steps 3 --timed-seconds 2 --max-steps 300 --deadline-s 480 --config-timeout-s 90 \
  --init-timeout-s 90 > $R/sweep.log 2>&1
stamp "sweep rc $?"
kill $SMI
gzip $R/smi.csv
tar -C /tmp -czf $OUT/$RUN.tar.gz $RUN
grep -h "ok step\|error\|oom" $R/sweep/*.log | cut -c1-140
