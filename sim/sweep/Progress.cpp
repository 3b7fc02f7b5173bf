#include "sim/sweep/Progress.hpp"

#include <unistd.h>

#include <fmt/format.h>

namespace stepsim {

bool stdoutIsTerminal() { return isatty(STDOUT_FILENO) == 1; }

Progress::Progress(std::ostream& os, bool enabled, const Objective& objective)
    : os_(os), enabled_(enabled), objective_(objective), start_(std::chrono::steady_clock::now()), last_(start_) {}

void Progress::add(const PointRecord& r) {
    ++done_;
    if (const auto x = objective_.of(r); x && (!best_ || objective_.better(*x, *best_))) {
        best_ = x;
        best_key_ = r.key.empty() ? "as given" : r.key;
    }
    draw(false);
}

void Progress::draw(bool force) {
    if (!enabled_) return;
    const auto now = std::chrono::steady_clock::now();
    if (!force && now - last_ < std::chrono::milliseconds(100)) return;
    last_ = now;
    const double s = std::chrono::duration<double>(now - start_).count();
    const double rate = s > 0 ? done_ / s : 0.0;
    std::string line = fmt::format("{}/{} points, {:.1f}/s", done_, total_, rate);
    if (rate > 0 && total_ > done_) line += fmt::format(", ETA {:.0f} s", (total_ - done_) / rate);
    if (best_) line += fmt::format(", best {} {:.6g} ({})", objective_.key, *best_, best_key_);
    if (line.size() > 118) line = line.substr(0, 115) + "...";
    os_ << "\r\033[K" << line << std::flush;
    drawn_ = true;
}

void Progress::finish() {
    if (!enabled_) return;
    draw(true);
    if (drawn_) os_ << '\n' << std::flush;
}

}  // namespace stepsim
