# Run 92, on nvidia-h200: AdamW's step over five GPT models' own tensors in the state a step runs it (fused: after
# 1 s of GEMMs at the power limit; foreach: at rest), fp32 and bf16 parameters (stepsim_torch_bench.py --groups
# adamw,adamw_bf16,adamw_foreach,adamw_foreach_bf16), for the profile's memory.kernels.optimizer*; then the norms'
# kernels again (--groups norms, run 91's grid on another machine start). nvidia-smi every 50 ms.
set -u
export PYTHONUNBUFFERED=1
RUN=${RUN:-run92}
R=/tmp/$RUN; mkdir -p $R
T0=$(date +%s); stamp(){ echo "[$(( $(date +%s) - T0 )) s] $*" | tee -a $R/timings.txt; }
(date -u; nvidia-smi; python3 -c 'import torch; print(torch.__version__, torch.version.cuda)') > $R/env.txt 2>&1
nvidia-smi --query-gpu=timestamp,index,clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_event_reasons.active \
  --format=csv,noheader -lms 50 > $R/smi.csv 2>&1 &
SMI=$!
timeout 300 python3 calibration/pytorch/stepsim_torch_bench.py --groups adamw,adamw_bf16,adamw_foreach,adamw_foreach_bf16 \
  --out $R/torch_adamw_gpt.jsonl > $R/bench.log 2>&1
stamp "adamw rc $?"
timeout 120 python3 calibration/pytorch/stepsim_torch_bench.py --groups norms --out $R/torch_norms.jsonl >> $R/bench.log 2>&1
stamp "norms rc $?"
kill $SMI
gzip $R/smi.csv
tar -C /tmp -czf $OUT/$RUN.tar.gz $RUN
cat $R/timings.txt; grep -v Warn $R/bench.log | tail -4
grep -h '"kernel"' $R/torch_adamw_gpt.jsonl | python3 -c "
import json, sys
for l in sys.stdin:
    r = json.loads(l); print(r['op'], r['shape'], round(r['time_us']['median'], 1), round(r.get('GBps', 0), 1))"
