#pragma once
// The message of the InputError that reading `yaml` (with `overrides`) as a runnable scenario throws, or "" when it
// is read; the file is named x.yaml. warningsOf: the warnings of the scenario read (keys with no effect), or the
// error's message alone when it is refused.
#include <string>
#include <vector>

#include "sim/base/InputError.hpp"
#include "sim/scenario/ScenarioLoader.hpp"

namespace stepsim {

inline std::string errorOf(const std::string& yaml, const std::vector<std::string>& overrides = {}) {
    try {
        parseScenario(yaml, "x.yaml", overrides);
    } catch (const InputError& e) {
        return e.what();
    }
    return "";
}

inline std::vector<std::string> warningsOf(const std::string& yaml, const std::vector<std::string>& overrides = {}) {
    try {
        return parseScenario(yaml, "x.yaml", overrides).warnings;
    } catch (const InputError& e) {
        return {std::string("refused: ") + e.what()};
    }
}

}  // namespace stepsim
