#pragma once
// Reading an input file whole, and writing an output file, as every reader and command does: errors are InputErrors
// naming the file.
//
// readInputFile: a folder, a file that cannot be opened, or one larger than `limit` bytes (a device such as /dev/zero,
// a file that is not the input asked for) is refused, reading no more than the limit.
// writeOutputFile: the text written and flushed, a failed open or write (a missing folder, a full disk, /dev/full)
// refused; `inputs` are files the command reads, which an output must not overwrite.
#include <cstddef>
#include <filesystem>
#include <fstream>
#include <string>
#include <system_error>
#include <vector>

#include <fmt/format.h>

#include "sim/base/InputError.hpp"

namespace stepsim {

inline constexpr std::size_t kMaxInputBytes = std::size_t(256) << 20;    // 256 MiB
inline constexpr std::size_t kMaxScenarioBytes = std::size_t(16) << 20;   // scenarios, profiles, topologies, sweeps
inline constexpr std::size_t kMaxTraceBytes = std::size_t(256) << 20;     // a profiler trace, uncompressed

inline std::string readInputFile(const std::filesystem::path& file, const char* what,
                                 std::size_t limit = kMaxInputBytes) {
    std::error_code ec;
    if (std::filesystem::is_directory(file, ec)) throw inputError(file.string(), 0, "", fmt::format("is a folder: expected {}", what));
    std::ifstream in(file, std::ios::binary);
    if (!in) throw inputError(file.string(), 0, "", fmt::format("cannot open {} (does it exist?)", what));
    std::string text;
    std::vector<char> buf(1 << 16);
    while (in) {
        in.read(buf.data(), std::streamsize(buf.size()));
        text.append(buf.data(), std::size_t(in.gcount()));
        if (text.size() > limit)
            throw inputError(file.string(), 0, "",
                             fmt::format("larger than {} MiB: expected {} (is it the file meant?)", limit >> 20, what));
    }
    if (in.bad()) throw inputError(file.string(), 0, "", fmt::format("cannot read {}", what));
    return text;
}

// Refuses `output` when it is one of `inputs` (the same file, by whatever path).
inline void requireNotAnInput(const std::filesystem::path& output, const std::vector<std::filesystem::path>& inputs) {
    std::error_code ec;
    for (const auto& in : inputs)
        if (std::filesystem::equivalent(output, in, ec))
            throw inputError(output.string(), 0, "", "is an input of this command: an output would overwrite it");
}

inline void writeOutputFile(const std::filesystem::path& file, const std::string& text,
                            const std::vector<std::filesystem::path>& inputs = {}) {
    requireNotAnInput(file, inputs);
    std::ofstream os(file, std::ios::binary | std::ios::trunc);
    if (!os) throw inputError(file.string(), 0, "", "cannot open this file for writing");
    os << text;
    os.flush();
    if (!os) throw inputError(file.string(), 0, "", "cannot write this file (is the disk full?)");
}

}  // namespace stepsim
