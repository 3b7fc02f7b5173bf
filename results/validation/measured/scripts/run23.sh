# Runs 23 and 24 (two machine starts), on nvidia-h200-x2: the 20 DDP configurations as in the sweep (CUDA-only
# profile) and with three consecutive steps profiled unsynchronized (train_gpt.py --steady-steps 3): exposed
# communication and overlap as the timed steps run, not as one isolated step after a pause. Usage: bash run23.sh N
set -u
N=${1:-23}
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
R=/tmp/run$N; mkdir -p $R
T0=$(date +%s); stamp(){ echo "[$(( $(date +%s) - T0 )) s] $*" | tee -a $R/timings.txt; }
(date -u; nvidia-smi) > $R/env.txt 2>&1
timeout 400 python3 calibration/validation/sweep.py --worlds 2 --out $R/sweep --profile-cpu off --steady-steps 3 \
  --deadline-s 330 --config-timeout-s 60 --init-timeout-s 120 > $R/sweep.log 2>&1; stamp "sweep rc $?"
ls $R/sweep
python3 - $R/sweep/measured-w2.jsonl <<'PY'
import json, sys
for l in open(sys.argv[1]):
    r = json.loads(l); s = r.get("steady", {})
    if r.get("status") != "ok":
        print(r["id"], r.get("status")); continue
    print("%-46s t %7.2f steady %s exposed %.2f ratio %.3f" % (r["id"], r["step_time_ms"]["median"],
          [round(x, 1) for x in s.get("step_time_ms", [])], s.get("exposed_comm_ms", -1), s.get("overlap_ratio", -1)))
PY
cp $R/timings.txt $OUT/timings.txt
tar -C /tmp -czf $OUT/run$N.tar.gz run$N
