# Run 22, on nvidia-h200-x2: three one-GPU and three DDP configurations measured as in the sweep (CUDA-only
# profile) and, with train_gpt.py --steady-steps 3, three consecutive steps profiled unsynchronized: where the GPU
# idles in steady state (the timed steps read 2-4 ms longer than the busy span of an isolated profiled step).
set -u
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
R=/tmp/run22; mkdir -p $R
T0=$(date +%s); stamp(){ echo "[$(( $(date +%s) - T0 )) s] $*" | tee -a $R/timings.txt; }
(date -u; nvidia-smi) > $R/env.txt 2>&1
cd calibration/validation
timeout 240 python3 train_gpt.py --ids s1-l24-h2048-s2048-mb4,s1-l24-h1024-s2048-mb4,s1-l12-h768-s1024-mb8 \
  --out $R/run22-steady-w1.jsonl --profile-cpu off --steady-steps 3 > $R/w1.log 2>&1; stamp "w1 rc $?"
timeout 240 torchrun --standalone --nproc-per-node 2 train_gpt.py \
  --ids d2-l24-h2048-s2048-mb4-b25,d2-l16-h2048-s2048-mb4-b25-swiglu-gqa4,d2-l12-h768-s1024-mb8-b25 \
  --out $R/run22-steady-w2.jsonl --profile-cpu off --steady-steps 3 > $R/w2.log 2>&1; stamp "w2 rc $?"
cd ../..
python3 - $R/run22-steady-w1.jsonl $R/run22-steady-w2.jsonl <<'PY'
import json, sys
for f in sys.argv[1:]:
    for l in open(f):
        r = json.loads(l); s = r.get("steady", {})
        print(r["id"], "median %.2f" % r["step_time_ms"]["median"], "steady", [round(x, 2) for x in s.get("step_time_ms", [])],
              "busy/step %.2f idle/step %.2f (>20us %.2f)" % (s.get("busy_ms_per_step", 0), s.get("idle_ms_per_step", 0), s.get("idle_over_20us_ms_per_step", 0)))
        for g in s.get("largest_gaps", [])[:6]:
            print("   %8.1f us  after %s  before %s" % (g["us"], g["after"][:50], g["before"][:50]))
PY
tail -3 $R/w1.log $R/w2.log
cp $R/timings.txt $OUT/timings.txt
tar -C /tmp -czf $OUT/run22.tar.gz run22
