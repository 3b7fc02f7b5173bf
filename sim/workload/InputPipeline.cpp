#include "sim/workload/InputPipeline.hpp"

#include <string>

#include <fmt/format.h>

namespace stepsim {

double sampleBytes(const Scenario& sc) {
    return sc.data_loader.sample_bytes ? *sc.data_loader.sample_bytes : double(sc.model.seq_len + 1) * 8.0;
}

InputPipeline::InputPipeline(StepContext& c, ProgramBuilder& b, Program& p) : c_(c), b_(b), p_(p) {
    const DataLoaderSpec& d = c.sc.data_loader;
    modelled_ = d.modelled;
    if (!modelled_) return;
    auto add = [&](std::string name) {
        p_.streams.push_back({StreamKind::copy, std::move(name)});
        return static_cast<std::uint8_t>(p_.streams.size() - 1);
    };
    if (d.pin_memory) h2d_stream_ = add("h2d");
    for (int w = 0; w < d.num_workers; ++w) workers_.push_back(add(fmt::format("loader worker {}", w)));
    if (!workers_.empty()) {
        in_flight_ = long(d.prefetch_factor) * long(workers_.size());
        ready_.assign(std::size_t(total()), 0);
        b_.step = 0;
        for (long k = 0; k < in_flight_ && k < total(); ++k) dispatch(k);
    }
}

long InputPipeline::total() const { return long(c_.sc.sim.steps) * c_.sc.training.grad_accum; }

void InputPipeline::dispatch(long k) {
    const std::uint8_t w = workers_[std::size_t(k % long(workers_.size()))];
    TransferCall t;
    t.kind = TransferKind::loader_work;
    t.seconds = c_.sc.data_loader.batch_cpu_ms * 1e-3;
    b_.transfer("loader: batch", t, w);
    b_.last().host_s = 0;  // the loop's iterator hands the task over (a queue put)
    ready_[std::size_t(k)] = b_.record(w);
}

void InputPipeline::batch(int step, int micro) {
    if (!modelled_) return;
    const DataLoaderSpec& d = c_.sc.data_loader;
    const long k = long(step) * c_.sc.training.grad_accum + micro;
    if (workers_.empty()) {
        if (d.batch_cpu_ms > 0) b_.host("loader: batch (main thread)", d.batch_cpu_ms * 1e-3);
    } else {
        b_.hostSync(ready_[std::size_t(k)]);
        if (k + in_flight_ < total()) dispatch(k + in_flight_);
    }
    const IoRates& io = c_.cost.profile().io;
    const LinkRates& links = c_.cost.profile().links;
    TransferCall t;
    t.kind = TransferKind::h2d;
    t.pinned = d.pin_memory;
    t.bytes = double(c_.sc.training.micro_batch) * sampleBytes(c_.sc);
    const double gbps = d.pin_memory ? (io.h2d_pinned_gbps > 0 ? io.h2d_pinned_gbps : links.pcie_h2d_gbps)
                                     : (io.h2d_pageable_gbps > 0 ? io.h2d_pageable_gbps : links.pcie_pageable_gbps);
    t.cap_Bps = gbps * 1e9;
    t.alpha_s = io.copy_alpha_us * 1e-6;
    t.blocking = !d.pin_memory;
    const std::uint8_t stream = d.pin_memory ? h2d_stream_ : kComputeStream;
    b_.transfer("batch to GPU", t, stream);
    const std::uint32_t done = b_.record(stream);
    if (d.pin_memory)
        b_.wait(kComputeStream, done);
    else
        b_.hostSync(done);
}

}  // namespace stepsim
