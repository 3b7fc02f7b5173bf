# Run 75, on nvidia-h200: SDPA's default backend at 1024 and 2048 tokens (attention_default.py --tokens 1024,2048:
# causal, head_dim 64, 96 and 128 with 16 heads, sequences 512 to 2048): a micro-batch of one sequence took the rate
# of the grid's smallest batch at its length (run 72's s1-l24-h2048-s2048-mb1: attention 4.5 ms a step, 3.9 priced).
set -u
R=/tmp/run75; mkdir -p $R
T0=$(date +%s); stamp(){ echo "[$(( $(date +%s) - T0 )) s] $*" | tee -a $R/timings.txt; }
(date -u; nvidia-smi) > $R/env.txt 2>&1
cd calibration/pytorch
timeout 300 python3 attention_default.py --tokens 1024,2048 --out $R/attention_default.jsonl > $R/attention_default.log 2>&1
stamp "attention_default rc $?"
cd ../..
cp $R/timings.txt $OUT/timings.txt
tar -C /tmp -czf $OUT/run75.tar.gz run75
