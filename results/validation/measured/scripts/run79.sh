# Run 79, on nvidia-h200: the loss's log-softmax over the vocabulary, forward and backward, in bf16 (as autocast runs it)
# and in fp32 (a loss on logits.float()), for the profile's memory.kernels.log_softmax_* (stepsim_torch_bench.py
# --groups log_softmax).
set -u
R=/tmp/run79; mkdir -p $R
(date -u; nvidia-smi) > $R/env.txt 2>&1
python3 calibration/pytorch/stepsim_torch_bench.py --groups log_softmax --out $R/torch_log_softmax.jsonl > $R/bench.log 2>&1
echo "rc $?" >> $R/bench.log
tar -C /tmp -czf $OUT/run79.tar.gz run79
cat $R/bench.log
grep -h '"kernel"' $R/*.jsonl | python3 -c "
import json, sys
for l in sys.stdin:
    r = json.loads(l); print(r['op'], r['shape'], round(r['time_us']['median'], 1), round(r.get('GBps', 0), 1))"
