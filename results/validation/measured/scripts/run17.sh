# Run 17, on nvidia-h200 (one GPU): the host time of real validation models' forward and backward with and
# without activation checkpointing, the GPU held (calibration/validation/checkpoint_host_probe.py), then
# host_overhead.py once more.
set -u
export PYTHONUNBUFFERED=1
R=/tmp/run17; mkdir -p $R
T0=$(date +%s); stamp(){ echo "[$(( $(date +%s) - T0 )) s] $*" | tee -a $R/timings.txt; }
(date -u; nvidia-smi) > $R/env.txt 2>&1
python3 calibration/validation/checkpoint_host_probe.py s1-l12-h768-s1024-mb8 s1-l24-h1024-s2048-mb4 --out $R/probe.jsonl > $R/probe.log 2>&1; stamp "probe rc $?"
(cd calibration/pytorch && python3 host_overhead.py --out $R/host_overhead.jsonl > $R/host.log 2>&1); stamp "host 1gpu rc $?"
python3 calibration/validation/checkpoint_host_probe.py s1-l12-h768-s1024-mb8 s1-l24-h1024-s2048-mb4 --out $R/probe.jsonl >> $R/probe.log 2>&1; stamp "probe rc $?"
python3 -c "
import json
for l in open('$R/probe.jsonl'): r=json.loads(l); print(r['id'], json.dumps(r['host_ms']), json.dumps(r['extra_us_per_layer']))
"
tail -3 $R/probe.log
cp $R/timings.txt $OUT/timings.txt
tar -C /tmp -czf $OUT/run17.tar.gz run17
