# Run 36 (and 37: RUN=run37, another machine start), on nvidia-h200-x2: the two GPUs' speeds at the power limit,
# both loaded at once (device_speed.py, three sets), clocks and power sampled every 100 ms; then the sets again with
# the ranks on the GPUs swapped (CUDA_VISIBLE_DEVICES=1,0), so a rank's speed is told apart from its GPU's.
set -u
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
N=${RUN:-run36}; R=/tmp/$N; mkdir -p $R
T0=$(date +%s); stamp(){ echo "[$(( $(date +%s) - T0 )) s] $*" | tee -a $R/timings.txt; }
(date -u; nvidia-smi -q | grep -E "Minor Number|Serial|UUID|Bus Id" ) > $R/env.txt 2>&1
nvidia-smi --query-gpu=timestamp,index,clocks.sm,power.draw,temperature.gpu,clocks_event_reasons.active \
  --format=csv,noheader -lms 100 > $R/smi.csv 2>&1 &
SMI=$!
cd calibration/pytorch
timeout 120 python3 -m torch.distributed.run --standalone --nproc_per_node=2 device_speed.py --out $R/device_speed.jsonl \
  > $R/device_speed.log 2>&1; stamp "device_speed rc $?"
CUDA_VISIBLE_DEVICES=1,0 timeout 120 python3 -m torch.distributed.run --standalone --nproc_per_node=2 device_speed.py \
  --out $R/device_speed_swapped.jsonl >> $R/device_speed.log 2>&1; stamp "swapped rc $?"
cd ../..
kill $SMI
grep -E "^rank" $R/device_speed.log
cp $R/timings.txt $OUT/timings.txt
tar -C /tmp -czf $OUT/$N.tar.gz $N
