# Run 67, on nvidia-h200-x2: a smoke test of the torchrun calibration scripts after their process-group set-up moved
# into calibration/pytorch/gathered.py (join_ranks): each one short, under torch.distributed.run with two processes;
# every exit status and record count is kept. Not used elsewhere.
set -u
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
R=/tmp/run67; mkdir -p $R
T0=$(date +%s); stamp(){ echo "[$(( $(date +%s) - T0 )) s] $*" | tee -a $R/timings.txt; }
(date -u; nvidia-smi -q | grep -E "GPU UUID|Product Name") > $R/env.txt 2>&1
head -3 calibration/validation/gemm_shapes.txt | grep -v "^#" > $R/shapes.txt
TR="timeout 150 python3 -m torch.distributed.run --standalone --nproc_per_node=2"
cd calibration/pytorch
run(){ name=$1; shift; $TR "$@" --out $R/$name.jsonl > $R/$name.log 2>&1; rc=$?; stamp "$name rc $rc, $(cat $R/$name.jsonl 2>/dev/null | wc -l) records"; }
run device_speed device_speed.py --sets 1 --windows 3
run sustained_speed sustained_speed.py --seconds 1
run power_duty power_duty.py --no-mixes --shapes $R/shapes.txt --attention '1,12,12,1024,64' --loads mid=0.45 --per-shape 0.1
run interference_training interference_training.py --modes waiting --bucket-mib 25 --gemm-shapes $R/shapes.txt
run gemm_gaps gemm_gaps.py --gemm-shapes $R/shapes.txt --beside transfer,waiting --reps 1
run kernel_gaps kernel_gaps.py --ddp --bucket-mib 25
run host_overhead host_overhead.py --ddp
cd ../..
cp $R/timings.txt $OUT/timings.txt
tar -C /tmp -czf $OUT/run67.tar.gz run67
