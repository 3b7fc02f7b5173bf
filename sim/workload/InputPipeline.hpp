#pragma once
// The input pipeline as torch.utils.data.DataLoader feeds a training loop, modelled when the scenario has a
// `data_loader` section (without one the batch is taken to be on the GPU already, as the validation's training
// script keeps it).
//
// Loading: with num_workers = 0 the main thread spends `batch_cpu_ms` per batch itself (host work before the
// forward). With W workers, batch k is loaded by worker k mod W (a stream of its own holding `batch_cpu_ms` of
// loader work per batch, in order); DataLoader hands a worker the task of batch k when batch k − prefetch_factor·W
// is taken by the loop (the first prefetch_factor·W at the iterator's start), and the loop's `next()` blocks
// until batch k is ready (a host sync on the worker's event).
// The copy of micro_batch × sample_bytes to the GPU (default: the tokens of a sample, seq_len + 1 int64):
//   pin_memory: from pinned memory, non-blocking, on a side stream (`h2d`) the compute stream waits for, as a
//     prefetcher issues it: the host goes on at once;
//   pageable: a plain `.to()`: cudaMemcpyAsync from pageable memory on the compute stream, then a stream
//     synchronization, so the host blocks until the stream drains and the copy ends.
// Copies move at the profile's rates (io.h2d_*_gbps, or links.pcie_* without an io section) as flows on the GPU's
// PCIe route, after the copy's α (io.copy_alpha_us).
#include <cstdint>
#include <vector>

#include "sim/workload/ProgramBuilder.hpp"
#include "sim/workload/StepContext.hpp"

namespace stepsim {

class InputPipeline {
public:
    // Adds its streams to `p` (after the schedule's) when the scenario models a data loader.
    InputPipeline(StepContext& c, ProgramBuilder& b, Program& p);
    bool modelled() const { return modelled_; }
    // The ops that bring micro-batch `micro` of step `step` to the GPU, before its forward.
    void batch(int step, int micro);

private:
    void dispatch(long k);  // hands batch k to its worker
    long total() const;

    StepContext& c_;
    ProgramBuilder& b_;
    Program& p_;
    bool modelled_ = false;
    std::uint8_t h2d_stream_ = 0;
    std::vector<std::uint8_t> workers_;
    std::vector<std::uint32_t> ready_;  // [batch]: its worker's event
    long in_flight_ = 0;                // prefetch_factor · workers
};

// Host bytes of one sample copied to the GPU: data_loader.sample_bytes, or seq_len + 1 int64 tokens.
double sampleBytes(const Scenario& sc);

}  // namespace stepsim
