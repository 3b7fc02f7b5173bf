#!/bin/sh
# The io validation rows' predictions (results/validation/io/README.md): each measured configuration of
# calibration/validation/io_train.py as a stepsim run of the validation scenario s1-l12-h768-s1024-mb8.
# Usage: results/validation/io/predict.sh build/stepsim > results/validation/io/predicted.jsonl
set -e
S=scenarios/validation/s1-l12-h768-s1024-mb8.yaml
row() {
    label=$1; shift
    "$STEPSIM" run $S --set sim.steps=21 "$@" --json /tmp/stepsim-io-predict.json -q
    python3 -c "
import json,sys
d=json.load(open('/tmp/stepsim-io-predict.json'))
c=d.get('checkpoint') or {}
print(json.dumps({'id':'s1-l12-h768-s1024-mb8','label':sys.argv[1],'set':sys.argv[2:],'step_time_ms':d['step_time_ms'],
  'checkpoint_blocking_ms':c.get('blocking_ms')}))" "$label" "$@"
}
STEPSIM=$1
row pageable --set data_loader.pin_memory=false
row pinned --set data_loader.pin_memory=true
row pageable-cpu30 --set data_loader.pin_memory=false --set data_loader.batch_cpu_ms=30
row pinned-w2-cpu30 --set data_loader.pin_memory=true --set data_loader.num_workers=2 --set data_loader.batch_cpu_ms=30
row ckpt-sync --set checkpoint.interval_steps=10 --set checkpoint.mode=sync
row ckpt-async --set checkpoint.interval_steps=10 --set checkpoint.mode=async
row ckpt-async-pinned --set checkpoint.interval_steps=10 --set checkpoint.mode=async --set checkpoint.pinned_staging=true
