# Run 108, on nvidia-h200: how long a GEMM stays slow after a kernel holding 24 SMs leaves (gemm_linger_probe.py, one GPU):
# six training GEMM shapes, each alone, with the holder leaving at 0.1-0.9 of its time alone, and wholly inside it;
# 12 instances each, the device drained between, timed by the PyTorch profiler. Then the same with 48 and 8 blocks.
set -u
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
RUN=${RUN:-run108}
R=/tmp/$RUN; mkdir -p $R
T0=$(date +%s); stamp(){ echo "[$(( $(date +%s) - T0 )) s] $*" | tee -a $R/timings.txt; }
(date -u; nvidia-smi; nvidia-smi -q -d CLOCK,POWER,PERFORMANCE) > $R/env.txt 2>&1
cd calibration/pytorch
for B in 24 48 8; do
  timeout 240 python3 gemm_linger_probe.py --blocks $B --out $R/gemm_linger_b$B.jsonl > $R/gemm_linger_b$B.log 2>&1
  stamp "gemm_linger_probe --blocks $B rc $?"
done
cd ../..
cp $R/timings.txt $OUT/timings.txt
tar -C /tmp -czf $OUT/$RUN.tar.gz $RUN
# (as run, this line read `tail -40`, which printed an error in place of the last two logs)
cat $R/gemm_linger_b24.log; tail -n 40 $R/gemm_linger_b48.log $R/gemm_linger_b8.log
