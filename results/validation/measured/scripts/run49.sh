# Run 49, on nvidia-h200-x2: the gaps inside a training step beside DistributedDataParallel's own 25 MiB bucket
# all-reduces, spaced as DDP issues them (kernel_gaps.py --ddp --bucket-mib 25 under torchrun with two processes),
# against run 48's continuous chain of 25 MiB all-reduces: how much longer are the holes while NCCL is resident?
set -u
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
R=/tmp/run49; mkdir -p $R
T0=$(date +%s); stamp(){ echo "[$(( $(date +%s) - T0 )) s] $*" | tee -a $R/timings.txt; }
(date -u; nvidia-smi -q | grep -E "GPU UUID") > $R/env.txt 2>&1
cd calibration/pytorch
timeout 300 python3 -m torch.distributed.run --standalone --nproc_per_node=2 kernel_gaps.py --ddp --bucket-mib 25 \
  --out $R/kernel_gaps_ddp25mib.jsonl > $R/kernel_gaps_ddp25mib.log 2>&1; stamp "gaps rc $?"
cd ../..
cp $R/timings.txt $OUT/timings.txt
tar -C /tmp -czf $OUT/run49.tar.gz run49
