# Run 65, on nvidia-h200: a smoke test of gemm_gaps.py as committed (its all-reduce and unit timing through one
# helper since run 61, and its default GEMMs, interference_training.linear_shapes, when no --gemm-shapes is given):
# one GPU, the holes alone; and --beside on one process must refuse with a clear message.
set -u
export PYTHONUNBUFFERED=1
R=/tmp/run65; mkdir -p $R
T0=$(date +%s); stamp(){ echo "[$(( $(date +%s) - T0 )) s] $*" | tee -a $R/timings.txt; }
(date -u; nvidia-smi -q | grep -E "GPU UUID|Product Name") > $R/env.txt 2>&1
cd calibration/pytorch
timeout 200 python3 gemm_gaps.py --out $R/gemm_gaps_default.jsonl > $R/gemm_gaps_default.log 2>&1; stamp "default rc $?"
timeout 60 python3 gemm_gaps.py --beside transfer --out $R/refused.jsonl > $R/refused.log 2>&1; stamp "beside on one GPU rc $?"
cd ../..
cp $R/timings.txt $OUT/timings.txt
tar -C /tmp -czf $OUT/run65.tar.gz run65
