# Run 43, on nvidia-h200-x2: steady-state traces (CUDA activity and runtime calls, every rank) of three reproducible
# DDP rows, two with gradient_as_bucket_view, to see what PyTorch 2.11's reducer launches around each bucket's
# all-reduce (run 34's trace of d2-l24-h2048-s2048-mb4-b25 shows a flat div_ over the bucket before every one).
set -u
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
R=/tmp/run43; mkdir -p $R
T0=$(date +%s); stamp(){ echo "[$(( $(date +%s) - T0 )) s] $*" | tee -a $R/timings.txt; }
(date -u; nvidia-smi -q | grep -E "GPU UUID") > $R/env.txt 2>&1
for id in d2-l12-h2560-s2048-mb1-b1-view d2-l24-h2048-s2048-mb4-b100-view d2-l16-h2560-s2048-mb2-b25; do
  timeout 170 python3 -m torch.distributed.run --standalone --nproc_per_node=2 calibration/validation/train_gpt.py \
    --ids $id --out $R/train-$id.jsonl --profile-cpu off --steady-steps 3 --steady-trace-dir $R/traces \
    > $R/train-$id.log 2>&1; stamp "$id rc $?"
done
cp $R/timings.txt $OUT/timings.txt
tar -C /tmp -czf $OUT/run43.tar.gz run43
