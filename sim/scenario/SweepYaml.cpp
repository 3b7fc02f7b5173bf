#include "sim/scenario/SweepYaml.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "sim/base/Files.hpp"
#include "sim/scenario/ScenarioLoader.hpp"
#include "sim/scenario/YamlReader.hpp"

namespace stepsim {

namespace {

std::string readText(const std::filesystem::path& file) {
    return readInputFile(file, "the sweep file", kMaxScenarioBytes);
}

// A value as the YAML text `--set key=value` takes: a scalar as written, a list or mapping in flow style.
std::string valueText(const YamlReader& r, const YAML::Node& n, const std::string& path) {
    if (n.IsScalar()) return n.Scalar();
    if (n.IsNull()) return "null";
    if (!n.IsMap() && !n.IsSequence()) r.failAt(n, path, "expected a value");
    YAML::Emitter e;
    e << YAML::Flow << n;
    return e.c_str();
}

// Checks key paths and values against the base scenario: each key must be one of its settings, each value one the
// schema accepts there (the base with that one override, read as Reading::schema).
class SettingCheck {
public:
    SettingCheck(const YamlReader& r, std::string text, std::vector<std::string> overrides)
        : r_(r), text_(std::move(text)), overrides_(std::move(overrides)) {
        for (const auto& [key, value] : scenarioSettings(parseScenario(text_, r_.source(), overrides_, Reading::schema)))
            keys_.insert(key.substr(0, key.find('[')));
    }
    void key(const YAML::Node& at, const std::string& path, const std::string& key) const {
        if (keys_.count(key)) return;
        std::string closest;
        std::size_t best = 4;
        for (const std::string& k : keys_)
            if (const std::size_t d = editDistance(k, key); d < best) best = d, closest = k;
        r_.failAt(at, path,
                  fmt::format("'{}' is not a setting of the scenario: expected a key path that `stepsim explain` "
                              "prints, such as ddp.bucket_cap_mb{}",
                              key, closest.empty() ? "" : fmt::format(" (did you mean {}?)", closest)));
    }
    void value(const YAML::Node& at, const std::string& path, const std::string& key, const std::string& value) const {
        if (!checked_.insert(key + "=" + value).second) return;
        std::vector<std::string> o = overrides_;
        o.push_back(key + "=" + value);
        try {
            parseScenario(text_, r_.source(), o, Reading::schema);
        } catch (const InputError& e) {
            r_.failAt(at, path, fmt::format("{} is not a value {} takes: {}", value, key, e.what()));
        }
    }

private:
    const YamlReader& r_;
    std::string text_;
    std::vector<std::string> overrides_;
    std::set<std::string> keys_;
    mutable std::set<std::string> checked_;
};

// `grid:` (one axis per key) or one `linked:` group (one axis, keys of equal-length lists).
SweepDimension readAxis(const YamlReader& r, const SettingCheck& check, const YAML::Node& map, const std::string& path,
                        bool linked) {
    if (!map.IsMap() || map.size() == 0)
        r.failAt(map, path, "expected a mapping from key paths to lists of values, got " + describeNode(map));
    SweepDimension d;
    d.line = map.Mark().line + 1;
    for (const auto& kv : map) {
        const std::string key = kv.first.Scalar();
        const std::string kpath = path + "." + key;
        check.key(kv.first, kpath, key);
        if (std::find(d.keys.begin(), d.keys.end(), key) != d.keys.end()) r.failAt(kv.first, kpath, "duplicate key");
        const YAML::Node& list = kv.second;
        if (!list.IsSequence() || list.size() == 0)
            r.failAt(list, kpath, "expected a non-empty list of values, got " + describeNode(list));
        if (!d.keys.empty() && list.size() != d.values.size())
            r.failAt(list, kpath,
                     fmt::format("expected {} values, as many as {} has (linked keys vary together), got {}",
                                 d.values.size(), d.keys.front(), list.size()));
        d.values.resize(list.size());
        std::set<std::string> seen;
        for (std::size_t i = 0; i < list.size(); ++i) {
            const std::string ipath = fmt::format("{}[{}]", kpath, i);
            const std::string v = valueText(r, list[i], ipath);
            check.value(list[i], ipath, key, v);
            if (!seen.insert(v).second && !linked) r.failAt(list[i], ipath, "duplicate value " + v);
            d.values[i].push_back(v);
        }
        d.keys.push_back(key);
    }
    return d;
}

std::vector<SweepSetting> readPoint(const YamlReader& r, const SettingCheck& check, const YAML::Node& map,
                                    const std::string& path) {
    if (!map.IsMap() || map.size() == 0)
        r.failAt(map, path, "expected a mapping from key paths to values, got " + describeNode(map));
    std::vector<SweepSetting> point;
    for (const auto& kv : map) {
        const std::string key = kv.first.Scalar();
        check.key(kv.first, path + "." + key, key);
        const std::string v = valueText(r, kv.second, path + "." + key);
        check.value(kv.second, path + "." + key, key, v);
        point.push_back({key, v});
    }
    std::sort(point.begin(), point.end(), [](const auto& a, const auto& b) { return a.key < b.key; });
    return point;
}

void readConstraints(YamlReader& r, const YAML::Node& list, SweepSpec& s) {
    if (!list.IsSequence()) r.failAt(list, "sweep.constraints", "expected a list, got " + describeNode(list));
    for (std::size_t i = 0; i < list.size(); ++i) {
        const YAML::Node& c = list[i];
        const std::string path = fmt::format("sweep.constraints[{}]", i);
        if (c.IsScalar() && c.Scalar() == "fits_memory") {
            s.fits_memory = true;
        } else if (c.IsMap() && c.size() == 1 && c["global_batch"].IsDefined()) {
            long b = 0;
            readValue(r, c["global_batch"], path + ".global_batch", b);
            if (b < 1) r.failAt(c["global_batch"], path + ".global_batch", fmt::format("expected a positive integer, got {}", b));
            s.global_batch = b;
        } else {
            r.failAt(c, path, "expected fits_memory or {global_batch: N}, got " + describeNode(c));
        }
    }
}

// `claims: [{name: TEXT, change: {KEY: [FROM, TO]}, metric: RESULT_KEY, by_pct: N | direction: less|more}]`.
SweepClaim readClaim(YamlReader& r, const SettingCheck& check, const YAML::Node& c, const std::string& path) {
    if (!c.IsMap())
        r.failAt(c, path, "expected {name: ..., change: {KEY: [FROM, TO]}, metric: ..., by_pct: N}, got " +
                              describeNode(c));
    SweepClaim claim;
    claim.line = c.Mark().line + 1;
    for (const auto& kv : c) {
        const std::string key = kv.first.Scalar();
        const std::string at = path + "." + key;
        const YAML::Node& v = kv.second;
        if (key == "name") {
            readValue(r, v, at, claim.name);
        } else if (key == "change") {
            if (!v.IsMap() || v.size() != 1)
                r.failAt(v, at, "expected one key path and its two values, {KEY: [FROM, TO]}, got " + describeNode(v));
            const auto kv2 = *v.begin();
            claim.key = kv2.first.Scalar();
            check.key(kv2.first, at + "." + claim.key, claim.key);
            if (!kv2.second.IsSequence() || kv2.second.size() != 2)
                r.failAt(kv2.second, at + "." + claim.key, "expected [FROM, TO], got " + describeNode(kv2.second));
            claim.from = valueText(r, kv2.second[0], at + "." + claim.key + "[0]");
            claim.to = valueText(r, kv2.second[1], at + "." + claim.key + "[1]");
            for (int i = 0; i < 2; ++i) {
                const std::string& t = i ? claim.to : claim.from;
                if (t != "max" && t != "min")
                    check.value(kv2.second[i], fmt::format("{}.{}[{}]", at, claim.key, i), claim.key, t);
            }
        } else if (key == "metric") {
            readValue(r, v, at, claim.metric);
        } else if (key == "by_pct") {
            double p = 0;
            readValue(r, v, at, p);
            if (!std::isfinite(p) || p == 0 || p <= -100)
                r.failAt(v, at, fmt::format("expected a change in percent, non-zero and above -100, got {}", p));
            claim.by_pct = p;
        } else if (key == "direction") {
            std::string d;
            readValue(r, v, at, d);
            if (d == "less") claim.direction = -1;
            else if (d == "more") claim.direction = 1;
            else r.failAt(v, at, "expected less or more, got " + describeNode(v));
        } else {
            r.failAt(kv.first, at, "unknown key: expected name, change, metric, by_pct or direction");
        }
    }
    for (const char* required : {"name", "change", "metric"})
        if (!c[required].IsDefined()) r.failAt(c, path + "." + required, "missing");
    if (claim.by_pct.has_value() == (claim.direction != 0))
        r.failAt(c, path, "expected exactly one of by_pct (the claimed change in percent) or direction (less|more)");
    return claim;
}

void readRandom(YamlReader& r, const YAML::Node& n, SweepSpec& s) {
    if (!n.IsMap()) r.failAt(n, "sweep.random", "expected {samples: N, seed: S}, got " + describeNode(n));
    for (const auto& kv : n) {
        const std::string key = kv.first.Scalar();
        if (key == "samples") {
            int k = 0;
            readValue(r, kv.second, "sweep.random.samples", k);
            if (k < 1) r.failAt(kv.second, "sweep.random.samples", fmt::format("expected a positive integer, got {}", k));
            s.random_samples = k;
        } else if (key == "seed") {
            readValue(r, kv.second, "sweep.random.seed", s.random_seed);
        } else {
            r.failAt(kv.first, "sweep.random." + key, "unknown key: expected samples or seed");
        }
    }
    if (!s.random_samples) r.failAt(n, "sweep.random.samples", "missing: how many grid points to draw");
}

}  // namespace

bool hasSweepSection(const std::filesystem::path& file) {
    try {
        const YAML::Node root = YAML::Load(readText(file));
        return root.IsMap() && root["sweep"].IsDefined();
    } catch (const std::exception&) {
        return false;
    }
}

SweepSpec loadSweepSpec(const std::filesystem::path& file, const std::vector<std::string>& overrides) {
    return parseSweepSpec(readText(file), file.string(), overrides);
}

SweepSpec parseSweepSpec(const std::string& text, const std::string& source, const std::vector<std::string>& overrides) {
    YAML::Node root;
    try {
        root = YAML::Load(text);
    } catch (const YAML::ParserException& e) {
        throw inputError(source, e.mark.is_null() ? 0 : e.mark.line + 1, "", "YAML syntax error: " + e.msg);
    }
    YamlReader r(source, YamlReader::Missing::keep_default);
    requireQuotesClosedOnTheirLine(r, root, text);
    if (!root.IsMap() || !static_cast<const YAML::Node&>(root)["sweep"].IsDefined())
        throw inputError(source, 0, "sweep",
                         "missing: a sweep file is a scenario with a `sweep:` section (docs/sweep.md), e.g. "
                         "sweep: {grid: {ddp.bucket_cap_mb: [1, 5, 25, 100]}}");
    const YAML::Node sweep = root["sweep"];
    if (!sweep.IsMap()) r.failAt(sweep, "sweep", "expected a mapping, got " + describeNode(sweep));
    const SettingCheck check(r, text, overrides);
    SweepSpec s;
    s.source = source;
    static const std::vector<std::string> allowed = {"grid", "linked", "points", "random", "search",
                                                     "objective", "goal", "constraints", "gpu_hour_usd", "claims"};
    std::set<std::string> seen;
    for (const auto& kv : sweep) {
        const std::string key = kv.first.Scalar();
        const std::string path = "sweep." + key;
        const YAML::Node& v = kv.second;
        if (!seen.insert(key).second) r.failAt(kv.first, path, "duplicate key");
        if (key == "grid") {
            if (!v.IsMap()) r.failAt(v, path, "expected a mapping from key paths to lists, got " + describeNode(v));
            for (const auto& axis : v) {
                YAML::Node one(YAML::NodeType::Map);
                one[axis.first] = axis.second;
                SweepDimension d = readAxis(r, check, one, path, false);
                d.line = axis.first.Mark().line + 1;
                s.dimensions.push_back(std::move(d));
            }
        } else if (key == "linked") {
            if (!v.IsSequence()) r.failAt(v, path, "expected a list of mappings, got " + describeNode(v));
            for (std::size_t i = 0; i < v.size(); ++i)
                s.dimensions.push_back(readAxis(r, check, v[i], fmt::format("{}[{}]", path, i), true));
        } else if (key == "points") {
            if (!v.IsSequence()) r.failAt(v, path, "expected a list of mappings, got " + describeNode(v));
            for (std::size_t i = 0; i < v.size(); ++i)
                s.points.push_back(readPoint(r, check, v[i], fmt::format("{}[{}]", path, i)));
        } else if (key == "random") {
            readRandom(r, v, s);
        } else if (key == "search") {
            std::string m;
            readValue(r, v, path, m);
            if (m == "grid") s.search = SweepSearch::grid;
            else if (m == "coordinate_descent") s.search = SweepSearch::coordinate_descent;
            else r.failAt(v, path, "expected grid or coordinate_descent, got " + describeNode(v));
        } else if (key == "objective") {
            readValue(r, v, path, s.objective);
            s.objective_line = v.Mark().line + 1;
        } else if (key == "goal") {
            std::string g;
            readValue(r, v, path, g);
            if (g == "maximize") s.goal = SweepGoal::maximize;
            else if (g == "minimize") s.goal = SweepGoal::minimize;
            else r.failAt(v, path, "expected maximize or minimize, got " + describeNode(v));
        } else if (key == "constraints") {
            readConstraints(r, v, s);
        } else if (key == "claims") {
            if (!v.IsSequence()) r.failAt(v, path, "expected a list of claims, got " + describeNode(v));
            for (std::size_t i = 0; i < v.size(); ++i)
                s.claims.push_back(readClaim(r, check, v[i], fmt::format("{}[{}]", path, i)));
        } else if (key == "gpu_hour_usd") {
            double p = 0;
            readValue(r, v, path, p);
            if (!(p > 0)) r.failAt(v, path, fmt::format("expected a positive price in US dollars, got {}", p));
            s.gpu_hour_usd = p;
        } else {
            std::string closest;
            std::size_t best = 4;
            for (const auto& a : allowed)
                if (const std::size_t d = editDistance(a, key); d < best) best = d, closest = a;
            r.failAt(kv.first, path,
                     fmt::format("unknown key: expected one of grid, linked, points, random, search, objective, goal, "
                                 "constraints, gpu_hour_usd, claims{}",
                                 closest.empty() ? "" : fmt::format(" (did you mean {}?)", closest)));
        }
    }
    if (s.dimensions.empty() && s.points.empty())
        r.failAt(sweep, "sweep", "expected at least one of grid, linked or points: nothing to vary");
    std::set<std::string> keys;
    for (const SweepDimension& d : s.dimensions)
        for (const std::string& k : d.keys)
            if (!keys.insert(k).second)
                throw inputError(source, d.line, "sweep", fmt::format("{} is varied on two axes; vary each key on one", k));
    if (s.search == SweepSearch::coordinate_descent && (s.random_samples || !s.points.empty()))
        r.failAt(sweep, "sweep.search", "coordinate_descent searches the grid: leave out random and points");
    if (s.objective == "cost_per_token" && !s.gpu_hour_usd)
        throw inputError(source, s.objective_line, "sweep.objective",
                         "cost_per_token needs the price of a GPU-hour: add gpu_hour_usd: PRICE to the sweep section");
    return s;
}

}  // namespace stepsim
