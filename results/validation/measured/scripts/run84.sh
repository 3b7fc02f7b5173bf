# Run 84, on nvidia-h200: attention's grid timed at the power limit it holds the board at (attention_default.py
# --sustain-s 1: a second of each shape's own calls first, 30 ms more before every timed loop), as the GEMM grid is,
# for comparison with run 56's grid (timed after a spin kernel, below the limit); nvidia-smi every 100 ms.
set -u
R=/tmp/run84; mkdir -p $R
(date -u; nvidia-smi) > $R/env.txt 2>&1
nvidia-smi --query-gpu=timestamp,index,clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_event_reasons.active \
  --format=csv,noheader -lms 100 > $R/smi.csv 2>&1 &
SMI=$!
(cd calibration/pytorch && timeout 500 python3 attention_default.py --sustain-s 1 \
  --out $R/attention_default_sustained.jsonl) > $R/attention.log 2>&1
echo "rc $? $(date -u +%T)" >> $R/attention.log
kill $SMI
gzip $R/smi.csv
tar -C /tmp -czf $OUT/run84.tar.gz run84
tail -2 $R/attention.log; grep -c '"kernel"' $R/attention_default_sustained.jsonl
