#include "sim/fit/IoFit.hpp"

#include <algorithm>
#include <string>
#include <vector>

#include "sim/fit/RateLine.hpp"
#include "sim/base/Statistics.hpp"

namespace stepsim {

namespace {

RateLine copyLine(const FitState& s, const std::string& dir, bool pinned) {
    std::vector<SizeTime> pts;
    for (const RawIoCopy& c : s.raw.io_copies)
        if (c.direction == dir && c.pinned == pinned) pts.push_back({c.bytes, c.device_us});
    return fitRate(pts);
}

// (bytes, µs) of the saves of `mode` past their first repetition, `time` picking the part of the save.
template <class F>
std::vector<SizeTime> savePoints(const FitState& s, const std::string& mode, F time) {
    std::vector<SizeTime> pts;
    for (const RawIoSave& v : s.raw.io_saves)
        if (v.mode == mode && v.rep > 0) pts.push_back({v.bytes, time(v)});
    return pts;
}

}  // namespace

void fitIo(FitState& s) {
    IoRates& io = s.profile.io;
    if (s.raw.io_copies.empty() && s.raw.io_saves.empty()) {
        s.kept.push_back("io");
        return;
    }
    nlohmann::json rep = nlohmann::json::object();
    auto copy = [&](const std::string& dir, bool pinned, double& field) {
        const RateLine l = copyLine(s, dir, pinned);
        const std::string name = dir + (pinned ? "_pinned" : "_pageable");
        if (l.n >= 2) {
            field = l.gbps;
            rep[name] = lineJson(l);
        } else {
            s.kept.push_back("io." + name + "_gbps");
        }
        return l;
    };
    io.copy_alpha_us = copy("h2d", true, io.h2d_pinned_gbps).alpha_us;
    copy("h2d", false, io.h2d_pageable_gbps);
    copy("d2h", true, io.d2h_pinned_gbps);
    copy("d2h", false, io.d2h_pageable_gbps);

    std::vector<double> disk;
    for (const RawIoSave& v : s.raw.io_saves)
        if (v.mode == "disk" && v.total_ms > 0) disk.push_back(v.bytes / (v.total_ms * 1e-3) / 1e9);
    if (!disk.empty()) {
        io.storage_write_gbps = median(disk);
        rep["storage_write_gbps"] = {{"median", io.storage_write_gbps}, {"n", disk.size()}};
    } else {
        s.kept.push_back("io.storage_write_gbps");
    }

    auto line = [&](const std::string& name, const std::vector<SizeTime>& pts, double* overhead_ms, double& gbps) {
        const RateLine l = fitRate(pts);
        if (l.n < 2 || !(l.gbps > 0)) {
            s.kept.push_back("io." + name);
            return;
        }
        if (overhead_ms) *overhead_ms = std::max(0.0, l.alpha_us * 1e-3);
        gbps = l.gbps;
        rep[name] = lineJson(l);
    };
    const double d2h = io.d2h_pageable_gbps;
    if (d2h > 0)
        line("dcp_sync", savePoints(s, "sync", [&](const RawIoSave& v) { return v.blocking_ms * 1e3 - v.bytes / (d2h * 1e3); }),
             &io.dcp_sync_overhead_ms, io.dcp_sync_write_gbps);
    line("dcp_stage", savePoints(s, "async_default", [](const RawIoSave& v) { return v.blocking_ms * 1e3; }),
         &io.dcp_stage_overhead_ms, io.dcp_stage_gbps);
    double unused = 0;
    line("dcp_stage_pinned", savePoints(s, "async_pinned", [](const RawIoSave& v) { return v.blocking_ms * 1e3; }),
         &unused, io.dcp_stage_pinned_gbps);
    std::vector<SizeTime> writes = savePoints(s, "async_default", [](const RawIoSave& v) { return (v.total_ms - v.blocking_ms) * 1e3; });
    for (const SizeTime& p : savePoints(s, "async_pinned", [](const RawIoSave& v) { return (v.total_ms - v.blocking_ms) * 1e3; }))
        writes.push_back(p);
    line("dcp_async_write", writes, &io.dcp_async_write_overhead_ms, io.dcp_async_write_gbps);

    std::vector<double> ratio;
    for (const RawIoSave& v : s.raw.io_saves)
        if (v.launch_us_during > 0 && v.launch_us_after > 0) ratio.push_back(v.launch_us_during / v.launch_us_after);
    if (!ratio.empty()) rep["launch_cost_beside_async_write"] = {{"median_ratio", median(ratio)}, {"n", ratio.size()}};
    s.report["io"] = rep;
}

}  // namespace stepsim
