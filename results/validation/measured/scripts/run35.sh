# Run 35, on nvidia-h200-x2: interference_training.py with the stream held by 0.2 s of back-to-back GEMMs before
# each timed batch (--heat-s 0.2: the board at its power limit, as in a step) instead of a spin kernel, the SM clock
# and power sampled every 50 ms; then the same without heating, for the comparison in one machine state.
set -u
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
R=/tmp/run35; mkdir -p $R
T0=$(date +%s); stamp(){ echo "[$(( $(date +%s) - T0 )) s] $*" | tee -a $R/timings.txt; }
mark(){ echo "$(date -u +%Y/%m/%d\ %H:%M:%S.%3N) $*" >> $R/marks.txt; }
(date -u; nvidia-smi) > $R/env.txt 2>&1
nvidia-smi --query-gpu=timestamp,index,clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_event_reasons.active \
  --format=csv,noheader -lms 50 > $R/smi.csv 2>&1 &
SMI=$!
cd calibration/pytorch
mark heated-start; timeout 300 python3 -m torch.distributed.run --standalone --nproc_per_node=2 interference_training.py \
  --heat-s 0.2 --out $R/interference_heated.jsonl > $R/interference_heated.log 2>&1; stamp "heated rc $?"; mark heated-end
mark plain-start; timeout 100 python3 -m torch.distributed.run --standalone --nproc_per_node=2 interference_training.py \
  --out $R/interference_plain.jsonl > $R/interference_plain.log 2>&1; stamp "plain rc $?"; mark plain-end
cd ../..
kill $SMI
grep -E "^rank 0 (transfer|waiting) +gemm" $R/interference_heated.log | head -30
cp $R/timings.txt $OUT/timings.txt
tar -C /tmp -czf $OUT/run35.tar.gz run35
