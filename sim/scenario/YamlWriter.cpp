#include "sim/scenario/YamlWriter.hpp"

#include <cstdlib>

#include <yaml-cpp/yaml.h>

namespace stepsim {

std::string formatValue(int v) { return fmt::format("{}", v); }
std::string formatValue(long v) { return fmt::format("{}", v); }
std::string formatValue(std::uint64_t v) { return fmt::format("{}", v); }
// fmt's "{}" is the shortest text that reads back to the same double (Ryu-style round trip).
std::string formatValue(double v) { return fmt::format("{}", v); }
std::string formatValue(bool v) { return v ? "true" : "false"; }

std::string formatValue(const std::string& v) {
    // A string that YAML (or our readers) would take for a number, boolean or null is quoted too.
    bool looks_typed = v.empty() || v == "null" || v == "~" || v == "true" || v == "false" || v == "True" ||
                       v == "False" || v == "TRUE" || v == "FALSE";
    if (!looks_typed) {
        char* end = nullptr;
        std::strtod(v.c_str(), &end);
        looks_typed = end == v.c_str() + v.size();
    }
    YAML::Emitter e;
    if (looks_typed) e << YAML::DoubleQuoted;
    e << v;
    return e.c_str();
}

}  // namespace stepsim
