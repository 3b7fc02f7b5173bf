# Run 48, on nvidia-h200-x2: the gaps inside a training step beside a chain of DDP-bucket-sized (25 MiB) all-reduces
# (kernel_gaps.py --bucket-mib 25 under torchrun with two processes), against run 19's 256 MiB chain, which loads the
# GPU more than a step's buckets: how much longer are the holes before each class of kernel while NCCL is resident?
set -u
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
R=/tmp/run48; mkdir -p $R
T0=$(date +%s); stamp(){ echo "[$(( $(date +%s) - T0 )) s] $*" | tee -a $R/timings.txt; }
(date -u; nvidia-smi -q | grep -E "GPU UUID") > $R/env.txt 2>&1
cd calibration/pytorch
timeout 300 python3 -m torch.distributed.run --standalone --nproc_per_node=2 kernel_gaps.py --bucket-mib 25 \
  --out $R/kernel_gaps_25mib.jsonl > $R/kernel_gaps_25mib.log 2>&1; stamp "gaps rc $?"
cd ../..
cp $R/timings.txt $OUT/timings.txt
tar -C /tmp -czf $OUT/run48.tar.gz run48
