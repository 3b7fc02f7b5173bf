# Run 29, on nvidia-h200-x2: both ranks' steady-state traces (three consecutive unsynchronized steps, CUDA only) of
# d2-l24-h2048-s2048-mb4-b25, and the one-GPU s1-l24-h2048-s2048-mb4 on GPU 0 of the same machine, to see which
# NCCL state (waiting for the peer or moving data) the slowed GEMMs overlap.
set -u
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
R=/tmp/run29; mkdir -p $R/traces
T0=$(date +%s); stamp(){ echo "[$(( $(date +%s) - T0 )) s] $*" | tee -a $R/timings.txt; }
(date -u; nvidia-smi) > $R/env.txt 2>&1
cd calibration/validation
CUDA_VISIBLE_DEVICES=0 timeout 120 python3 train_gpt.py --ids s1-l24-h2048-s2048-mb4 --out $R/run29-steady-w1.jsonl \
  --profile-cpu off --steady-steps 3 --steady-trace-dir $R/traces > $R/w1.log 2>&1; stamp "w1 rc $?"
timeout 180 torchrun --standalone --nproc-per-node 2 train_gpt.py --ids d2-l24-h2048-s2048-mb4-b25 \
  --out $R/run29-steady-w2.jsonl --profile-cpu off --steady-steps 3 --steady-trace-dir $R/traces > $R/w2.log 2>&1
stamp "w2 rc $?"
ls -la $R/traces
tail -2 $R/w1.log $R/w2.log
cp $R/timings.txt $OUT/timings.txt
tar -C /tmp -czf $OUT/run29.tar.gz run29
