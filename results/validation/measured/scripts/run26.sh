# Run 26, on nvidia-h200-x2: calibration/pytorch/host_spread.py three times (two concurrent host-bound processes,
# one per GPU, 24 windows of 0.5 s each time).
set -u
export PYTHONUNBUFFERED=1
R=/tmp/run26; mkdir -p $R
T0=$(date +%s); stamp(){ echo "[$(( $(date +%s) - T0 )) s] $*" | tee -a $R/timings.txt; }
(date -u; nvidia-smi) > $R/env.txt 2>&1
cd calibration/pytorch
for i in 1 2 3; do
  timeout 120 python3 host_spread.py --out $R/host_spread.jsonl >> $R/host_spread.log 2>&1; stamp "spread $i rc $?"
done
cd ../..
cat $R/host_spread.log | grep host_spread
cp $R/timings.txt $OUT/timings.txt
tar -C /tmp -czf $OUT/run26.tar.gz run26
