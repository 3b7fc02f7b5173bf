# Run 82, on nvidia-h200: why fp16 costs the 1.4B step more than the model's GradScaler work (runs 80-81: the
# profiled step's GEMMs 6.2% and attention 6.8% slower in fp16 than in bf16). 8192^3 GEMMs and the 1.4B model's SDPA,
# bf16 then fp16 then bf16 again, 4 s each after 5 s idle (sustained_speed.py --dtypes: the first 0.1 s before the
# power limit, then the sustained rate); then the 1.4B model's bf16 and fp16 steps with their steady traces kept;
# nvidia-smi every 50 ms throughout.
set -u
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
R=/tmp/run82; mkdir -p $R/traces
(date -u; nvidia-smi) > $R/env.txt 2>&1
nvidia-smi --query-gpu=timestamp,index,clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_event_reasons.active \
  --format=csv,noheader -lms 50 > $R/smi.csv 2>&1 &
SMI=$!
(cd calibration/pytorch && timeout 150 python3 -m torch.distributed.run --standalone --nproc_per_node=1 \
  sustained_speed.py --out $R/sustained_dtypes.jsonl --seconds 4 --rest 5 --dtypes bf16,fp16,bf16) > $R/sustained.log 2>&1
echo "rc $? $(date -u +%T)" >> $R/sustained.log
timeout 200 python3 calibration/validation/train_gpt.py --ids s1-l24-h2048-s2048-mb4,s1-l24-h2048-s2048-mb4-fp16 \
  --out $R/steps.jsonl --timed-seconds 2 --max-steps 60 --steady-steps 3 --steady-trace-dir $R/traces \
  --profile-cpu off > $R/steps.log 2>&1
echo "rc $? $(date -u +%T)" >> $R/steps.log
kill $SMI
gzip $R/smi.csv
tar -C /tmp -czf $OUT/run82.tar.gz run82
grep -h "rank\|rc\|ok step" $R/sustained.log $R/steps.log | cut -c1-200
