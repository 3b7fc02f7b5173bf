# Run 52, on nvidia-h200-x2: run 51's first part again (its attention had failed: each GQA call read the last shape's
# head counts), after power_duty.py's mixes again (5 s each after 3 s of rest: run 50 repeated in another machine
# start). On both GPUs at once: every GEMM of the 33 configurations (calibration/validation/gemm_shapes.txt) and every
# causal SDPA shape (forward, forward and backward) inside a held background of the reference GEMM and memory adds
# (compute-bound 45% of the time; every third kernel also at 30% and 70%), 0.25 s each, beside its spin-and-burst
# time; nvidia-smi samples clocks and power every 50 ms.
set -u
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
R=/tmp/run52; mkdir -p $R
T0=$(date +%s); stamp(){ echo "[$(( $(date +%s) - T0 )) s] $*" | tee -a $R/timings.txt; }
(date -u; nvidia-smi; nvidia-smi -q -d CLOCK,POWER,PERFORMANCE) > $R/env.txt 2>&1
nvidia-smi --query-gpu=timestamp,index,clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_event_reasons.active \
  --format=csv,noheader -lms 50 > $R/smi.csv 2>&1 &
SMI=$!
cd calibration/pytorch
timeout 420 python3 -m torch.distributed.run --standalone --nproc_per_node=2 power_duty.py --seconds 5 --rest 3 \
  --shapes ../validation/gemm_shapes.txt --attention '1,12,12,1024,64;1,16,16,1024,128;1,20,20,1024,128;1,20,20,2048,128;2,8,2,512,64;2,12,12,1024,64;2,16,16,1024,128;2,16,16,2048,96;2,20,4,1024,128;2,20,20,2048,128;4,12,12,1024,64;4,16,4,2048,128;4,16,16,1024,64;4,16,16,1024,96;4,16,16,2048,64;4,16,16,2048,128;8,12,12,1024,64;8,16,16,2048,64' \
  --out $R/power_loaded.jsonl > $R/power_loaded.log 2>&1; stamp "power_loaded rc $?"
cd ../..
kill $SMI
cp $R/timings.txt $OUT/timings.txt
tar -C /tmp -czf $OUT/run52.tar.gz run52
