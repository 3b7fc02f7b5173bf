#pragma once
// `stepsim compare A [B]`: two scenarios, or one scenario with two sets of overrides, side by side (sim/run/Compare.hpp,
// sim/report/CompareReport.hpp).
//
//   stepsim compare A.yaml B.yaml                      two files, each as written
//   stepsim compare A.yaml --set compile.enabled=true  A as written against A with the override (B omitted: B is A)
//   --set K=V        B's overrides (the what-if; repeatable)
//   --a-set K=V      A's overrides (repeatable)
//   --both-set K=V   both sides' (e.g. --both-set sim.steps=5), before each side's own
//   --seeds N        runs per side for the noise band (default 4: A's seed and 3 more)
//   --json FILE, --csv FILE   the table as JSON or CSV as well
#include <CLI/CLI.hpp>

namespace stepsim {

void addCompareCommand(CLI::App& app);

}  // namespace stepsim
