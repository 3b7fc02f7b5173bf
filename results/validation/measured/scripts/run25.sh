# Run 25, on nvidia-h200-x2: does a second training process on the same machine slow the host, and how far apart
# do two concurrent processes' hosts run? The host-bound one-GPU configuration s1-l6-h768-s1024-mb1 (and the
# host/GPU-balanced s1-l12-h768-s1024-mb8-acsel) run alone on GPU 0, then as two independent processes at once
# (GPU 0 and GPU 1, no communication), three rounds (train_gpt.py, CUDA-only profile).
set -u
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
R=/tmp/run25; mkdir -p $R
T0=$(date +%s); stamp(){ echo "[$(( $(date +%s) - T0 )) s] $*" | tee -a $R/timings.txt; }
(date -u; nvidia-smi; nproc; lscpu | head -20) > $R/env.txt 2>&1
cd calibration/validation  # outputs kept in results/validation/measured/run25-concurrent/
IDS=s1-l6-h768-s1024-mb1,s1-l12-h768-s1024-mb8-acsel
for i in 1 2 3; do
  CUDA_VISIBLE_DEVICES=0 timeout 120 python3 train_gpt.py --ids $IDS --out $R/run25-solo$i-w1.jsonl --profile-cpu off > $R/solo$i.log 2>&1
  stamp "solo $i rc $?"
  CUDA_VISIBLE_DEVICES=0 timeout 120 python3 train_gpt.py --ids $IDS --out $R/run25-pair$i-gpu0-w1.jsonl --profile-cpu off > $R/pair$i-0.log 2>&1 &
  CUDA_VISIBLE_DEVICES=1 timeout 120 python3 train_gpt.py --ids $IDS --out $R/run25-pair$i-gpu1-w1.jsonl --profile-cpu off > $R/pair$i-1.log 2>&1 &
  wait; stamp "pair $i"
done
cd ../..
python3 - $R <<'PY'
import json, glob, sys, os
for f in sorted(glob.glob(sys.argv[1] + "/run25-*.jsonl")):
    for l in open(f):
        r = json.loads(l)
        if r.get("status") == "ok":
            print("%-28s %-34s median %7.2f  p10 %7.2f  p90 %7.2f  host %7.2f" % (os.path.basename(f)[6:-6], r["id"], r["step_time_ms"]["median"],
                  r["step_time_ms"]["p10"], r["step_time_ms"]["p90"], r["host_issue_ms"]["median"]))
PY
cp $R/timings.txt $OUT/timings.txt
tar -C /tmp -czf $OUT/run25.tar.gz run25
