set -u
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
R=/tmp/run6; mkdir -p $R
T0=$(date +%s); stamp(){ echo "[$(( $(date +%s) - T0 )) s] $*" | tee -a $R/timings.txt; }
(date -u; nvidia-smi; nvidia-smi -q -d CLOCK,POWER,PERFORMANCE; python3 -m pip list 2>/dev/null | grep -i -E "^(torch|nvidia-nccl|nvidia-cudnn|nvidia-cublas) ") > $R/env.txt 2>&1
cd calibration/pytorch
python3 host_overhead.py --out $R/host_overhead_start.jsonl > $R/host.log 2>&1; stamp "host 1gpu rc $?"
torchrun --standalone --nproc-per-node 2 host_overhead.py --ddp --out $R/host_overhead_start.jsonl >> $R/host.log 2>&1; stamp "host ddp rc $?"
python3 stepsim_torch_bench.py --out $R/torch.jsonl --gemm-shapes ../bench/shapes/pytorch-micro.txt --time-limit 120 > $R/torch_bench.log 2>&1; stamp "torch_bench rc $?"
cd ../..
python3 calibration/validation/sweep.py --out $R/sweep --profile-cpu off --deadline-s 240 --config-timeout-s 60 --init-timeout-s 120 > $R/sweep.log 2>&1; stamp "sweep rc $?"
cd calibration/pytorch
python3 host_overhead.py --out $R/host_overhead_end.jsonl >> $R/host.log 2>&1; stamp "host 1gpu rc $?"
torchrun --standalone --nproc-per-node 2 host_overhead.py --ddp --out $R/host_overhead_end.jsonl >> $R/host.log 2>&1; stamp "host ddp rc $?"
cd ../..
python3 calibration/validation/sweep.py --out $R/traces --ids d2-l24-h1024-s1024-mb4-b25,s1-l12-h768-s1024-mb8 --keep-traces --deadline-s 90 --config-timeout-s 60 --init-timeout-s 60 > $R/traces.log 2>&1; stamp "traces rc $?"
nvidia-smi -q -d CLOCK,POWER,PERFORMANCE > $R/env-after.txt 2>&1
cp $R/timings.txt $OUT/timings.txt
tar -C /tmp -czf $OUT/run6.tar.gz run6
ls -la $OUT
