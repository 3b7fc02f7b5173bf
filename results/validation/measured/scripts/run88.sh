# Run 88, on nvidia-h200: run 77's five configurations (fp16 with GradScaler, bf16 parameters, a tied head at 4 and
# 12 layers of hidden 2048) and their two baselines a second time, in another machine start, so their pairs can be
# scored as reproducible; each timed over 2 s, CUDA-only profiling, three steady steps; nvidia-smi every 50 ms.
set -u
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
R=/tmp/run88; mkdir -p $R
T0=$(date +%s); stamp(){ echo "[$(( $(date +%s) - T0 )) s] $*" | tee -a $R/timings.txt; }
(date -u; nvidia-smi) > $R/env.txt 2>&1
nvidia-smi --query-gpu=timestamp,index,clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_event_reasons.active \
  --format=csv,noheader -lms 50 > $R/smi.csv 2>&1 &
SMI=$!
IDS=s1-l4-h2048-s2048-mb1,s1-l4-h2048-s2048-mb1-fp16,s1-l4-h2048-s2048-mb1-pbf16,s1-l4-h2048-s2048-mb1-tied
IDS=$IDS,s1-l12-h2048-s2048-mb4,s1-l12-h2048-s2048-mb4-fp16,s1-l12-h2048-s2048-mb4-pbf16
timeout 300 python3 calibration/validation/sweep.py --out $R/sweep --worlds 1 --ids $IDS --profile-cpu off \
  --steady-steps 3 --timed-seconds 2 --max-steps 300 --deadline-s 280 --config-timeout-s 90 \
  --init-timeout-s 90 > $R/sweep.log 2>&1
stamp "sweep rc $?"
kill $SMI
gzip $R/smi.csv
tar -C /tmp -czf $OUT/run88.tar.gz run88
grep -h "ok step\|error\|oom" $R/sweep/*.log | cut -c1-140
