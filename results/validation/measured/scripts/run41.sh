# Run 41, on nvidia-h200: the one-GPU SwiGLU/GQA configuration with three steady steps and its trace kept, to see
# where its step goes kernel class by kernel class (the table's one-GPU SwiGLU/GQA rows read -4%).
set -u
export PYTHONUNBUFFERED=1
R=/tmp/run41; mkdir -p $R
T0=$(date +%s); stamp(){ echo "[$(( $(date +%s) - T0 )) s] $*" | tee -a $R/timings.txt; }
(date -u; nvidia-smi) > $R/env.txt 2>&1
timeout 100 python3 calibration/validation/train_gpt.py --ids s1-l16-h2048-s2048-mb4-swiglu-gqa4 --out $R/train-w1.jsonl \
  --profile-cpu off --steady-steps 3 --steady-trace-dir $R/traces > $R/train-w1.log 2>&1; stamp "s1 rc $?"
cp $R/timings.txt $OUT/timings.txt
tar -C /tmp -czf $OUT/run41.tar.gz run41
