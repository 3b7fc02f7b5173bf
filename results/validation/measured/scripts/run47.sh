# Run 47, on nvidia-h200 (run 46 again with the script as committed, which now profiles through
# kernel_gaps.profiled): the hole before each GEMM of the 33 validation configurations in a step-like stream
# (calibration/pytorch/gemm_gaps.py --gemm-shapes calibration/validation/gemm_shapes.txt: a residual add, then
# the GEMM, twelve pairs behind a spin kernel, CUDA-only profiling), GEMM by GEMM.
set -u
export PYTHONUNBUFFERED=1
R=/tmp/run47; mkdir -p $R
T0=$(date +%s); stamp(){ echo "[$(( $(date +%s) - T0 )) s] $*" | tee -a $R/timings.txt; }
(date -u; nvidia-smi -q | grep -E "GPU UUID|Product Name") > $R/env.txt 2>&1
SHAPES=$PWD/calibration/validation/gemm_shapes.txt
cd calibration/pytorch
timeout 400 python3 gemm_gaps.py --gemm-shapes $SHAPES --out $R/gemm_gaps.jsonl > $R/gemm_gaps.log 2>&1; stamp "gaps rc $?"
cd ../..
cp $R/timings.txt $OUT/timings.txt
tar -C /tmp -czf $OUT/run47.tar.gz run47
