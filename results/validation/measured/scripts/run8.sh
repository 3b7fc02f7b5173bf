set -u
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
R=/tmp/run8; mkdir -p $R
T0=$(date +%s); stamp(){ echo "[$(( $(date +%s) - T0 )) s] $*" | tee -a $R/timings.txt; }
(date -u; nvidia-smi; nvidia-smi -q -d CLOCK,POWER,PERFORMANCE) > $R/env.txt 2>&1
cd calibration/pytorch
python3 host_overhead.py --out $R/host_overhead.jsonl > $R/host.log 2>&1; stamp "host 1gpu rc $?"
torchrun --standalone --nproc-per-node 2 host_overhead.py --ddp --out $R/host_overhead.jsonl >> $R/host.log 2>&1; stamp "host ddp rc $?"
cd ../..
python3 calibration/validation/sweep.py --out $R/sweep --profile-cpu off --deadline-s 200 --config-timeout-s 60 --init-timeout-s 120 > $R/sweep.log 2>&1; stamp "sweep rc $?"
cd calibration/pytorch
python3 host_overhead.py --out $R/host_overhead.jsonl >> $R/host.log 2>&1; stamp "host 1gpu rc $?"
torchrun --standalone --nproc-per-node 2 host_overhead.py --ddp --out $R/host_overhead.jsonl >> $R/host.log 2>&1; stamp "host ddp rc $?"
cd ../..
cp $R/timings.txt $OUT/timings.txt
tar -C /tmp -czf $OUT/run8.tar.gz run8
