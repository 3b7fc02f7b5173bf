#pragma once
// `stepsim collective`: predicts one NCCL collective over a range of sizes and prints nccl-tests' columns
// (size, count, type, redop, root, time, algbw, busbw), so a prediction can be laid beside a real
// nccl-tests run line by line.
#include <CLI/CLI.hpp>

namespace stepsim {
void addCollectiveCommand(CLI::App& app);
}
