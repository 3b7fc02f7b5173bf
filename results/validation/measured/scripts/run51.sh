# Run 51, on nvidia-h200-x2: the validation's kernels under held loads, to tie the profile's rates to a load.
# power_duty.py --no-mixes on both GPUs at once: every GEMM of the 33 configurations (calibration/validation/
# gemm_shapes.txt) and every causal SDPA shape (forward, forward and backward) inside a held background of the
# reference GEMM and memory adds (compute-bound 45% of the time; every third kernel also at 30% and 70%), 0.25 s
# each, beside its spin-and-burst time; then the hidden-768 and hidden-1024 one-GPU models timed over 8 s each, for
# their clocks beside run 44's hidden 2048 (1530-1725 MHz at ~692 W); nvidia-smi samples clocks and power every 50 ms.
set -u
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
R=/tmp/run51; mkdir -p $R
T0=$(date +%s); stamp(){ echo "[$(( $(date +%s) - T0 )) s] $*" | tee -a $R/timings.txt; }
(date -u; nvidia-smi; nvidia-smi -q -d CLOCK,POWER,PERFORMANCE) > $R/env.txt 2>&1
nvidia-smi --query-gpu=timestamp,index,clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_event_reasons.active \
  --format=csv,noheader -lms 50 > $R/smi.csv 2>&1 &
SMI=$!
cd calibration/pytorch
timeout 420 python3 -m torch.distributed.run --standalone --nproc_per_node=2 power_duty.py --no-mixes \
  --shapes ../validation/gemm_shapes.txt --attention '1,12,12,1024,64;1,16,16,1024,128;1,20,20,1024,128;1,20,20,2048,128;2,8,2,512,64;2,12,12,1024,64;2,16,16,1024,128;2,16,16,2048,96;2,20,4,1024,128;2,20,20,2048,128;4,12,12,1024,64;4,16,4,2048,128;4,16,16,1024,64;4,16,16,1024,96;4,16,16,2048,64;4,16,16,2048,128;8,12,12,1024,64;8,16,16,2048,64' \
  --out $R/power_loaded.jsonl > $R/power_loaded.log 2>&1; stamp "power_loaded rc $?"
cd ../..
mark(){ echo "$(date -u +%Y/%m/%d\ %H:%M:%S.%3N) $*" >> $R/marks.txt; }
for id in s1-l12-h768-s1024-mb8 s1-l24-h1024-s2048-mb4; do
  mark $id-start
  timeout 150 python3 calibration/validation/train_gpt.py --ids $id --out $R/train-$id.jsonl \
    --profile-cpu off --timed-seconds 8 --min-steps 50 --max-steps 400 > $R/train-$id.log 2>&1; stamp "$id rc $?"
  mark $id-end
done
kill $SMI
cp $R/timings.txt $OUT/timings.txt
tar -C /tmp -czf $OUT/run51.tar.gz run51
