# Run 110, on nvidia-h200 (one GPU): calibration/pytorch/ddp_host.py, DDP's host cost on the validation's own DDP
# models over a one-rank NCCL group against the same model plain, in turn, at one sequence a step (the host-bound
# regime), twice over the list; then the narrowest model at its own micro-batch of eight.
set -u
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
R=/tmp/run110; mkdir -p $R
T0=$(date +%s); stamp(){ echo "[$(( $(date +%s) - T0 )) s] $*" | tee -a $R/timings.txt; }
(date -u; nvidia-smi; nproc) > $R/env.txt 2>&1
# (as run, IDS was set on one line; split here, the same list)
IDS=d2-l12-h768-s1024-mb8-b25,d2-l12-h768-s1024-mb8-b1,d2-l12-h768-s1024-mb8-b25-view,d2-l6-h768-s1024-mb1-b25
IDS=$IDS,d2-l8-h1024-s1024-mb2-b25,d2-l16-h1280-s2048-mb2-b25,d2-l24-h1024-s1024-mb4-b25,d2-l24-h2048-s1024-mb1-b25
IDS=$IDS,d2-l24-h2048-s2048-mb4-b25
cd calibration/pytorch
for pass in 1 2; do
  timeout 280 python3 -m torch.distributed.run --standalone --nproc-per-node 1 ddp_host.py --ids $IDS \
    --out $R/ddp_host.jsonl >> $R/ddp_host.log 2>&1
  stamp "ddp_host pass $pass rc $?"
done
timeout 100 python3 -m torch.distributed.run --standalone --nproc-per-node 1 ddp_host.py \
  --ids d2-l12-h768-s1024-mb8-b25 --micro-batch 8 --out $R/ddp_host_mb8.jsonl >> $R/ddp_host.log 2>&1
stamp "ddp_host mb8 rc $?"
cd ../..
cp $R/timings.txt $OUT/timings.txt
tar -C /tmp -czf $OUT/run110.tar.gz run110
grep -v '^W\|^\[W' $R/ddp_host.log | tail -n 40
