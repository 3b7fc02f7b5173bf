# Run 77, on nvidia-h200: the precisions and the tied head, to build their model from (not held out): fp16 autocast
# with GradScaler, bf16 parameters without autocast, the LM head tied to the token embedding, at 4 layers of hidden
# 2048 (one sequence) and 12 layers (four sequences), each beside its bf16-autocast baseline measured again in the
# same machine start; timed 2 s, three steady steps whose traces are kept (CUDA only) to read the kernels off.
set -u
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
R=/tmp/run77; mkdir -p $R/traces
(date -u; nvidia-smi) > $R/env.txt 2>&1
nvidia-smi --query-gpu=timestamp,index,clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_event_reasons.active \
  --format=csv,noheader -lms 50 > $R/smi.csv 2>&1 &
SMI=$!
IDS=s1-l4-h2048-s2048-mb1,s1-l4-h2048-s2048-mb1-fp16,s1-l4-h2048-s2048-mb1-pbf16,s1-l4-h2048-s2048-mb1-tied
IDS=$IDS,s1-l12-h2048-s2048-mb4,s1-l12-h2048-s2048-mb4-fp16,s1-l12-h2048-s2048-mb4-pbf16
timeout 300 python3 calibration/validation/train_gpt.py --ids $IDS --out $R/steps.jsonl --timed-seconds 2 \
  --max-steps 300 --steady-steps 3 --steady-trace-dir $R/traces --profile-cpu off > $R/steps.log 2>&1
echo "rc $?" >> $R/steps.log
kill $SMI
gzip $R/smi.csv
tar -C /tmp -czf $OUT/run77.tar.gz run77
tail -4 $R/steps.log
