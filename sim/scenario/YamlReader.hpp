#pragma once
// Internal to sim/scenario/ (the only code that includes yaml-cpp): fills plain structs from a yaml-cpp tree.
//
// Each struct is described once, by a function template `describe(visitor, s)` that names every member's
// key (`v.field("hidden", m.hidden)`, `v.section("network", c.network)`). YamlMapReader walks one YAML
// mapping with that description: it checks each value's type, records where each key was found, and
// rejects keys the description does not name (listing the allowed ones and suggesting the closest).
// YamlWriter (YamlWriter.hpp) prints the same description back as YAML, so reader and writer cannot drift.
//
// Errors are stepsim::InputError from inputError(file, line, key, what): the line is yaml-cpp's 0-based
// Mark plus one; a value that came from a `--set key.path=value` override names "--set key.path" instead.
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "sim/base/InputError.hpp"
#include "sim/scenario/EnumNames.hpp"
#include "sim/scenario/YamlWriter.hpp"

namespace stepsim {

// Levenshtein distance, for "did you mean" suggestions.
std::size_t editDistance(std::string_view a, std::string_view b);

// "a mapping", "a list", "null" or the scalar in quotes: what was found, for error messages.
std::string describeNode(const YAML::Node& node);

// The file being read, where each key path was found, and which paths came from --set overrides.
class YamlReader {
public:
    enum class Missing { keep_default, error };  // a key absent from the file: leave the default, or fail

    YamlReader(std::string source, Missing missing, std::vector<std::string> override_paths = {});

    const std::string& source() const { return source_; }
    Missing missing() const { return missing_; }

    // Remembers the line of `node` as the location of `path` (for later cross-field errors).
    void locate(const std::string& path, const YAML::Node& node);
    // Fails at `node` (found under `path`).
    [[noreturn]] void failAt(const YAML::Node& node, const std::string& path, const std::string& what) const;
    // Fails at the recorded location of `path` (or of its closest recorded parent; line 0 if none).
    [[noreturn]] void fail(const std::string& path, const std::string& what) const;
    // True when `path` was present in the file or set by an override.
    bool present(const std::string& path) const { return lines_.count(path) > 0; }
    // A setting with no effect where it is set: not an error, a warning of the result ("key K (file:line) has no
    // effect with `with`"), kept in the order found. The reader is const to the checks that find them.
    void noEffect(const std::string& path, const std::string& with) const;
    const std::vector<std::string>& warnings() const { return warnings_; }

private:
    std::optional<std::string> overrideFor(const std::string& path) const;
    [[noreturn]] void failLine(int line, const std::string& path, const std::string& what) const;

    std::string source_;
    Missing missing_;
    std::vector<std::string> overrides_;
    std::map<std::string, int> lines_;
    mutable std::vector<std::string> warnings_;
};

// Fails on a quoted scalar whose closing quote is not on the line it opens on: YAML lets a quoted scalar run over
// lines, so a missing closing quote silently swallows the rest of the file (`name: "gpt` and every key after it).
// No value of stepsim's files spans lines, so a quoted one that does is taken for a missing quote. `text` is what
// `root` was parsed from. A file of more than a million values (YAML aliases counted at each use) is refused as well.
void requireQuotesClosedOnTheirLine(const YamlReader& r, const YAML::Node& root, std::string_view text);

// Scalar readers: each checks the node's type and fails with what was expected.
void readValue(YamlReader& r, const YAML::Node& n, const std::string& path, int& out);
void readValue(YamlReader& r, const YAML::Node& n, const std::string& path, long& out);
void readValue(YamlReader& r, const YAML::Node& n, const std::string& path, std::uint64_t& out);
void readValue(YamlReader& r, const YAML::Node& n, const std::string& path, double& out);
void readValue(YamlReader& r, const YAML::Node& n, const std::string& path, bool& out);
void readValue(YamlReader& r, const YAML::Node& n, const std::string& path, std::string& out);

template <class E>
    requires std::is_enum_v<E>
void readValue(YamlReader& r, const YAML::Node& n, const std::string& path, E& out) {
    std::string text;
    if (n.IsScalar()) text = n.Scalar();
    auto e = n.IsScalar() ? enumFromString<E>(text) : std::nullopt;
    if (!e) r.failAt(n, path, "expected one of " + allowedNames<E>() + ", got " + describeNode(n));
    out = *e;
}

template <class T>
void readValue(YamlReader& r, const YAML::Node& n, const std::string& path, std::optional<T>& out) {
    if (n.IsNull()) {
        out.reset();
        return;
    }
    T value{};
    readValue(r, n, path, value);
    out = value;
}

template <std::size_t N>
void readValue(YamlReader& r, const YAML::Node& n, const std::string& path, double (&out)[N]) {
    if (!n.IsSequence() || n.size() != N)
        r.failAt(n, path, fmt::format("expected a list of {} numbers, got {}", N, describeNode(n)));
    for (std::size_t i = 0; i < N; ++i) readValue(r, n[i], fmt::format("{}[{}]", path, i), out[i]);
}

template <class T>
void readValue(YamlReader& r, const YAML::Node& n, const std::string& path, std::vector<T>& out) {
    if (!n.IsSequence()) r.failAt(n, path, "expected a list, got " + describeNode(n));
    out.clear();
    for (std::size_t i = 0; i < n.size(); ++i) {
        T item{};
        readValue(r, n[i], fmt::format("{}[{}]", path, i), item);
        out.push_back(item);
    }
}

// Reads the members of one struct from one YAML mapping; `describe(reader, s)` calls back field()/section().
class YamlMapReader {
public:
    YamlMapReader(YamlReader& r, const YAML::Node& map, std::string path);

