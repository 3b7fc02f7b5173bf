# Run 34, on nvidia-h200-x2: the SM clock and board power sampled every 50 ms (nvidia-smi) while SDPA runs inside a
# GPT block after 2 s of the same block (attention_default.py --step --warm-s 2), while the 1.4B model trains on one
# GPU and on two (steady-state traces of every rank kept), and while interference_training.py times kernels beside
# all-reduces: are the step's kernels slower than their microbenchmarks because the board sits at its power limit?
set -u
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
R=/tmp/run34; mkdir -p $R
T0=$(date +%s); stamp(){ echo "[$(( $(date +%s) - T0 )) s] $*" | tee -a $R/timings.txt; }
(date -u; nvidia-smi; nvidia-smi -q -d CLOCK,POWER,PERFORMANCE) > $R/env.txt 2>&1
nvidia-smi --query-gpu=timestamp,index,clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_event_reasons.active \
  --format=csv,noheader -lms 50 > $R/smi.csv 2>&1 &
SMI=$!
mark(){ echo "$(date -u +%Y/%m/%d\ %H:%M:%S.%3N) $*" >> $R/marks.txt; }
cd calibration/pytorch
mark attention-start; timeout 150 python3 attention_default.py --step --warm-s 2 --out $R/attention_step_warm.jsonl > $R/attention.log 2>&1; stamp "attention rc $?"; mark attention-end
cd ../..
mark s1-start; timeout 120 python3 calibration/validation/train_gpt.py --ids s1-l24-h2048-s2048-mb4 --out $R/train-w1.jsonl \
  --profile-cpu off --steady-steps 3 --steady-trace-dir $R/traces > $R/train-w1.log 2>&1; stamp "s1 rc $?"; mark s1-end
mark d2-start; timeout 150 python3 -m torch.distributed.run --standalone --nproc_per_node=2 calibration/validation/train_gpt.py \
  --ids d2-l24-h2048-s2048-mb4-b25 --out $R/train-w2.jsonl --profile-cpu off --steady-steps 3 \
  --steady-trace-dir $R/traces > $R/train-w2.log 2>&1; stamp "d2 rc $?"; mark d2-end
cd calibration/pytorch
mark interference-start; timeout 200 python3 -m torch.distributed.run --standalone --nproc_per_node=2 interference_training.py \
  --out $R/interference.jsonl > $R/interference.log 2>&1; stamp "interference rc $?"; mark interference-end
cd ../..
kill $SMI
cp $R/timings.txt $OUT/timings.txt
tar -C /tmp -czf $OUT/run34.tar.gz run34
