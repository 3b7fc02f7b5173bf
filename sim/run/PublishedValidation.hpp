#pragma once
// Predictions against published training runs (`stepsim validate --published FILE`): tokens/s per GPU and peak memory
// as a paper's or a repository's table reports them, beside stepsim's for the same configuration.
//
// Input: JSON Lines, one record per published row (scenarios/published/torchtitan.jsonl):
//   {"id", "source" (repository and file), "table", "row", "hardware", "configuration",
//    "tokens_per_s_per_gpu", "memory_gib" (null: not published),
//    "scenario": the row's scenario file, relative to the data file's folder, or null with "cannot_ask": why}
// and ratio records, {"ratio": name, "numerator": id, "denominator": id, "published": value} (weak scaling: the same
// configuration's tokens/s per GPU on more GPUs over fewer).
// Each row's scenario is simulated with its own profile. A scenario stepsim refuses (an InputError: a feature it
// does not model) is a row that cannot be asked, with the refusal as its reason; no row is dropped.
//   error     = (predicted − published) / published, on tokens/s per GPU and on peak memory per GPU;
//   ratio     = predicted numerator / predicted denominator, its error against the published ratio.
// The table reports each error, the median and the worst |error| over the rows asked, and how many rows could not be.
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace stepsim {

struct PublishedRow {
    std::string id, source, table, row, hardware, configuration, scenario;
    double published_tps = 0.0;                    // tokens/s per GPU
    std::optional<double> published_memory_gib;
    std::string cannot_ask;                        // why no prediction (empty: asked)
    double predicted_tps = 0.0, error_pct = 0.0;
    std::optional<double> predicted_memory_gib, memory_error_pct;
    std::string profile;                           // the profile the prediction used
    std::vector<std::string> warnings;             // the simulation's (out of memory, domain)
};

struct PublishedRatio {
    std::string name, numerator, denominator;
    double published = 0.0;
    std::optional<double> predicted, error_pct;    // empty when either row could not be asked
};

struct PublishedTable {
    std::vector<PublishedRow> rows;
    std::vector<PublishedRatio> ratios;
    int asked = 0, cannot_ask = 0;
    double median_abs_error_pct = 0.0, worst_abs_error_pct = 0.0;
    std::string worst_id;
    int memory_scored = 0;
    double memory_median_abs_error_pct = 0.0, memory_worst_abs_error_pct = 0.0;
    double ratio_worst_abs_error_pct = 0.0;
};

// Reads `data` (JSON Lines as above) and simulates every row; a malformed line is an InputError naming the file,
// line and key.
PublishedTable validatePublished(const std::filesystem::path& data);

std::string toMarkdown(const PublishedTable& t);

}  // namespace stepsim
