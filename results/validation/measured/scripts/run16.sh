# Run 16, on nvidia-h200 (one GPU): host_overhead.py three times, activation checkpointing's host cost now timed against the plain model in alternating rounds
# (selective and full, per layer).
set -u
export PYTHONUNBUFFERED=1
R=/tmp/run16; mkdir -p $R
T0=$(date +%s); stamp(){ echo "[$(( $(date +%s) - T0 )) s] $*" | tee -a $R/timings.txt; }
(date -u; nvidia-smi) > $R/env.txt 2>&1
cd calibration/pytorch
for i in 1 2 3; do python3 host_overhead.py --out $R/host_overhead.jsonl >> $R/host.log 2>&1; stamp "host 1gpu rc $?"; done
grep -B2 -A14 "\"checkpoint\"" $R/host.log | grep -v "^ *\"raw\"" | head -60
tail -3 $R/host.log
cd ../..
cp $R/timings.txt $OUT/timings.txt
tar -C /tmp -czf $OUT/run16.tar.gz run16
