# Run 39, on nvidia-h200-x2: the kernels beside all-reduces of 4 MiB and of 128 MiB buckets
# (interference_training.py --bucket-mib 4, then 128), transfer and waiting modes, to see how the slowdown beside a
# moving all-reduce grows with its size (25 MiB: runs 21, 30, 35; 64 MiB: run 38).
set -u
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
R=/tmp/run39; mkdir -p $R
T0=$(date +%s); stamp(){ echo "[$(( $(date +%s) - T0 )) s] $*" | tee -a $R/timings.txt; }
(date -u; nvidia-smi -q | grep -E "GPU UUID") > $R/env.txt 2>&1
cd calibration/pytorch
for mib in 4 128; do
  timeout 150 python3 -m torch.distributed.run --standalone --nproc_per_node=2 interference_training.py \
    --bucket-mib $mib --out $R/interference_${mib}mib.jsonl > $R/interference_${mib}mib.log 2>&1; stamp "$mib MiB rc $?"
done
cd ../..
cp $R/timings.txt $OUT/timings.txt
tar -C /tmp -czf $OUT/run39.tar.gz run39
