#include "sim/sweep/Journal.hpp"

#include <fmt/format.h>

#include "sim/base/InputError.hpp"

namespace stepsim {

std::string fingerprint(const std::string& text) {
    std::uint64_t h = 14695981039346656037ull;
    for (unsigned char c : text) h = (h ^ c) * 1099511628211ull;
    return fmt::format("{:016x}", h);
}

Journal::Journal(const std::filesystem::path& dir, const std::string& fp, const std::string& file)
    : path_(dir / "points.jsonl") {
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec) throw inputError(dir.string(), 0, "--out", "cannot create this folder: " + ec.message());
    std::string kept;  // the journal's whole lines, rewritten without a cut-off last line
    bool header = false;
    if (std::ifstream in(path_); in) {
        std::string line;
        int n = 0;
        while (std::getline(in, line)) {
            ++n;
            nlohmann::ordered_json j;
            try {
                j = nlohmann::ordered_json::parse(line);
            } catch (const nlohmann::json::exception&) {
                if (in.peek() == EOF) break;  // the last line, cut off by a kill
                throw inputError(path_.string(), n, "", "not a JSON line of a sweep journal");
            }
            if (n == 1) {
                if (!j.is_object() || !j.contains("sweep"))
                    throw inputError(path_.string(), 1, "", "not a sweep journal (no {\"sweep\": ...} header)");
                if (j["sweep"] != fp)
                    throw inputError(path_.string(), 1, "sweep",
                                     fmt::format("this folder holds the results of another base scenario ({}, now {}): "
                                                 "use another --out folder, or remove this one to start over",
                                                 j.value("file", std::string("?")), file));
                header = true;
            } else {
                try {
                    PointRecord r = recordFromJson(j);
                    done_.insert_or_assign(r.key, std::move(r));
                } catch (const nlohmann::json::exception& e) {
                    throw inputError(path_.string(), n, "", std::string("not a point record: ") + e.what());
                }
            }
            kept += line + "\n";
        }
    }
    // Rewritten whole beside it, then moved over it: a kill now leaves the old journal or the new one.
    if (!header) kept = nlohmann::ordered_json{{"sweep", fp}, {"file", file}}.dump() + "\n";
    const std::filesystem::path tmp = path_.string() + ".tmp";
    {
        std::ofstream os(tmp, std::ios::trunc);
        os << kept;
        if (!os.flush()) throw inputError(tmp.string(), 0, "", "cannot write this file");
    }
    std::filesystem::rename(tmp, path_, ec);
    if (ec) throw inputError(path_.string(), 0, "", "cannot replace this file: " + ec.message());
    out_.open(path_, std::ios::app);
    if (!out_) throw inputError(path_.string(), 0, "", "cannot open this file for writing");
}

void Journal::append(const PointRecord& r) {
    const std::string line = toJson(r).dump() + "\n";
    const std::lock_guard lock(mutex_);
    out_ << line << std::flush;
    done_.insert_or_assign(r.key, r);
}

}  // namespace stepsim
