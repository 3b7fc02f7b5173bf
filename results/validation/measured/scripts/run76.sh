# Run 76, on nvidia-h200: why a split of one global batch is predicted to save more than it does (heldout5/): at
# hidden 3072 the two-sequence step's memory-bound kernels ran 3.7% over the model, the twice-one-sequence step's
# matched. Both steps again (timed 2 s, three steady steps), their steady traces kept (CUDA only) to compare kernel by
# kernel.
set -u
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
R=/tmp/run76; mkdir -p $R/traces
(date -u; nvidia-smi) > $R/env.txt 2>&1
timeout 200 python3 calibration/validation/train_gpt.py --ids s1-l12-h3072-s2048-mb2,s1-l12-h3072-s2048-mb1-ga2 \
  --out $R/steps.jsonl --timed-seconds 2 --max-steps 60 --steady-steps 3 --steady-trace-dir $R/traces \
  --profile-cpu off > $R/steps.log 2>&1
echo "rc $?" >> $R/steps.log
tar -C /tmp -czf $OUT/run76.tar.gz run76
tail -3 $R/steps.log
