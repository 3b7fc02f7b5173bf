#pragma once
// libFuzzer targets' shared contract: a reader given any bytes either reads them or throws stepsim::InputError (a
// located error, exit status 2). Any other exception, a crash, a hang or a sanitizer report is a finding: the
// target lets it escape, and libFuzzer stops on it with the input.
#include <cstddef>
#include <cstdint>
#include <string>

#include "sim/base/InputError.hpp"

namespace stepsim::fuzz {

inline std::string text(const std::uint8_t* data, std::size_t size) {
    return std::string(reinterpret_cast<const char*>(data), size);
}

// Runs `read`; an InputError is an answer, anything else escapes.
template <class F>
void expectReadOrInputError(F&& read) {
    try {
        read();
    } catch (const InputError&) {
    }
}

}  // namespace stepsim::fuzz
