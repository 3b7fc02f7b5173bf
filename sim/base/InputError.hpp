#pragma once
// The error for bad user input (scenario, profile, topology, trace files, command-line overrides).
//
// Its message names the file, the line and the key, and says what was expected:
//   "scenarios/x.yaml:12: model.heads: expected a positive integer that divides model.hidden (2048), got 30"
// The CLI prints it and exits non-zero; nothing else catches it.
#include <stdexcept>
#include <string>

#include <fmt/format.h>

namespace stepsim {

class InputError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// "FILE:LINE: KEY: MESSAGE" (line is 1-based; 0 leaves it out, as for a missing file or a --set override).
inline InputError inputError(const std::string& file, int line, const std::string& key, const std::string& what) {
    std::string where = file;
    if (line > 0) where += fmt::format(":{}", line);
    if (!key.empty()) where += fmt::format(": {}", key);
    return InputError(fmt::format("{}: {}", where, what));
}

}  // namespace stepsim
