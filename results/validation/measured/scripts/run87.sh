# Run 87, on nvidia-h200: AdamW's default foreach step over fp32 parameters (stepsim_torch_bench.py --groups
# adamw_foreach), for the profile's memory.kernels.optimizer_foreach; then the fused step again in the same machine
# state for the ratio (kept out of the fit: raw/torch.jsonl has it).
set -u
R=/tmp/run87; mkdir -p $R
(date -u; nvidia-smi) > $R/env.txt 2>&1
python3 calibration/pytorch/stepsim_torch_bench.py --groups adamw_foreach --out $R/torch_adamw_foreach.jsonl > $R/bench.log 2>&1
echo "rc $?" >> $R/bench.log
python3 calibration/pytorch/stepsim_torch_bench.py --groups adamw --out $R/torch_adamw_fused.jsonl >> $R/bench.log 2>&1
echo "rc $?" >> $R/bench.log
tar -C /tmp -czf $OUT/run87.tar.gz run87
cat $R/bench.log
grep -h '"kernel"' $R/*.jsonl | python3 -c "
import json, sys
for l in sys.stdin:
    r = json.loads(l); print(r['op'], r['shape'], round(r['time_us']['median'], 1), round(r.get('GBps', 0), 1))"
