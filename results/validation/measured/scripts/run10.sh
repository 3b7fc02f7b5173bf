# Run 10, on nvidia-h200 (one GPU; the two-GPU kind was not lent that session): the training-step kernel
# gaps, the one-GPU host overhead, and the one-GPU validation configurations.
set -u
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
R=/tmp/run10; mkdir -p $R
T0=$(date +%s); stamp(){ echo "[$(( $(date +%s) - T0 )) s] $*" | tee -a $R/timings.txt; }
(date -u; nvidia-smi; nvidia-smi -q -d CLOCK,POWER,PERFORMANCE) > $R/env.txt 2>&1
cd calibration/pytorch
python3 kernel_gaps.py --out $R/kernel_gaps.jsonl > $R/gaps.log 2>&1; stamp "gaps 1gpu rc $?"
tail -40 $R/gaps.log
python3 host_overhead.py --out $R/host_overhead.jsonl > $R/host.log 2>&1; stamp "host 1gpu rc $?"
cd ../..
python3 calibration/validation/sweep.py --worlds 1 --out $R/sweep --profile-cpu off --deadline-s 150 --config-timeout-s 60 --init-timeout-s 120 > $R/sweep.log 2>&1; stamp "sweep rc $?"
cd calibration/pytorch
python3 kernel_gaps.py --out $R/kernel_gaps.jsonl >> $R/gaps.log 2>&1; stamp "gaps 1gpu rc $?"
python3 host_overhead.py --out $R/host_overhead.jsonl >> $R/host.log 2>&1; stamp "host 1gpu rc $?"
cd ../..
cp $R/timings.txt $OUT/timings.txt
tar -C /tmp -czf $OUT/run10.tar.gz run10
