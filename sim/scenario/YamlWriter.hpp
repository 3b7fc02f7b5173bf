#pragma once
// Internal to sim/scenario/: prints a struct as block-style YAML from the same `describe(visitor, s)`
// description that YamlMapReader reads (YamlReader.hpp), so whatever is written reads back.
//
// Numbers are written in their shortest form that reads back to the same value (fmt "{}"), so
// read(write(x)) == x exactly; strings are quoted only where YAML needs it.
#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include <fmt/format.h>

#include "sim/scenario/EnumNames.hpp"

namespace stepsim {

std::string formatValue(int v);
std::string formatValue(long v);
std::string formatValue(std::uint64_t v);
std::string formatValue(double v);
std::string formatValue(bool v);
std::string formatValue(const std::string& v);  // quoted when YAML would read it as something else

template <class E>
    requires std::is_enum_v<E>
std::string formatValue(E e) {
    return std::string(toString(e));
}

template <class T>
std::string formatValue(const std::optional<T>& v) {
    return v ? formatValue(*v) : std::string("null");
}

template <std::size_t N>
std::string formatValue(const double (&v)[N]) {
    std::string out = "[";
    for (std::size_t i = 0; i < N; ++i) out += (i ? ", " : "") + formatValue(v[i]);
    return out + "]";
}

class YamlWriter {
public:
    explicit YamlWriter(int indent = 0) : indent_(indent) {}

    const std::string& text() const { return out_; }

    // A line of its own: "# text".
    void comment(std::string_view text) { out_ += fmt::format("{:{}}# {}\n", "", indent_, text); }

    template <class T>
    void field(std::string_view key, T& value) {
        line(key, formatValue(value), {});
    }
    // A list of values: one "- value" line each ("key: []" when empty).
    template <class T>
    void field(std::string_view key, std::vector<T>& values) {
        if (values.empty()) return line(key, "[]", {});
        out_ += fmt::format("{:{}}{}:\n", "", indent_, key);
        for (auto& v : values) out_ += fmt::format("{:{}}- {}\n", "", indent_ + 2, formatValue(v));
    }
    // A value whose default is derived: written resolved, with `comment` when it equals `resolved`.
    template <class T>
    void derived(std::string_view key, std::optional<T>& value, const T& resolved, std::string_view comment) {
        const T v = value.value_or(resolved);
        line(key, formatValue(v), v == resolved ? comment : std::string_view{});
    }
    // A key the reader lets a file leave out: written unless it holds its default.
    template <class T>
    void optionalField(std::string_view key, T& value, bool is_default) {
        if (!is_default) field(key, value);
    }
    template <class S>
    void optionalSection(std::string_view key, S& s, bool is_default) {
        if (!is_default) section(key, s);
    }
    template <class S>
    void section(std::string_view key, S& s) {
        out_ += fmt::format("{:{}}{}:\n", "", indent_, key);
        YamlWriter child(indent_ + 2);
        describe(child, s);
        out_ += child.text();
    }
    template <class S>
    void sectionList(std::string_view key, std::vector<S>& list) {
        if (list.empty()) return line(key, "[]", {});
        out_ += fmt::format("{:{}}{}:\n", "", indent_, key);
        for (auto& item : list) {
            YamlWriter child(indent_ + 4);
            describe(child, item);
            std::string text = child.text();
            text.replace(static_cast<std::size_t>(indent_ + 2), 2, "- ");
            out_ += text;
        }
    }
    template <class S>
    void sectionMap(std::string_view key, std::map<std::string, S>& map, std::span<const std::string_view>) {
        if (map.empty()) return line(key, "{}", {});
        out_ += fmt::format("{:{}}{}:\n", "", indent_, key);
        for (auto& [name, s] : map) {  // every entry, allowed or not: the reader judges
            YamlWriter child(indent_ + 2);
            child.section(formatValue(name), s);
            out_ += child.text();
        }
    }

private:
    void line(std::string_view key, const std::string& value, std::string_view comment) {
        if (comment.empty())
            out_ += fmt::format("{:{}}{}: {}\n", "", indent_, key, value);
        else
            out_ += fmt::format("{:{}}{}: {:<{}} # {}\n", "", indent_, key, value,
                                std::max<int>(1, 24 - indent_ - static_cast<int>(key.size())), comment);
    }

    int indent_;
    std::string out_;
};

}  // namespace stepsim
