#pragma once
// A command-line number within [lo, hi]. CLI11's Range and PositiveNumber let NaN through (every comparison with it
// is false): this one refuses it, and what is not a number.
#include <cstddef>
#include <string>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

namespace stepsim {

inline CLI::Validator numberRange(double lo, double hi) {
    return CLI::Validator(
        [lo, hi](std::string& text) -> std::string {
            double v = 0;
            try {
                std::size_t used = 0;
                v = std::stod(text, &used);
                if (used != text.size()) return fmt::format("expected a number, got '{}'", text);
            } catch (const std::exception&) {
                return fmt::format("expected a number, got '{}'", text);
            }
            if (!(v >= lo && v <= hi)) return fmt::format("expected a number from {} to {}, got {}", lo, hi, text);
            return "";
        },
        fmt::format("in [{} - {}]", lo, hi));
}

}  // namespace stepsim