    template <class T>
    void field(std::string_view key, T& value) {
        if (auto n = find(key)) readValue(r_, *n, pathOf(key), value);
    }
    // A value whose default is derived from others (`resolved`); the writer marks it with `comment`.
    template <class T>
    void derived(std::string_view key, std::optional<T>& value, const T& /*resolved*/, std::string_view /*comment*/) {
        field(key, value);
    }
    template <class S>
    void section(std::string_view key, S& s) {
        if (auto n = find(key)) readStruct(*n, pathOf(key), s);
    }
    // A key a file may leave out even where every key is required (a profile's derivation, its power limit): the
    // member keeps its default. The writer leaves it out when it holds its default (`is_default`).
    template <class T>
    void optionalField(std::string_view key, T& value, bool /*is_default*/) {
        if (auto n = find(key, /*required=*/false)) readValue(r_, *n, pathOf(key), value);
    }
    template <class S>
    void optionalSection(std::string_view key, S& s, bool /*is_default*/) {
        if (auto n = find(key, /*required=*/false)) readStruct(*n, pathOf(key), s);
    }
    // A list of structs, each a mapping.
    template <class S>
    void sectionList(std::string_view key, std::vector<S>& list) {
        auto n = find(key);
        if (!n) return;
        const std::string path = pathOf(key);
        if (!n->IsSequence()) r_.failAt(*n, path, "expected a list of mappings, got " + describeNode(*n));
        list.clear();
        for (std::size_t i = 0; i < n->size(); ++i) {
            S item{};
            readStruct((*n)[i], fmt::format("{}[{}]", path, i), item);
            list.push_back(std::move(item));
        }
    }
    // A mapping from names (one of `allowed`) to structs.
    template <class S>
    void sectionMap(std::string_view key, std::map<std::string, S>& map, std::span<const std::string_view> allowed) {
        auto n = find(key);
        if (!n) return;
        const std::string path = pathOf(key);
        if (!n->IsMap()) r_.failAt(*n, path, "expected a mapping, got " + describeNode(*n));
        YamlMapReader names(r_, *n, path);
        for (auto name : allowed) {
            if (auto item = names.find(name, /*required=*/false)) {
                S s{};
                readStruct(*item, names.pathOf(name), s);
                map[std::string(name)] = std::move(s);
            }
        }
        names.finish();
        if (map.empty()) r_.failAt(*n, path, "expected at least one entry");
    }

    // Fails on keys that no field()/section() call named, on duplicate keys, then on required keys absent.
    void finish();

    template <class S>
    void readStruct(const YAML::Node& n, const std::string& path, S& s) {
        const bool empty_ok = r_.missing() == YamlReader::Missing::keep_default;
        if (n.IsNull() && empty_ok) return;  // `ddp:` with nothing under it: all defaults
        if (!n.IsMap()) r_.failAt(n, path, "expected a mapping, got " + describeNode(n));
        YamlMapReader child(r_, n, path);
        describe(child, s);
        child.finish();
    }

private:
    // The value under `key` (and marks `key` as known). When absent: nothing; finish() fails on it when the
    // reader requires every key and `required` holds.
    std::optional<YAML::Node> find(std::string_view key, bool required = true);
    std::string pathOf(std::string_view key) const;

    YamlReader& r_;
    YAML::Node map_;
    std::string path_;
    std::vector<std::string> known_;
    std::vector<std::string> missing_;
};

}  // namespace stepsim
