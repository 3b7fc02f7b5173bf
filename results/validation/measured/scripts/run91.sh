# Run 91, on nvidia-h200: what the norms' and the optimizer's kernels cost in the dtype and the power state a step
# runs them in. stepsim_torch_bench.py --groups norms,adamw_foreach_bf16 (LayerNorm's and RMSNorm's forward,
# input-gradient and weight-gradient kernels apart over 28 sizes, fp32 and bf16; AdamW's foreach step over bf16
# parameters); optimizer_state.py for the 1.4B and the 12-layer hidden-2048 models (AdamW rested and after 1 s of
# GEMMs at the power limit, over the model's own tensors and over 16 Mi chunks; the norms' kernels both ways);
# then the bf16 foreach 1.4B step with its steady trace kept. nvidia-smi every 50 ms.
set -u
export PYTHONUNBUFFERED=1
RUN=${RUN:-run91}
R=/tmp/$RUN; mkdir -p $R/traces
T0=$(date +%s); stamp(){ echo "[$(( $(date +%s) - T0 )) s] $*" | tee -a $R/timings.txt; }
(date -u; nvidia-smi; python3 -c 'import torch; print(torch.__version__, torch.version.cuda)') > $R/env.txt 2>&1
nvidia-smi --query-gpu=timestamp,index,clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_event_reasons.active \
  --format=csv,noheader -lms 50 > $R/smi.csv 2>&1 &
SMI=$!
timeout 150 python3 calibration/pytorch/stepsim_torch_bench.py --groups norms,adamw_foreach_bf16 \
  --out $R/torch_norms.jsonl > $R/bench.log 2>&1
stamp "bench rc $?"
(cd calibration/pytorch && timeout 200 python3 optimizer_state.py --out $R/optimizer_state.jsonl) > $R/state.log 2>&1
stamp "optimizer_state l24 rc $?"
(cd calibration/pytorch && timeout 120 python3 optimizer_state.py --layers 12 --reps 3 \
  --out $R/optimizer_state_l12.jsonl) > $R/state_l12.log 2>&1
stamp "optimizer_state l12 rc $?"
timeout 100 python3 calibration/validation/train_gpt.py --ids s1-l24-h2048-s2048-mb4-pbf16-foreach \
  --out $R/steps.jsonl --timed-seconds 2 --max-steps 60 --steady-steps 3 --steady-trace-dir $R/traces \
  --profile-cpu off > $R/steps.log 2>&1
stamp "traced step rc $?"
kill $SMI
gzip $R/smi.csv
tar -C /tmp -czf $OUT/$RUN.tar.gz $RUN
cat $R/timings.txt; tail -3 $R/bench.log $R/state.log $R/steps.log
python3 - $R <<'PY'
import json, sys, collections
R = sys.argv[1]
for f in ("optimizer_state.jsonl", "optimizer_state_l12.jsonl"):
    try:
        for l in open(f"{R}/{f}"):
            r = json.loads(l)
            print(f[:18], r["case"], r.get("layout", r.get("shape")), r["state"], round(r["time_us"]["median"], 1))
    except OSError as e:
        print(e)
PY
