#pragma once
// One line on the terminal, rewritten as points finish: points done (of how many, when known), the rate, the time
// left at that rate and the best point so far. Off when standard output is not a terminal (a log or a pipe gets
// only the summary), and redrawn at most ten times a second.
#include <chrono>
#include <cstddef>
#include <optional>
#include <ostream>
#include <string>

#include "sim/sweep/Objective.hpp"
#include "sim/sweep/PointRecord.hpp"

namespace stepsim {

bool stdoutIsTerminal();

class Progress {
public:
    Progress(std::ostream& os, bool enabled, const Objective& objective);
    void expect(std::size_t more) { total_ += more; }  // points about to run
    void add(const PointRecord& r);                    // one finished (calls are serialized by the caller)
    void finish();                                     // ends the line

private:
    void draw(bool force);

    std::ostream& os_;
    bool enabled_;
    Objective objective_;
    std::size_t done_ = 0, total_ = 0;
    std::optional<double> best_;
    std::string best_key_;
    std::chrono::steady_clock::time_point start_, last_;
    bool drawn_ = false;
};

}  // namespace stepsim
