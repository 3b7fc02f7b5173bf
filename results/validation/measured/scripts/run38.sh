# Run 38, on nvidia-h200-x2: SDPA inside a whole GPT block (norms, MLP, autocast) after 1 s of that block
# (attention_default.py --step --warm-s 1), the 1.4B model on one GPU with its steady-state trace in the same machine
# state, and the kernels beside all-reduces of 64 MiB buckets (a 2048x8192 weight's gradient, DDP's own bucket for
# it: interference_training.py --bucket-mib 64); clocks and power every 50 ms.
set -u
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
R=/tmp/run38; mkdir -p $R
T0=$(date +%s); stamp(){ echo "[$(( $(date +%s) - T0 )) s] $*" | tee -a $R/timings.txt; }
mark(){ echo "$(date -u +%Y/%m/%d\ %H:%M:%S.%3N) $*" >> $R/marks.txt; }
(date -u; nvidia-smi -q | grep -E "GPU UUID") > $R/env.txt 2>&1
nvidia-smi --query-gpu=timestamp,index,clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_event_reasons.active \
  --format=csv,noheader -lms 50 > $R/smi.csv 2>&1 &
SMI=$!
cd calibration/pytorch
mark attention-start; timeout 150 python3 attention_default.py --step --warm-s 1 --out $R/attention_step_full.jsonl \
  > $R/attention.log 2>&1; stamp "attention rc $?"; mark attention-end
cd ../..
mark s1-start; timeout 120 python3 calibration/validation/train_gpt.py --ids s1-l24-h2048-s2048-mb4 --out $R/train-w1.jsonl \
  --profile-cpu off --steady-steps 3 --steady-trace-dir $R/traces > $R/train-w1.log 2>&1; stamp "s1 rc $?"; mark s1-end
cd calibration/pytorch
mark interference-start; timeout 200 python3 -m torch.distributed.run --standalone --nproc_per_node=2 interference_training.py \
  --bucket-mib 64 --out $R/interference_64mib.jsonl > $R/interference.log 2>&1; stamp "interference rc $?"; mark interference-end
cd ../..
kill $SMI
cp $R/timings.txt $OUT/timings.txt
tar -C /tmp -czf $OUT/run38.tar.gz run38
