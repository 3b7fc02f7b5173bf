# Run 56, on nvidia-h200: SDPA's default backend over the widened attention grid (attention_default.py: causal,
# head_dim 64, 96 and 128 with 16 heads, sequence 512 to 8192, 4096 to 16384 tokens): run 55's held-out step at 4096
# tokens ran its attention 21% faster than the rate of the longest sequence measured so far, 2048.
set -u
R=/tmp/run56; mkdir -p $R
T0=$(date +%s); stamp(){ echo "[$(( $(date +%s) - T0 )) s] $*" | tee -a $R/timings.txt; }
(date -u; nvidia-smi) > $R/env.txt 2>&1
cd calibration/pytorch
timeout 400 python3 attention_default.py --out $R/attention_default.jsonl > $R/attention_default.log 2>&1
stamp "attention_default rc $?"
cd ../..
cp $R/timings.txt $OUT/timings.txt
tar -C /tmp -czf $OUT/run56.tar.gz run56
