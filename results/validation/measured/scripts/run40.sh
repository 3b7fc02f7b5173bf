# Run 40, on nvidia-h200-x2: interference_training.py as `stepsim calibrate` now runs it, several sizes in one
# process (--bucket-mib 4,25, transfer mode only, to keep it short): a check of the script, not fitted.
set -u
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
R=/tmp/run40; mkdir -p $R
T0=$(date +%s); stamp(){ echo "[$(( $(date +%s) - T0 )) s] $*" | tee -a $R/timings.txt; }
cd calibration/pytorch
timeout 150 python3 -m torch.distributed.run --standalone --nproc_per_node=2 interference_training.py \
  --bucket-mib 4,25 --modes transfer --out $R/interference_4_25mib.jsonl > $R/interference.log 2>&1; stamp "rc $?"
cd ../..
cp $R/timings.txt $OUT/timings.txt
tar -C /tmp -czf $OUT/run40.tar.gz run40
