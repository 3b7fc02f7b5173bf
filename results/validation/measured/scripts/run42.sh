# Run 42, on nvidia-h200-x2: each GEMM of the 33 validation configurations beside a resident NCCL all-reduce
# (interference_training.py --gemm-shapes calibration/validation/gemm_shapes.txt, 198 GEMMs): waiting mode beside a
# 25 MiB all-reduce (the fit's interference.gemm_by_shape), then transfer mode beside a chain of 128 MiB all-reduces
# (NCCL moving data and resident through the calls) to compare the two states shape by shape.
set -u
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
R=/tmp/run42; mkdir -p $R
T0=$(date +%s); stamp(){ echo "[$(( $(date +%s) - T0 )) s] $*" | tee -a $R/timings.txt; }
(date -u; nvidia-smi -q | grep -E "GPU UUID") > $R/env.txt 2>&1
SHAPES=$PWD/calibration/validation/gemm_shapes.txt
cd calibration/pytorch
timeout 280 python3 -m torch.distributed.run --standalone --nproc_per_node=2 interference_training.py \
  --modes waiting --bucket-mib 25 --gemm-shapes $SHAPES --out $R/interference_shapes_waiting.jsonl \
  > $R/interference_shapes_waiting.log 2>&1; stamp "waiting rc $?"
timeout 250 python3 -m torch.distributed.run --standalone --nproc_per_node=2 interference_training.py \
  --modes transfer --bucket-mib 128 --gemm-shapes $SHAPES --out $R/interference_shapes_transfer128.jsonl \
  > $R/interference_shapes_transfer128.log 2>&1; stamp "transfer rc $?"
cd ../..
cp $R/timings.txt $OUT/timings.txt
tar -C /tmp -czf $OUT/run42.tar.gz run42
