# Run 78, on nvidia-h200: fused AdamW on bf16 parameters (states bf16 too), the optimizer of a model trained in bf16
# without autocast, for the profile's memory.kernels.optimizer_bf16 (stepsim_torch_bench.py --groups adamw_bf16);
# then the fp32 step again in the same machine state, for the ratio (kept out of the fit: raw/torch.jsonl has it).
set -u
R=/tmp/run78; mkdir -p $R
(date -u; nvidia-smi) > $R/env.txt 2>&1
python3 calibration/pytorch/stepsim_torch_bench.py --groups adamw_bf16 --out $R/torch_adamw_bf16.jsonl > $R/bench.log 2>&1
echo "rc $?" >> $R/bench.log
python3 calibration/pytorch/stepsim_torch_bench.py --groups adamw --out $R/torch_adamw_fp32.jsonl >> $R/bench.log 2>&1
echo "rc $?" >> $R/bench.log
tar -C /tmp -czf $OUT/run78.tar.gz run78
cat $R/bench.log
grep -h '"kernel"' $R/*.jsonl | python3 -c "
import json, sys
for l in sys.stdin:
    r = json.loads(l); print(r['op'], r['shape'], round(r['time_us']['median'], 1), round(r.get('GBps', 0), 1))"
