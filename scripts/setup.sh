#!/usr/bin/env bash
# Installs the Debian 12 packages stepsim builds with, only those missing; quiet when all are there.
set -euo pipefail
packages=(cmake g++ ninja-build pkg-config
          libboost-graph-dev libeigen3-dev libyaml-cpp-dev libgtest-dev libgmock-dev libbenchmark-dev
          libcli11-dev nlohmann-json3-dev libfmt-dev
          zlib1g-dev                   # gzip-compressed profiler traces (model.type: trace) and op graphs
          libssl-dev                   # SHA-256 of an op graph, which its op-times table names (model.type: ops)
          libopenmpi-dev openmpi-bin   # the MPI sweep runner
          gnuplot-nox                  # sweep plots, stepsim run --plot: the link-utilization heat map
          chromium                     # tests/report/HtmlReportTest: run --report's page in headless Chromium
          clang libclang-rt-14-dev)    # scripts/fuzz.sh: libFuzzer
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
echo "setup: installing ${missing[*]}" >&2
sudo=""; [ "$(id -u)" -ne 0 ] && sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq >/dev/null || true
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
