#include "sim/scenario/YamlReader.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <numeric>

namespace stepsim {

std::size_t editDistance(std::string_view a, std::string_view b) {
    std::vector<std::size_t> row(b.size() + 1);
    std::iota(row.begin(), row.end(), std::size_t{0});
    for (std::size_t i = 1; i <= a.size(); ++i) {
        std::size_t diag = row[0];
        row[0] = i;
        for (std::size_t j = 1; j <= b.size(); ++j) {
            const std::size_t up = row[j];
            row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
            diag = up;
        }
    }
    return row[b.size()];
}

std::string describeNode(const YAML::Node& node) {
    switch (node.Type()) {
        case YAML::NodeType::Null: return "null";
        case YAML::NodeType::Map: return "a mapping";
        case YAML::NodeType::Sequence: return "a list";
        case YAML::NodeType::Scalar: return "'" + node.Scalar() + "'";
        case YAML::NodeType::Undefined: break;
    }
    return "nothing";
}

YamlReader::YamlReader(std::string source, Missing missing, std::vector<std::string> override_paths)
    : source_(std::move(source)), missing_(missing), overrides_(std::move(override_paths)) {}

void YamlReader::locate(const std::string& path, const YAML::Node& node) {
    lines_[path] = node.Mark().is_null() ? 0 : node.Mark().line + 1;
}

std::optional<std::string> YamlReader::overrideFor(const std::string& path) const {
    auto under = [](const std::string& p, const std::string& prefix) {
        return p.size() > prefix.size() && p.compare(0, prefix.size(), prefix) == 0 &&
               (p[prefix.size()] == '.' || p[prefix.size()] == '[');
    };
    // The last override wins, as it does when applied.
    for (auto it = overrides_.rbegin(); it != overrides_.rend(); ++it)
        if (path == *it || under(path, *it) || under(*it, path)) return *it;
    return std::nullopt;
}

void YamlReader::failLine(int line, const std::string& path, const std::string& what) const {
    if (auto o = overrideFor(path))
        throw inputError(source_, 0, "--set " + *o, path == *o ? what : path + ": " + what);
    throw inputError(source_, line, path, what);
}

void YamlReader::failAt(const YAML::Node& node, const std::string& path, const std::string& what) const {
    failLine(node.Mark().is_null() ? 0 : node.Mark().line + 1, path, what);
}

void YamlReader::noEffect(const std::string& path, const std::string& with) const {
    std::string where;
    if (auto o = overrideFor(path)) {
        where = "--set " + *o;
    } else {
        int line = 0;
        for (std::string p = path;;) {
            if (auto it = lines_.find(p); it != lines_.end()) {
                line = it->second;
                break;
            }
            const auto cut = p.find_last_of(".[");
            if (cut == std::string::npos) break;
            p.resize(cut);
        }
        where = line > 0 ? fmt::format("{}:{}", source_, line) : source_;
    }
    std::string text = fmt::format("key {} ({}) has no effect with {}", path, where, with);
    if (std::find(warnings_.begin(), warnings_.end(), text) == warnings_.end()) warnings_.push_back(std::move(text));
}

void YamlReader::fail(const std::string& path, const std::string& what) const {
    std::string p = path;
    for (;;) {
        if (auto it = lines_.find(p); it != lines_.end()) failLine(it->second, path, what);
        const auto cut = p.find_last_of(".[");
        if (cut == std::string::npos) break;
        p.resize(cut);
    }
    failLine(0, path, what);
}

namespace {

// True when the quoted scalar opening at text[open] closes before the end of its line.
bool closesOnItsLine(std::string_view text, std::size_t open) {
    const char quote = text[open];
    for (std::size_t i = open + 1; i < text.size(); ++i) {
        const char c = text[i];
        if (c == '\n' || c == '\r') return false;
        if (quote == '"' && c == '\\') {
            ++i;  // an escape: the next character is not the closing quote
        } else if (c == quote) {
            if (quote == '\'' && i + 1 < text.size() && text[i + 1] == '\'') {
                ++i;  // '' inside single quotes is one quote
                continue;
            }
            return true;
        }
    }
    return false;
}

// Past this many values (aliases counted each time they are used) a file is refused: stepsim's files hold a few
// hundred, and YAML aliases of aliases grow exponentially (a "billion laughs" file of a few lines).
constexpr long kMaxValues = 1'000'000;

void requireQuotesClosed(const YamlReader& r, const YAML::Node& n, const std::string& path, std::string_view text,
                         long& values) {
    if (++values > kMaxValues)
        r.failAt(n, path.empty() ? "?" : path,
                 fmt::format("the file holds more than {} values (aliases of aliases?): not a stepsim file", kMaxValues));
    if (n.IsMap()) {
        for (const auto& kv : n) {
            requireQuotesClosed(r, kv.first, path, text, values);
            const std::string key = kv.first.IsScalar() ? kv.first.Scalar() : "?";
            requireQuotesClosed(r, kv.second, path.empty() ? key : path + "." + key, text, values);
        }
    } else if (n.IsSequence()) {
        for (std::size_t i = 0; i < n.size(); ++i)
            requireQuotesClosed(r, n[i], fmt::format("{}[{}]", path, i), text, values);
    } else if (n.IsScalar() && !n.Mark().is_null()) {
        const auto pos = static_cast<std::size_t>(n.Mark().pos);
        if (pos < text.size() && (text[pos] == '"' || text[pos] == '\'') && !closesOnItsLine(text, pos))
            r.failAt(n, path.empty() ? "?" : path,
                     fmt::format("the value opened with {} has no closing {} on its line (a quoted value must end on "
                                 "the line it starts on)",
                                 text[pos], text[pos]));
    }
}

}  // namespace

void requireQuotesClosedOnTheirLine(const YamlReader& r, const YAML::Node& root, std::string_view text) {
    long values = 0;
    requireQuotesClosed(r, root, "", text, values);
}

namespace {

// A plain (unquoted) scalar's text; a quoted one is a string and never a number or a boolean.
std::optional<std::string> plainScalar(const YAML::Node& n) {
    if (!n.IsScalar() || n.Tag() == "!") return std::nullopt;
    return n.Scalar();
}

template <class I>
void readInteger(YamlReader& r, const YAML::Node& n, const std::string& path, I& out, const char* what) {
    auto text = plainScalar(n);
    I value{};
    if (text && !text->empty()) {
        const char* first = text->data();
        const char* last = first + text->size();
        if (*first == '+') ++first;
        auto [ptr, ec] = std::from_chars(first, last, value);
        if (ec == std::errc() && ptr == last) {
            out = value;
            return;
        }
        if (ec == std::errc::result_out_of_range)
            r.failAt(n, path, fmt::format("expected {}, got {} (out of range)", what, describeNode(n)));
    }
    r.failAt(n, path, fmt::format("expected {}, got {}", what, describeNode(n)));
}

}  // namespace

void readValue(YamlReader& r, const YAML::Node& n, const std::string& path, int& out) {
    readInteger(r, n, path, out, "an integer");
}
void readValue(YamlReader& r, const YAML::Node& n, const std::string& path, long& out) {
    readInteger(r, n, path, out, "an integer");
}
void readValue(YamlReader& r, const YAML::Node& n, const std::string& path, std::uint64_t& out) {
    readInteger(r, n, path, out, "a non-negative integer");
}

void readValue(YamlReader& r, const YAML::Node& n, const std::string& path, double& out) {
    auto text = plainScalar(n);
    if (text && !text->empty()) {
        const char* first = text->data();
        const char* last = first + text->size();
        if (*first == '+') ++first;
        double value = 0.0;
        auto [ptr, ec] = std::from_chars(first, last, value);
        if (ec == std::errc() && ptr == last && std::isfinite(value)) {
            out = value;
            return;
        }
    }
    r.failAt(n, path, "expected a number, got " + describeNode(n));
}

void readValue(YamlReader& r, const YAML::Node& n, const std::string& path, bool& out) {
    auto text = plainScalar(n);
    if (text == "true" || text == "True" || text == "TRUE") {
        out = true;
        return;
    }
    if (text == "false" || text == "False" || text == "FALSE") {
        out = false;
        return;
    }
    r.failAt(n, path, "expected true or false, got " + describeNode(n));
}

void readValue(YamlReader& r, const YAML::Node& n, const std::string& path, std::string& out) {
    if (!n.IsScalar()) r.failAt(n, path, "expected a string, got " + describeNode(n));
    out = n.Scalar();
}

YamlMapReader::YamlMapReader(YamlReader& r, const YAML::Node& map, std::string path)
    : r_(r), map_(map), path_(std::move(path)) {}

std::string YamlMapReader::pathOf(std::string_view key) const {
    return path_.empty() ? std::string(key) : path_ + "." + std::string(key);
}

std::optional<YAML::Node> YamlMapReader::find(std::string_view key, bool required) {
    known_.emplace_back(key);
    for (const auto& kv : map_) {
        if (kv.first.IsScalar() && kv.first.Scalar() == key) {
            r_.locate(pathOf(key), kv.second);
            return kv.second;
        }
    }
    if (required && r_.missing() == YamlReader::Missing::error) missing_.emplace_back(key);
    return std::nullopt;
}

void YamlMapReader::finish() {
    std::vector<std::string> seen;
    for (const auto& kv : map_) {
        const YAML::Node& k = kv.first;
        if (!k.IsScalar()) r_.failAt(k, path_, "expected a key name, got " + describeNode(k));
        const std::string& name = k.Scalar();
        if (std::find(seen.begin(), seen.end(), name) != seen.end())
            r_.failAt(k, pathOf(name), "duplicate key");
        seen.push_back(name);
        if (std::find(known_.begin(), known_.end(), name) != known_.end()) continue;
        std::string allowed;
        const std::string* closest = nullptr;
        std::size_t best = std::numeric_limits<std::size_t>::max();
        for (const auto& known : known_) {
            allowed += (allowed.empty() ? "" : ", ") + known;
            if (auto d = editDistance(name, known); d < best) best = d, closest = &known;
        }
        std::string what = fmt::format("unknown key; allowed {}: {}", path_.empty() ? "at the top level" : "in " + path_,
                                       allowed);
        // A suggestion only for a near miss (a typo), never an unrelated key: at most a third of the name's
        // letters (two for short names) edited.
        if (closest && best <= std::max<std::size_t>(2, name.size() / 3))
            what += fmt::format(" (did you mean '{}'?)", *closest);
        r_.failAt(k, pathOf(name), what);
    }
    // After unknown keys: a misspelt key is better reported as unknown (with a suggestion) than as missing.
    if (!missing_.empty()) {
        std::string others;
        for (std::size_t i = 1; i < missing_.size(); ++i) others += (i > 1 ? ", " : "") + pathOf(missing_[i]);
        r_.failAt(map_, pathOf(missing_.front()),
                  others.empty() ? "missing (every key is required here)"
                                 : "missing (every key is required here; also missing: " + others + ")");
    }
}

}  // namespace stepsim
