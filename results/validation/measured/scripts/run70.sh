# Run 70, on nvidia-h200: why the hidden-4096 step's GEMMs run 10-20% faster than the profile's (run 55's trace:
# 55.5 ms a step against 62.3 priced): the same GEMMs timed as the calibration times them (run70_gemm_clock.py),
# then s1-l8-h4096-s2048-mb2's steps (timed 3 s, three steady steps traced CUDA-only), nvidia-smi sampling clocks
# and power every 20 ms, wall-clock marks to align them.
set -u
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
R=/tmp/run70; mkdir -p $R/traces
(date -u; nvidia-smi; nvidia-smi -q -d CLOCK,POWER,PERFORMANCE) > $R/env.txt 2>&1
nvidia-smi --query-gpu=timestamp,index,clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_event_reasons.active \
  --format=csv,noheader -lms 20 > $R/smi.csv 2>&1 &
SMI=$!
timeout 200 python3 results/validation/measured/scripts/run70_gemm_clock.py > $R/gemm.log 2>&1
echo "MARK $(date +%s.%N) start step" >> $R/marks.txt
timeout 200 python3 calibration/validation/train_gpt.py --ids s1-l8-h4096-s2048-mb2 --out $R/step.jsonl \
  --timed-seconds 3 --max-steps 60 --steady-steps 3 --steady-trace-dir $R/traces --profile-cpu off > $R/step.log 2>&1
echo "MARK $(date +%s.%N) end step rc $?" >> $R/marks.txt
kill $SMI
gzip $R/smi.csv
tar -C /tmp -czf $OUT/run70.tar.gz run70
cat $R/gemm.log $R/marks.txt; tail -3 $R/step.log
