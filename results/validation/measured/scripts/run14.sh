# Run 14, on nvidia-h200 (one GPU): the five activation-checkpointing configurations (full and selective), twice,
# CUDA-only profiling, and the six earlier one-GPU configurations once more.
set -u
export PYTHONUNBUFFERED=1
R=/tmp/run14; mkdir -p $R
T0=$(date +%s); stamp(){ echo "[$(( $(date +%s) - T0 )) s] $*" | tee -a $R/timings.txt; }
(date -u; nvidia-smi) > $R/env.txt 2>&1
AC=s1-l24-h1024-s2048-mb4-acfull,s1-l24-h2048-s2048-mb4-acfull,s1-l16-h2048-s2048-mb4-swiglu-gqa4-acfull,s1-l24-h2048-s2048-mb4-acsel,s1-l12-h768-s1024-mb8-acsel
python3 calibration/validation/sweep.py --worlds 1 --ids $AC --out $R/ac1 --profile-cpu off --deadline-s 150 --config-timeout-s 60 --init-timeout-s 60 > $R/ac1.log 2>&1; stamp "ac sweep 1 rc $?"
python3 calibration/validation/sweep.py --worlds 1 --out $R/sweep --profile-cpu off --deadline-s 150 --config-timeout-s 60 --init-timeout-s 60 > $R/sweep.log 2>&1; stamp "sweep rc $?"
python3 calibration/validation/sweep.py --worlds 1 --ids $AC --out $R/ac2 --profile-cpu off --deadline-s 150 --config-timeout-s 60 --init-timeout-s 60 > $R/ac2.log 2>&1; stamp "ac sweep 2 rc $?"
grep -h "train_gpt\]" $R/ac1/sweep-w1.log $R/sweep/sweep-w1.log $R/ac2/sweep-w1.log
cp $R/timings.txt $OUT/timings.txt
tar -C /tmp -czf $OUT/run14.tar.gz run14
