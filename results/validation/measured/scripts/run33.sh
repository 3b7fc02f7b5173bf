# Run 33, on nvidia-h200-x2: SDPA inside a GPT block's forward and backward (attention_default.py --step) beside the
# isolated grid (attention_default.py) in the same machine state, then every configuration with the host's launch
# costs probed on each rank before and after its timed steps (train_gpt.py --host-probe 20; CUDA-only profile,
# three steady steps).
set -u
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
N=${RUN:-run33}
R=/tmp/$N; mkdir -p $R
T0=$(date +%s); stamp(){ echo "[$(( $(date +%s) - T0 )) s] $*" | tee -a $R/timings.txt; }
(date -u; nvidia-smi; nvidia-smi topo -m) > $R/env.txt 2>&1
if [ -z "${SKIP_ATTENTION:-}" ]; then
  (cd calibration/pytorch && timeout 120 python3 attention_default.py --out $R/attention_default.jsonl > $R/attention.log 2>&1; stamp "attention grid rc $?"
   timeout 120 python3 attention_default.py --step --out $R/attention_step.jsonl >> $R/attention.log 2>&1; stamp "attention in block rc $?")
fi
timeout 470 python3 calibration/validation/sweep.py --out $R/sweep --profile-cpu off --steady-steps 3 --host-probe 20 \
  --deadline-s 450 --config-timeout-s 90 --init-timeout-s 90 > $R/sweep.log 2>&1; stamp "sweep rc $?"
python3 - $R/sweep/measured-w2.jsonl $R/sweep/measured-w1.jsonl <<'PY'
import json, sys
for path in sys.argv[1:]:
    for l in open(path):
        r = json.loads(l)
        if r.get("status") != "ok":
            print(r["id"], r.get("status")); continue
        pr = [(round(p["before"]["backward_us_per_kernel"], 1), round(p["after"]["backward_us_per_kernel"], 1))
              for p in r.get("host_probe", [])]
        print("%-48s t %7.2f probe bwd us/kernel %s" % (r["id"], r["step_time_ms"]["median"], pr))
PY
cp $R/timings.txt $OUT/timings.txt
tar -C /tmp -czf $OUT/$N.tar.gz $N
