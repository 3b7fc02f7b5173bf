# Run 109, on nvidia-h200 (one GPU, 16 cores): calibration/pytorch/host_spread.py --share-gpu with 2, 4 and 8
# concurrent host-bound processes on GPU 0 (24 windows of 0.5 s each time): does one process's speed against the
# others' spread as much with more processes, and on this machine kind as on the two-GPU one (run 26)?
set -u
export PYTHONUNBUFFERED=1
R=/tmp/run109; mkdir -p $R
T0=$(date +%s); stamp(){ echo "[$(( $(date +%s) - T0 )) s] $*" | tee -a $R/timings.txt; }
(date -u; nvidia-smi; nproc; lscpu | head -20) > $R/env.txt 2>&1
cd calibration/pytorch
for n in 2 2 2 4 4 8 8; do
  timeout 120 python3 host_spread.py --share-gpu --procs $n --out $R/host_spread_p$n.jsonl >> $R/host_spread.log 2>&1
  stamp "spread procs $n rc $?"
done
cd ../..
grep host_spread $R/host_spread.log
cp $R/timings.txt $OUT/timings.txt
tar -C /tmp -czf $OUT/run109.tar.gz run109
