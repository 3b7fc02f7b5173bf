# Run 13, on nvidia-h200 (one GPU): three one-GPU validation configurations profiled CUDA-only with their traces
# kept, to compare the gaps inside real training steps with kernel_gaps.py's (same profiler mode).
set -u
export PYTHONUNBUFFERED=1
R=/tmp/run13; mkdir -p $R
T0=$(date +%s); stamp(){ echo "[$(( $(date +%s) - T0 )) s] $*" | tee -a $R/timings.txt; }
(date -u; nvidia-smi) > $R/env.txt 2>&1
python3 calibration/validation/sweep.py --worlds 1 --ids s1-l24-h2048-s2048-mb4,s1-l24-h1024-s2048-mb4,s1-l12-h768-s1024-mb8 --out $R/traces --profile-cpu off --keep-traces --deadline-s 120 --config-timeout-s 60 --init-timeout-s 60 > $R/traces.log 2>&1; stamp "traces rc $?"
(cd calibration/pytorch && python3 kernel_gaps.py --out $R/kernel_gaps.jsonl > $R/gaps.log 2>&1); stamp "gaps 1gpu rc $?"
ls -la $R/traces
cp $R/timings.txt $OUT/timings.txt
tar -C /tmp -czf $OUT/run13.tar.gz run13
