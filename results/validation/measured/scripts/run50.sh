# Run 50, on nvidia-h200-x2: how much the GPUs slow under the power limit, by tensor-core load. power_duty.py on both
# GPUs at once: a training-shaped GEMM, causal SDPA and a memory-bound add mixed in set proportions (and GEMMs with
# the GPU idle between), each mix 6 s after 4 s of rest, per-kind times from CUDA events every cycle; nvidia-smi
# samples clocks and power every 50 ms beside it.
set -u
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
R=/tmp/run50; mkdir -p $R
T0=$(date +%s); stamp(){ echo "[$(( $(date +%s) - T0 )) s] $*" | tee -a $R/timings.txt; }
(date -u; nvidia-smi; nvidia-smi -q -d CLOCK,POWER,PERFORMANCE) > $R/env.txt 2>&1
nvidia-smi --query-gpu=timestamp,index,clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_event_reasons.active \
  --format=csv,noheader -lms 50 > $R/smi.csv 2>&1 &
SMI=$!
cd calibration/pytorch
timeout 360 python3 -m torch.distributed.run --standalone --nproc_per_node=2 power_duty.py \
  --out $R/power_duty.jsonl > $R/power_duty.log 2>&1; stamp "power_duty rc $?"
cd ../..
kill $SMI
cp $R/timings.txt $OUT/timings.txt
tar -C /tmp -czf $OUT/run50.tar.gz run50
