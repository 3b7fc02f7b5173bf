# Run 32, on nvidia-h200 (one GPU): the eleven one-GPU configurations again (CUDA-only profile, three steady steps),
# another machine start for their medians (the checkpointing rows had three runs each).
set -u
export PYTHONUNBUFFERED=1
R=/tmp/run32; mkdir -p $R
T0=$(date +%s); stamp(){ echo "[$(( $(date +%s) - T0 )) s] $*" | tee -a $R/timings.txt; }
(date -u; nvidia-smi) > $R/env.txt 2>&1
timeout 420 python3 calibration/validation/sweep.py --worlds 1 --out $R/sweep --profile-cpu off --steady-steps 3 \
  --deadline-s 380 --config-timeout-s 90 --init-timeout-s 60 > $R/sweep.log 2>&1; stamp "sweep rc $?"
python3 - $R/sweep/measured-w1.jsonl <<'PY'
import json, sys
for l in open(sys.argv[1]):
    r = json.loads(l)
    if r.get("status") != "ok":
        print(r["id"], r.get("status")); continue
    s = r.get("steady", {})
    print("%-44s t %7.2f steady %s" % (r["id"], r["step_time_ms"]["median"], [round(x, 1) for x in s.get("step_time_ms", [])]))
PY
cp $R/timings.txt $OUT/timings.txt
tar -C /tmp -czf $OUT/run32.tar.gz run32
