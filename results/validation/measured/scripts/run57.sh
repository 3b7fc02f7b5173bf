# Run 57, on nvidia-h200-x2: run 55 again in another machine start (the six held-out configurations,
# results/validation/heldout/), DDP rows then one-GPU rows, each timed over 3 s (train_gpt.py --timed-seconds 3), CUDA-only
# profiling, three steady steps, traces kept; nvidia-smi samples clocks and power every 50 ms.
set -u
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
R=/tmp/run57; mkdir -p $R
T0=$(date +%s); stamp(){ echo "[$(( $(date +%s) - T0 )) s] $*" | tee -a $R/timings.txt; }
(date -u; nvidia-smi; nvidia-smi -q -d CLOCK,POWER,PERFORMANCE) > $R/env.txt 2>&1
nvidia-smi --query-gpu=timestamp,index,clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_event_reasons.active \
  --format=csv,noheader -lms 50 > $R/smi.csv 2>&1 &
SMI=$!
IDS=d2-l32-h2048-s4096-mb1-b50,d2-l20-h3072-s2048-mb2-b25,d2-l12-h1536-s1024-mb8-b10,d2-l16-h1536-s4096-mb1-b25-swiglu-gqa4,s1-l8-h4096-s2048-mb2,s1-l12-h1024-s4096-mb2
timeout 520 python3 calibration/validation/sweep.py --out $R/sweep --worlds 2,1 --ids $IDS --profile-cpu off \
  --steady-steps 3 --timed-seconds 3 --max-steps 300 --keep-traces --deadline-s 500 --config-timeout-s 90 \
  --init-timeout-s 90 > $R/sweep.log 2>&1
stamp "sweep rc $?"
kill $SMI
gzip $R/smi.csv
cp $R/timings.txt $OUT/timings.txt
tar -C /tmp -czf $OUT/run57.tar.gz run57
