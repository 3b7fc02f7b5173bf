# Run 44, on nvidia-h200-x2: do the GPUs hold their speed under sustained load? The timed steps of every run of the
# 1.4B model slow by 4-17% for two or three steps about once a second, the same pattern in every run. With
# nvidia-smi sampling clocks and power every 50 ms: sustained_speed.py on both GPUs at once (8 s of 8192^3 GEMMs,
# then 8 s of a 1 GiB add, a window every 5 calls), then the 1.4B model on one GPU timed over 8 s.
set -u
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
R=/tmp/run44; mkdir -p $R
T0=$(date +%s); stamp(){ echo "[$(( $(date +%s) - T0 )) s] $*" | tee -a $R/timings.txt; }
(date -u; nvidia-smi; nvidia-smi -q -d CLOCK,POWER,PERFORMANCE) > $R/env.txt 2>&1
nvidia-smi --query-gpu=timestamp,index,clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_event_reasons.active \
  --format=csv,noheader -lms 50 > $R/smi.csv 2>&1 &
SMI=$!
mark(){ echo "$(date -u +%Y/%m/%d\ %H:%M:%S.%3N) $*" >> $R/marks.txt; }
mark sustained-start
timeout 90 python3 -m torch.distributed.run --standalone --nproc_per_node=2 calibration/pytorch/sustained_speed.py \
  --out $R/sustained.jsonl > $R/sustained.log 2>&1; stamp "sustained rc $?"; mark sustained-end
mark s1-start
timeout 150 python3 calibration/validation/train_gpt.py --ids s1-l24-h2048-s2048-mb4 --out $R/train-w1.jsonl \
  --profile-cpu off --timed-seconds 8 --min-steps 50 --max-steps 60 > $R/train-w1.log 2>&1; stamp "s1 rc $?"; mark s1-end
kill $SMI
cp $R/timings.txt $OUT/timings.txt
tar -C /tmp -czf $OUT/run44.tar.gz run44
