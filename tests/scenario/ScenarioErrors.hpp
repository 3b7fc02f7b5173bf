#pragma once
// The message of the InputError that reading `yaml` (with `overrides`) as a runnable scenario throws, or "" when it
// is read; the file is named x.yaml.
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

}  // namespace stepsim
