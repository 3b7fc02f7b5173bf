#pragma once
// DIR/points.jsonl: every finished point of a sweep, appended (and flushed) as it finishes, so a sweep that is
// killed loses only the points that were running. The first line names the sweep, {"sweep": FINGERPRINT, "file":
// ...}; each further line is a PointRecord (PointRecord.hpp). A re-run reads the records back and skips their points;
// a last line cut off by the kill is dropped (and rewritten when its point runs again). A journal of another base
// scenario (another fingerprint) is refused rather than mixed in.
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <string>

#include "sim/sweep/PointRecord.hpp"

namespace stepsim {

class Journal {
public:
    // Opens (creating DIR and the file when absent) the journal of the sweep with this fingerprint.
    Journal(const std::filesystem::path& dir, const std::string& fingerprint, const std::string& file);

    const std::map<std::string, PointRecord>& done() const { return done_; }  // by point key
    void append(const PointRecord& r);  // thread-safe; flushed before it returns
    std::filesystem::path path() const { return path_; }

private:
    std::filesystem::path path_;
    std::map<std::string, PointRecord> done_;
    std::ofstream out_;
    std::mutex mutex_;
};

// FNV-1a, 64 bits, as 16 hex digits: the fingerprint of a base scenario's text.
std::string fingerprint(const std::string& text);

}  // namespace stepsim
