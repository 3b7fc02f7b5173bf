set -u
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
R=/tmp/run9; mkdir -p $R
T0=$(date +%s); stamp(){ echo "[$(( $(date +%s) - T0 )) s] $*" | tee -a $R/timings.txt; }
(date -u; nvidia-smi) > $R/env.txt 2>&1
cd calibration/pytorch
for i in 1 2 3; do
  python3 host_overhead.py --out $R/host_overhead.jsonl >> $R/host.log 2>&1; stamp "host 1gpu $i rc $?"
  torchrun --standalone --nproc-per-node 2 host_overhead.py --ddp --out $R/host_overhead.jsonl >> $R/host.log 2>&1; stamp "host ddp $i rc $?"
done
cp $R/timings.txt $OUT/timings.txt
tar -C /tmp -czf $OUT/run9.tar.gz run9
