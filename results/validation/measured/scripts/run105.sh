# Run 105, on nvidia-h200: whether a training step's own kernels hold the clock the reference kernels' line gives.
# power_duty.py (one GPU) with the SM clock and power read through NVML beside every measurement: the eleven standard
# mixes (as run 101: this board's own line), then a GPT block's kernels at hidden 768 to 4096 over 8192 tokens
# (--blocks: its linears' GEMMs in their three forms, its LayerNorms, GELU and residual adds), the GPU busy
# throughout; 4 s each after 3 s of rest. nvidia-smi samples every 50 ms beside it.
set -u
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
RUN=${RUN:-run105}
R=/tmp/$RUN; mkdir -p $R
T0=$(date +%s); stamp(){ echo "[$(( $(date +%s) - T0 )) s] $*" | tee -a $R/timings.txt; }
(date -u; nvidia-smi; nvidia-smi -q -d CLOCK,POWER,PERFORMANCE; python3 -c 'import pynvml' 2>&1 | tail -1) \
  > $R/env.txt 2>&1
nvidia-smi --query-gpu=timestamp,index,clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_event_reasons.active \
  --format=csv,noheader -lms 50 > $R/smi.csv 2>&1 &
SMI=$!
cd calibration/pytorch
timeout 400 python3 -m torch.distributed.run --standalone --nproc_per_node=1 power_duty.py --seconds 4 --rest 3 \
  --mixes standard --blocks 768,1024,1280,1536,2048,3072,4096 --out $R/power_duty.jsonl > $R/power_duty.log 2>&1; stamp "power_duty rc $?"
cd ../..
kill $SMI
gzip -f $R/smi.csv
cp $R/timings.txt $OUT/timings.txt
tar -C /tmp -czf $OUT/$RUN.tar.gz $RUN
grep -h "rank 0" $R/power_duty.log | tail -30; tail -3 $R/power_duty.log
