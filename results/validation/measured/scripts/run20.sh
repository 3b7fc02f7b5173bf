# Run 20, on nvidia-h200 (one GPU): BF16 GEMMs of transformer linears timed as a training step runs them
# (gemm_training_shapes.py --step: each GEMM between two events, followed by a memory-bound add of its own
# duration, after 0.1 s of the same alternation), hidden 768-8192, tokens 2048-16384, with the SM clock and the
# board power sampled every 200 ms beside it.
set -u
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
R=/tmp/run20; mkdir -p $R
T0=$(date +%s); stamp(){ echo "[$(( $(date +%s) - T0 )) s] $*" | tee -a $R/timings.txt; }
(date -u; nvidia-smi; nvidia-smi -q -d CLOCK,POWER,PERFORMANCE) > $R/env.txt 2>&1
nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,clocks_throttle_reasons.active --format=csv -lms 200 > $R/smi.csv 2>&1 &
SMI=$!
cd calibration/pytorch
timeout 400 python3 gemm_training_shapes.py --step --deadline-s 330 --out $R/gemm_training_shapes_step.jsonl > $R/gemm_step.log 2>&1; stamp "gemm step rc $?"
kill $SMI
cd ../..
tail -3 $R/gemm_step.log
wc -l $R/gemm_training_shapes_step.jsonl
cp $R/timings.txt $OUT/timings.txt
tar -C /tmp -czf $OUT/run20.tar.gz run20
