# Run 15, on nvidia-h200 (one GPU): host_overhead.py three times, now with the host cost of activation
# checkpointing (selective and full) per layer.
set -u
export PYTHONUNBUFFERED=1
R=/tmp/run15; mkdir -p $R
T0=$(date +%s); stamp(){ echo "[$(( $(date +%s) - T0 )) s] $*" | tee -a $R/timings.txt; }
(date -u; nvidia-smi) > $R/env.txt 2>&1
cd calibration/pytorch
for i in 1 2 3; do python3 host_overhead.py --out $R/host_overhead.jsonl >> $R/host.log 2>&1; stamp "host 1gpu rc $?"; done
grep -A4 '"selective"\|"full"' $R/host.log | grep -v raw
cd ../..
cp $R/timings.txt $OUT/timings.txt
tar -C /tmp -czf $OUT/run15.tar.gz run15
