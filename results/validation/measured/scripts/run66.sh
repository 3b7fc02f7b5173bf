# Run 66, on nvidia-h200-x2: the GEMMs of the 22 held-out configurations that the 198 of the original 33 lack
# (calibration/validation/gemm_shapes_heldout.txt, 180): the hole before each alone and beside a 25 MiB all-reduce
# moving data or waiting (gemm_gaps.py --beside transfer,waiting, as run 61), and each one's slowdown beside a resident
# NCCL kernel (interference_training.py --modes waiting --bucket-mib 25, as run 42).
set -u
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
R=/tmp/run66; mkdir -p $R
T0=$(date +%s); stamp(){ echo "[$(( $(date +%s) - T0 )) s] $*" | tee -a $R/timings.txt; }
(date -u; nvidia-smi -q | grep -E "GPU UUID|Product Name") > $R/env.txt 2>&1
SHAPES=$PWD/calibration/validation/gemm_shapes_heldout.txt
cd calibration/pytorch
timeout 240 python3 -m torch.distributed.run --standalone --nproc_per_node=2 gemm_gaps.py --gemm-shapes $SHAPES \
  --beside transfer,waiting --out $R/gemm_gaps_beside_heldout.jsonl > $R/gemm_gaps_beside_heldout.log 2>&1; stamp "gaps rc $?"
timeout 300 python3 -m torch.distributed.run --standalone --nproc_per_node=2 interference_training.py --modes waiting \
  --bucket-mib 25 --gemm-shapes $SHAPES --out $R/interference_training_shapes_waiting_heldout.jsonl \
  > $R/interference_training_shapes_waiting_heldout.log 2>&1; stamp "interference rc $?"
cd ../..
cp $R/timings.txt $OUT/timings.txt
tar -C /tmp -czf $OUT/run66.tar.gz run66
