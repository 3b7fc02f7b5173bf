# Run 100, on nvidia-h200: gradient accumulation's host cost again, eight times (host_overhead.py --only accumulate),
# and the host-bound accumulating GPT-2 small step (s1-l12-h768-s1024-mb2-ga4) with its steady trace kept, CPU
# activity included, to read AccumulateGrad's host time in the real model.
set -u
export PYTHONUNBUFFERED=1
RUN=${RUN:-run100}
R=/tmp/$RUN; mkdir -p $R/traces
(date -u; nvidia-smi) > $R/env.txt 2>&1
for i in 1 2 3 4 5 6 7 8; do
  (cd calibration/pytorch && timeout 60 python3 host_overhead.py --only accumulate --out $R/accumulate_host.jsonl) \
    >> $R/host.log 2>&1
  echo "rc $?" >> $R/host.log
done
timeout 120 python3 calibration/validation/train_gpt.py --ids s1-l12-h768-s1024-mb2-ga4 --out $R/steps.jsonl \
  --timed-seconds 2 --max-steps 60 --steady-steps 2 --steady-trace-dir $R/traces > $R/steps.log 2>&1
echo "steps rc $?" >> $R/host.log
tar -C /tmp -czf $OUT/$RUN.tar.gz $RUN
grep "rc" $R/host.log; grep -h '"accumulate_over' -A0 $R/host.log | head -20; tail -2 $R/steps.log
