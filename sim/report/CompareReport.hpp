#pragma once
// A comparison (sim/run/Compare.hpp, sim/metrics/Comparison.hpp) as a table: every numeric result key of `run --json` (JsonReport.hpp; nested
// objects' keys joined with '.', e.g. collectives.busbw_GBps, breakdown_ms.comm.dp; lists such as per_rank, per_step,
// link_utilization left out), A's and B's value, the difference B − A, it in percent of A, and the noise band of the
// difference (Compare.hpp: max over the other seeds of |d_i − d_0|). A key one side lacks shows as absent there.
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/metrics/Comparison.hpp"

namespace stepsim {

struct CompareRow {
    std::string key;
    std::optional<double> a, b;
    std::optional<double> diff, diff_pct, band;
};

std::vector<CompareRow> compareRows(const Comparison& c);
std::string compareText(const Comparison& c);
nlohmann::ordered_json compareJson(const Comparison& c);
std::string compareCsv(const Comparison& c);

// Every numeric leaf of a result JSON, by its dotted key, in document order (lists left out).
std::vector<std::pair<std::string, double>> numericLeaves(const nlohmann::ordered_json& j);

}  // namespace stepsim
