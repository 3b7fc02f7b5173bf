# Run 45, on nvidia-h200-x2: every configuration timed over 8 s of steps instead of ~1.5 s (train_gpt.py
# --timed-seconds 8), so that the power limit's ~1 s cycle (run 44: GEMM-bound work at 700 W dips 4-17% about once
# a second, in phase from the start of the load) averages out; CUDA-only profiling, three steady steps after the
# timed ones. WORLDS=2 runs the DDP rows, WORLDS=1 the one-GPU rows and first sustained_speed.py (8 s of GEMMs, of
# SDPA forward and backward, of a memory-bound add, on both GPUs at once) with nvidia-smi sampling every 50 ms.
set -u
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
W=${WORLDS:-2}
N=run45-w$W
R=/tmp/$N; mkdir -p $R
T0=$(date +%s); stamp(){ echo "[$(( $(date +%s) - T0 )) s] $*" | tee -a $R/timings.txt; }
(date -u; nvidia-smi; nvidia-smi -q -d CLOCK,POWER,PERFORMANCE) > $R/env.txt 2>&1
nvidia-smi --query-gpu=timestamp,index,clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_event_reasons.active \
  --format=csv,noheader -lms 50 > $R/smi.csv 2>&1 &
SMI=$!
if [ "$W" = 1 ]; then
  timeout 100 python3 -m torch.distributed.run --standalone --nproc_per_node=2 calibration/pytorch/sustained_speed.py \
    --out $R/sustained.jsonl > $R/sustained.log 2>&1; stamp "sustained rc $?"
fi
timeout 480 python3 calibration/validation/sweep.py --out $R/sweep --worlds $W --profile-cpu off --steady-steps 3 \
  --timed-seconds 8 --max-steps 800 --deadline-s 460 --config-timeout-s 60 --init-timeout-s 90 > $R/sweep.log 2>&1
stamp "sweep rc $?"
kill $SMI
gzip $R/smi.csv
cp $R/timings.txt $OUT/timings.txt
tar -C /tmp -czf $OUT/$N.tar.gz $N
