# Run 97, on nvidia-h200: gradient accumulation's host cost (host_overhead.py --only accumulate: the backward with
# .grad present against the backward after zero_grad, alternated, at 2 and 10 layers), three times, for the profile's
# launch.grad_accumulate_host_us.
set -u
export PYTHONUNBUFFERED=1
RUN=${RUN:-run97}
R=/tmp/$RUN; mkdir -p $R
(date -u; nvidia-smi) > $R/env.txt 2>&1
for i in 1 2 3; do
  (cd calibration/pytorch && timeout 120 python3 host_overhead.py --only accumulate --out $R/accumulate_host.jsonl) \
    >> $R/host.log 2>&1
  echo "rc $?" >> $R/host.log
done
tar -C /tmp -czf $OUT/$RUN.tar.gz $RUN
grep -v Warn $R/host.log | grep -v "^ *\"raw" | tail -40
