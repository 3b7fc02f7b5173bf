# Run 101, on nvidia-h200: the clock a load holds the board at, and attention's time against that clock.
# power_duty.py (one GPU) with the SM clock and power read through NVML beside every measurement (timing.ClockLog):
# the eleven mixes (5 s each after 3 s of rest), then causal SDPA at ten of the validation's shapes (head_dim 64, 96,
# 128; forward and forward-backward) inside held loads of 25%, 45% and 70% compute-bound time, each beside its
# rested spin-and-burst time. nvidia-smi samples every 50 ms beside it, as the earlier runs did.
set -u
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
RUN=${RUN:-run101}
R=/tmp/$RUN; mkdir -p $R
T0=$(date +%s); stamp(){ echo "[$(( $(date +%s) - T0 )) s] $*" | tee -a $R/timings.txt; }
(date -u; nvidia-smi; nvidia-smi -q -d CLOCK,POWER,PERFORMANCE; python3 -c 'import pynvml' 2>&1 | tail -1) \
  > $R/env.txt 2>&1
nvidia-smi --query-gpu=timestamp,index,clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_event_reasons.active \
  --format=csv,noheader -lms 50 > $R/smi.csv 2>&1 &
SMI=$!
ATT="4,16,16,2048,128;2,20,20,2048,128;1,16,16,8192,128;2,16,4,4096,128;8,12,12,1024,64;4,16,16,2048,64"
ATT="$ATT;2,16,16,4096,64;8,12,12,2048,64;2,16,16,2048,96;4,16,16,1024,96"
cd calibration/pytorch
timeout 200 python3 -m torch.distributed.run --standalone --nproc_per_node=1 power_duty.py --seconds 5 --rest 3 \
  --out $R/power_duty.jsonl > $R/power_duty.log 2>&1; stamp "power_duty mixes rc $?"
timeout 200 python3 -m torch.distributed.run --standalone --nproc_per_node=1 power_duty.py --no-mixes --rest 3 \
  --attention "$ATT" --loads mid=0.45,low=0.25,high=0.7 --every 1 --per-shape 0.5 \
  --out $R/power_loaded.jsonl > $R/power_loaded.log 2>&1; stamp "power_duty attention rc $?"
cd ../..
kill $SMI
gzip -f $R/smi.csv
cp $R/timings.txt $OUT/timings.txt
tar -C /tmp -czf $OUT/$RUN.tar.gz $RUN
grep -h "rank 0" $R/power_duty.log $R/power_loaded.log | tail -20; tail -3 $R/power_loaded.log
