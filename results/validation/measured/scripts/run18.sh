# Run 18, on nvidia-h200-x2 (two GPUs, lent again late in the session): meant to measure the training-step gaps
# beside a resident NCCL kernel (kernel_gaps.py under torchrun), the host overhead, and the DDP validation
# configurations (with two DDP activation-checkpointing ones, since removed: never measured) on unseen data.
# It hung in its first step and was killed at the 560 s limit with nothing returned: kernel_gaps.py sized its
# all-reduce chain from each rank's own step time, so the two ranks issued different numbers of all-reduces
# (fixed: the ranks now agree on the longest). Run 19 repeated the first step alone.
set -u
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
R=/tmp/run18; mkdir -p $R
T0=$(date +%s); stamp(){ echo "[$(( $(date +%s) - T0 )) s] $*" | tee -a $R/timings.txt; }
(date -u; nvidia-smi; nvidia-smi -q -d CLOCK,POWER,PERFORMANCE) > $R/env.txt 2>&1
cd calibration/pytorch
torchrun --standalone --nproc-per-node 2 kernel_gaps.py --out $R/kernel_gaps.jsonl > $R/gaps.log 2>&1; stamp "gaps 2gpu rc $?"
grep step_gap $R/gaps.log
python3 host_overhead.py --out $R/host_overhead.jsonl > $R/host.log 2>&1; stamp "host 1gpu rc $?"
torchrun --standalone --nproc-per-node 2 host_overhead.py --ddp --out $R/host_overhead.jsonl >> $R/host.log 2>&1; stamp "host ddp rc $?"
cd ../..
python3 calibration/validation/sweep.py --worlds 2 --out $R/sweep --profile-cpu off --deadline-s 230 --config-timeout-s 60 --init-timeout-s 120 > $R/sweep.log 2>&1; stamp "sweep rc $?"
grep -h "train_gpt\]" $R/sweep/sweep-w2.log | cut -c1-150
cp $R/timings.txt $OUT/timings.txt
tar -C /tmp -czf $OUT/run18.tar.gz run18
