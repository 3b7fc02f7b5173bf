#include "sim/workload/OpsUnits.hpp"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "sim/base/InputError.hpp"

namespace stepsim {

namespace {

bool pathMatches(const std::string& pattern, const std::string& path) {
    std::size_t p = 0, q = 0;
    while (true) {
        const std::size_t pe = std::min(pattern.find('.', p), pattern.size());
        const std::size_t qe = std::min(path.find('.', q), path.size());
        const std::string a = pattern.substr(p, pe - p), b = path.substr(q, qe - q);
        if (a != "*" && a != b) return false;
        const bool pend = pe == pattern.size(), qend = qe == path.size();
        if (pend || qend) return pend && qend;
        p = pe + 1, q = qe + 1;
    }
}

// Parameters held by each module and its descendants.
std::vector<double> heldParams(const OpGraph& g) {
    std::vector<double> held(g.modules.size(), 0.0);
    for (const OpParam& p : g.params)
        for (int m = p.module; m >= 0 && std::size_t(m) < g.modules.size(); m = g.modules[std::size_t(m)].parent)
            held[std::size_t(m)] += double(p.numel());
    return held;
}

std::vector<int> repeatedBlock(const OpGraph& g, std::string& rule) {
    const std::vector<double> held = heldParams(g);
    std::map<std::pair<int, std::string>, std::vector<int>> groups;
    for (std::size_t m = 0; m < g.modules.size(); ++m)
        groups[{g.modules[m].parent, g.modules[m].cls}].push_back(int(m));
    const std::vector<int>* best = nullptr;
    double best_held = 0;
    for (const auto& [key, members] : groups) {
        if (members.size() < 2) continue;
        double h = 0;
        for (int m : members) h += held[std::size_t(m)];
        if (h > best_held) best = &members, best_held = h;
    }
    if (!best) return {};
    const OpModule& first = g.modules[std::size_t(best->front())];
    rule = fmt::format("the repeated block {} ({} modules under {})", first.cls, best->size(),
                       first.parent >= 0 ? "'" + g.modules[std::size_t(first.parent)].path + "'" : "the root");
    return *best;
}

}  // namespace

OpUnits findOpUnits(const OpGraph& g, const std::string& units, const std::string& source) {
    OpUnits out;
    std::vector<int> chosen;
    if (units.empty()) {
        chosen = repeatedBlock(g, out.rule);
        if (chosen.empty())
            throw inputError(source, 0, "fsdp.units",
                             fmt::format("the graph {} has no repeated block (two or more sibling modules of one class "
                                         "holding parameters): name the units (a module class or a path pattern)",
                                         g.file));
    } else {
        const bool pattern = units.find('.') != std::string::npos || units.find('*') != std::string::npos;
        for (std::size_t m = 0; m < g.modules.size(); ++m)
            if (pattern ? pathMatches(units, g.modules[m].path) : g.modules[m].cls == units) chosen.push_back(int(m));
        if (chosen.empty())
            throw inputError(source, 0, "fsdp.units",
                             fmt::format("no module of the graph {} {} '{}'", g.file,
                                         pattern ? "has a path matching" : "is of class", units));
        out.rule = fmt::format("fsdp.units: {} ({} modules)", units, chosen.size());
    }
    // A unit nested in another belongs to the outer one.
    std::vector<int> unit_of(g.modules.size(), -1);
    for (int m : chosen) unit_of[std::size_t(m)] = m;
    const auto unitModule = [&](int m) {
        int found = -1;
        for (; m >= 0 && std::size_t(m) < g.modules.size(); m = g.modules[std::size_t(m)].parent)
            if (unit_of[std::size_t(m)] >= 0) found = m;
        return found;
    };
    // Units in forward order: the order their first forward op runs.
    std::map<int, int> index;
    for (const OpNode& n : g.ops) {
        if (n.phase != Phase::forward || n.recompute) continue;
        const int u = unitModule(n.module);
        if (u >= 0 && !index.count(u)) index[u] = int(out.modules.size()), out.modules.push_back(u);
    }
    out.op_unit.assign(g.ops.size(), -1);
    for (std::size_t i = 0; i < g.ops.size(); ++i) {
        int m = g.ops[i].module;
        if (m < 0 && g.ops[i].fwd_op >= 0) m = g.ops[std::size_t(g.ops[i].fwd_op)].module;
        if (g.ops[i].phase == Phase::optimizer) m = -1;
        const int u = unitModule(m);
        if (u >= 0 && index.count(u)) out.op_unit[i] = index[u];
    }
    for (const OpParam& p : g.params) {
        const int u = unitModule(p.module);
        out.param_unit.push_back(u >= 0 && index.count(u) ? index[u] : -1);
    }
    if (out.modules.empty())
        throw inputError(source, 0, "fsdp.units",
                         fmt::format("the units chosen ({}) run no forward op in {}", out.rule, g.file));
    return out;
}

}  // namespace stepsim
