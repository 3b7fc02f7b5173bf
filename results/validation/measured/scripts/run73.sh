# Run 73, on nvidia-h200-x2: the six sixth-round held-out configurations (results/validation/heldout6/, predicted
# and committed before run 73), each timed over 2 s (train_gpt.py --timed-seconds 2),
# CUDA-only profiling, three steady steps; nvidia-smi samples clocks and power every 50 ms. Then the all-reduce's own
# rate beside compute with its kernel resident before the compute starts (interference_training.py --modes resident,
# the default kernels, 25, 64 and 128 MiB; calibration/profiles/h200x2/COMMAND.md, section 27).
set -u
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
R=/tmp/run73; mkdir -p $R
T0=$(date +%s); stamp(){ echo "[$(( $(date +%s) - T0 )) s] $*" | tee -a $R/timings.txt; }
(date -u; nvidia-smi; nvidia-smi -q -d CLOCK,POWER,PERFORMANCE) > $R/env.txt 2>&1
nvidia-smi --query-gpu=timestamp,index,clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_event_reasons.active \
  --format=csv,noheader -lms 50 > $R/smi.csv 2>&1 &
SMI=$!
IDS=d2-l24-h2048-s2048-mb4-b100,d2-l24-h2048-s2048-mb4-b10,d2-l24-h2048-s2048-mb4-b25-view,d2-l24-h2048-s2048-mb2-b25,d2-l24-h2048-s2048-mb2-b25-ga2,d2-l16-h2560-s2048-mb2-b100
timeout 320 python3 calibration/validation/sweep.py --out $R/sweep --worlds 2 --ids $IDS --profile-cpu off \
  --steady-steps 3 --timed-seconds 2 --max-steps 300 --deadline-s 300 --config-timeout-s 90 \
  --init-timeout-s 90 > $R/sweep.log 2>&1
stamp "sweep rc $?"
kill $SMI
(cd calibration/pytorch && timeout 220 python3 -m torch.distributed.run --standalone --nproc_per_node=2 \
  interference_training.py --modes resident --bucket-mib 25,64,128 --out $R/interference_training_resident.jsonl \
  > $R/interference_training_resident.log 2>&1); stamp "resident rc $?"
tail -40 $R/interference_training_resident.log
gzip $R/smi.csv
cp $R/timings.txt $OUT/timings.txt
tar -C /tmp -czf $OUT/run73.tar.gz run73
