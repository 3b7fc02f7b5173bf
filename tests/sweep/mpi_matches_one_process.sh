#!/usr/bin/env bash
# Usage: mpi_matches_one_process.sh STEPSIM MPIEXEC SWEEP_FILE WORK_DIR
# Runs the sweep in one process and under `mpirun -n 2`, and fails unless results.csv and results.json are the same.
set -euo pipefail
stepsim=$1 mpiexec=$2 file=$3 work=$4
rm -rf "$work" && mkdir -p "$work"
"$stepsim" sweep "$file" --out "$work/one" --threads 1 -q
# CI runs as root, and on fewer cores than ranks: Open MPI refuses both unless told. In containers without ptrace
# the shared-memory transport's single-copy mechanism (CMA) fails: copy through the shared buffer instead.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1 \
       OMPI_MCA_btl_vader_single_copy_mechanism=none
"$mpiexec" -n 2 "$stepsim" sweep "$file" --out "$work/two" --threads 1 -q
cmp "$work/one/results.csv" "$work/two/results.csv"
cmp "$work/one/results.json" "$work/two/results.json"
# Every point was simulated once, by one of the ranks, and journaled on rank 0.
[ "$(($(wc -l < "$work/two/points.jsonl") - 1))" -eq "$(($(wc -l < "$work/one/results.csv") - 1))" ]
echo "mpirun -n 2: the same results.csv and results.json as one process"
