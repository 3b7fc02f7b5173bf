# Run 83, on nvidia-h200: PyTorch's FP16 GEMMs over the transformer grid, as fp16 autocast runs them
# (gemm_training_shapes.py --step --dtype fp16; the BF16 grid is run 20's), for the profile's gemm.fp16; nvidia-smi
# every 200 ms.
set -u
R=/tmp/run83; mkdir -p $R
(date -u; nvidia-smi) > $R/env.txt 2>&1
nvidia-smi --query-gpu=timestamp,index,clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_event_reasons.active \
  --format=csv,noheader -lms 200 > $R/smi.csv 2>&1 &
SMI=$!
(cd calibration/pytorch && timeout 400 python3 gemm_training_shapes.py --step --dtype fp16 --deadline-s 330 \
  --out $R/gemm_training_shapes_fp16.jsonl) > $R/gemm.log 2>&1
echo "rc $? $(date -u +%T)" >> $R/gemm.log
kill $SMI
gzip $R/smi.csv
tar -C /tmp -czf $OUT/run83.tar.gz run83
tail -3 $R/gemm.log; grep -c '"gemm"' $R/gemm_training_shapes_fp16.jsonl
