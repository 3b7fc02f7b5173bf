# Run 21, on nvidia-h200-x2 (two GPUs; the first form of the script, transfer mode only, ran as run 21a): the slowdown of a training step's kernels (PyTorch's GEMMs, SDPA,
# memory-bound kernels) while a chain of DDP-bucket all-reduces (25 MiB fp32) is resident beside them,
# calibration/pytorch/interference_training.py under torchrun. (Code at commit ae66319, one 25 MiB bucket reused;
# the script now rotates 8 buckets by default and has --modes: run30.sh, run31.sh.)
set -u
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
R=/tmp/run21; mkdir -p $R
T0=$(date +%s); stamp(){ echo "[$(( $(date +%s) - T0 )) s] $*" | tee -a $R/timings.txt; }
(date -u; nvidia-smi; nvidia-smi topo -m) > $R/env.txt 2>&1
cd calibration/pytorch
timeout 300 torchrun --standalone --nproc-per-node 2 interference_training.py --out $R/interference_training.jsonl > $R/interference.log 2>&1; stamp "interference rc $?"
cd ../..
grep "^rank 0" $R/interference.log | cut -c1-150
tail -5 $R/interference.log
cp $R/timings.txt $OUT/timings.txt
tar -C /tmp -czf $OUT/run21.tar.gz run21
