#!/bin/sh
# Round faithful-round2's predictions (README.md): `stepsim run --json` of every scenario in scenarios/, in the order
# of rounds.json, one {"round", "id", "prediction"} line each.
# Usage (from the repository root): results/validation/faithful-round2/predict.sh build/stepsim > results/validation/faithful-round2/predicted.jsonl
set -e
STEPSIM=$1
D=results/validation/faithful-round2
for id in $(python3 -c "import json; print(' '.join(r['name'] for r in json.load(open('$D/rounds.json'))))"); do
    "$STEPSIM" run "$D/scenarios/$id.yaml" --json /tmp/stepsim-faithful-round2.json -q
    python3 -c "
import json, sys
print(json.dumps({'round': 'faithful-round2', 'id': sys.argv[1], 'prediction': json.load(open('/tmp/stepsim-faithful-round2.json'))}))" "$id"
done
