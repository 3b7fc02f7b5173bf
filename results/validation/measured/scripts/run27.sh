# Runs 27 and 28 (two machine starts), on nvidia-h200-x2: the two DDP activation-checkpointing configurations,
# measured after their predictions were committed (191.35 and 163.60 ms), as in the sweep with three steady steps.
# Usage: bash run27.sh N
set -u
N=${1:-27}
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
R=/tmp/run$N; mkdir -p $R
T0=$(date +%s); stamp(){ echo "[$(( $(date +%s) - T0 )) s] $*" | tee -a $R/timings.txt; }
(date -u; nvidia-smi) > $R/env.txt 2>&1
timeout 300 python3 calibration/validation/sweep.py --worlds 2 --out $R/sweep --profile-cpu off --steady-steps 3 \
  --ids d2-l24-h2048-s2048-mb4-b25-acfull,d2-l24-h2048-s2048-mb4-b25-acsel \
  --deadline-s 250 --config-timeout-s 90 --init-timeout-s 120 > $R/sweep.log 2>&1; stamp "sweep rc $?"
python3 - $R/sweep/measured-w2.jsonl <<'PY'
import json, sys
for l in open(sys.argv[1]):
    r = json.loads(l); s = r.get("steady", {})
    if r.get("status") != "ok":
        print(r["id"], r.get("status"), str(r.get("error"))[:300]); continue
    print("%-40s t %7.2f steady %s exposed %.2f ratio %.3f peak %.1f GiB" % (r["id"], r["step_time_ms"]["median"],
          [round(x, 1) for x in s.get("step_time_ms", [])], s.get("exposed_comm_ms", -1), s.get("overlap_ratio", -1),
          r.get("peak_memory_gib", -1)))
PY
cp $R/timings.txt $OUT/timings.txt
tar -C /tmp -czf $OUT/run$N.tar.gz run$N
