# Run 58, on nvidia-h200-x2: a smoke test of the three torchrun calibration scripts after their shared ending moved
# into calibration/pytorch/gathered.py (each rank's records written by rank 0): sustained_speed.py for 1 s a load,
# interference_training.py on two GEMM shapes in waiting mode, power_duty.py on two GEMM shapes under one held load.
# Their output is checked for line counts only; the measurements are not used.
set -u
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
R=/tmp/run58; mkdir -p $R
T0=$(date +%s); stamp(){ echo "[$(( $(date +%s) - T0 )) s] $*" | tee -a $R/timings.txt; }
cd calibration/pytorch
printf 'forward 8192 2048 2048\nwgrad 2048 2048 8192\n' > $R/shapes.txt
RUN="timeout 150 python3 -m torch.distributed.run --standalone --nproc_per_node=2"
$RUN sustained_speed.py --seconds 1 --out $R/sustained.jsonl > $R/sustained.log 2>&1; stamp "sustained rc $? lines $(wc -l < $R/sustained.jsonl)"
$RUN interference_training.py --modes waiting --gemm-shapes $R/shapes.txt --out $R/interference.jsonl > $R/interference.log 2>&1; stamp "interference rc $? lines $(wc -l < $R/interference.jsonl)"
$RUN power_duty.py --no-mixes --rest 0.5 --shapes $R/shapes.txt --loads mid=0.45 --per-shape 0.2 --out $R/power.jsonl > $R/power.log 2>&1; stamp "power_duty rc $? lines $(wc -l < $R/power.jsonl)"
cd ../..
cp $R/timings.txt $OUT/timings.txt
tar -C /tmp -czf $OUT/run58.tar.gz run58
