# Run 12, on nvidia-h200 (one GPU; the two-GPU kind was not lent): the training-step gaps by the class of the
# operation after each gap (kernel_gaps.py), twice, four shapes (4096 and 8192 tokens).
set -u
export PYTHONUNBUFFERED=1
R=/tmp/run12; mkdir -p $R
T0=$(date +%s); stamp(){ echo "[$(( $(date +%s) - T0 )) s] $*" | tee -a $R/timings.txt; }
(date -u; nvidia-smi; nvidia-smi -q -d CLOCK,POWER,PERFORMANCE) > $R/env.txt 2>&1
cd calibration/pytorch
for i in 1 2; do python3 kernel_gaps.py --out $R/kernel_gaps.jsonl >> $R/gaps.log 2>&1; stamp "gaps 1gpu rc $?"; done
grep -v "^\[" $R/gaps.log | grep step_gap
cd ../..
cp $R/timings.txt $OUT/timings.txt
tar -C /tmp -czf $OUT/run12.tar.gz run12
