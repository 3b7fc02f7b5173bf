# Run 61, on nvidia-h200-x2: the hole before each GEMM of the validation (calibration/validation/gemm_shapes.txt, 198
# GEMMs) and before DDP's gradient copies and a memory-bound add, alone and beside a resident 25 MiB all-reduce, NCCL
# moving data (transfer) or waiting for its peer (waiting): gemm_gaps.py --beside transfer,waiting under torchrun.
# A two-shape smoke run first, then the whole list.
set -u
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
R=/tmp/run61; mkdir -p $R
T0=$(date +%s); stamp(){ echo "[$(( $(date +%s) - T0 )) s] $*" | tee -a $R/timings.txt; }
(date -u; nvidia-smi -q | grep -E "GPU UUID|Product Name") > $R/env.txt 2>&1
SHAPES=$PWD/calibration/validation/gemm_shapes.txt
head -3 $SHAPES | grep -v "^#" | head -2 > $R/smoke_shapes.txt
cd calibration/pytorch
timeout 120 python3 -m torch.distributed.run --standalone --nproc_per_node=2 gemm_gaps.py --gemm-shapes $R/smoke_shapes.txt \
  --beside transfer,waiting --reps 1 --out $R/gemm_gaps_smoke.jsonl > $R/gemm_gaps_smoke.log 2>&1; rc=$?; stamp "smoke rc $rc"
if [ $rc = 0 ]; then
  timeout 420 python3 -m torch.distributed.run --standalone --nproc_per_node=2 gemm_gaps.py --gemm-shapes $SHAPES \
    --beside transfer,waiting --out $R/gemm_gaps_beside.jsonl > $R/gemm_gaps_beside.log 2>&1; stamp "gaps rc $?"
fi
cd ../..
cp $R/timings.txt $OUT/timings.txt
tar -C /tmp -czf $OUT/run61.tar.gz run61
