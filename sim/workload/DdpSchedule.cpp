#include "sim/workload/DdpSchedule.hpp"

#include <algorithm>
#include <limits>
#include <utility>

#include <fmt/format.h>

#include "sim/base/InputError.hpp"
#include "sim/workload/Expand.hpp"
#include "sim/workload/PowerSgdHook.hpp"
#include "sim/workload/QuantizedAllReduce.hpp"

namespace stepsim {

namespace {
constexpr double kMiB = 1024.0 * 1024.0;
}  // namespace

DdpSchedule::DdpSchedule(const StepContext& c, ProgramBuilder& b, std::vector<std::size_t> ready_order)
    : c_(c),
      b_(b),
      order_(std::move(ready_order)),
      grad_dtype_(c.sc.training.param_dtype == DType::fp32 ? "fp32" : "bf16"),
      compress_(c.sc.ddp.comm_hook == CommHook::fp16_compress || c.sc.ddp.comm_hook == CommHook::bf16_compress),
      defer_(c.sc.compile.enabled && c.sc.compile.optimize_ddp == DdpCompileStrategy::no_optimization),
      traced_(c.sc.compile.enabled && c.sc.compile.optimize_ddp == DdpCompileStrategy::python_reducer),
      find_unused_(c.sc.ddp.find_unused_parameters && !c.sc.ddp.static_graph) {
    const LaunchRates& launch = c.cost.profile().launch;
    // One eager op: the reducer's per-parameter copy back; a bucket's all-reduce costs what issuing one through
    // torch.distributed's NCCL process group does (events, work object, NCCL group).
    eager_s_ = launch.eager_host.median_us * 1e-6;
    nccl_s_ = launch.nccl_host.median_us * 1e-6;
    hook_s_ = traced_ ? 0.0 : launch.ddp_hook_host_us * 1e-6;
    std::vector<GradParam> ready;
    for (std::size_t i : order_) ready.push_back({c.params[i].name, c.params[i].numel * c.pe, grad_dtype_});
    rebuilt_ = assignBuckets(ready, c.sc.ddp.first_bucket_mb * kMiB, c.sc.ddp.bucket_cap_mb * kMiB);
    if (find_unused_) {
        // Made in registration order with the size limits, the list reversed; indices turned into ready positions.
        std::vector<std::size_t> position(c.params.size(), 0);
        for (std::size_t k = 0; k < order_.size(); ++k) position[order_[k]] = k;
        std::vector<std::size_t> by_index = order_;
        std::sort(by_index.begin(), by_index.end());
        std::vector<GradParam> registered;
        for (std::size_t i : by_index) registered.push_back({c.params[i].name, c.params[i].numel * c.pe, grad_dtype_});
        initial_ = assignBuckets(registered, c.sc.ddp.first_bucket_mb * kMiB, c.sc.ddp.bucket_cap_mb * kMiB);
        std::reverse(initial_.begin(), initial_.end());
        for (Bucket& bk : initial_)
            for (std::size_t& i : bk.params) i = position[by_index[i]];
        walk_s_ = launch.ddp_find_unused_host_us * 1e-6 * double(order_.size());
    } else {
        // Before the rebuild (first step) DDP reduces everything in one bucket.
        initial_ =
            assignBuckets(ready, std::numeric_limits<double>::infinity(), std::numeric_limits<double>::infinity());
    }
    const int dup = c.sc.ddp.duplicate_gradients;
    if (dup > int(order_.size()))
        throw inputError(c.sc.source, 0, "ddp.duplicate_gradients",
                         fmt::format("expected at most the model's {} parameter tensors, got {}", order_.size(), dup));
    duplicate_.assign(c.params.size(), false);
    for (int k = 0; k < dup; ++k) duplicate_[order_[std::size_t(k)]] = true;
}

std::vector<StreamInfo> DdpSchedule::streams() const {
    return {{StreamKind::compute, "compute"}, {StreamKind::comm, "nccl:dp"}};
}

std::vector<ProcessGroup> DdpSchedule::groups() const {
    ProcessGroup dp{"dp", {}};
    for (int r = 0; r < c_.world; ++r) dp.ranks.push_back(r);
    return {dp};
}

void DdpSchedule::beginStep(int step) {
    step_ = step;
    buckets_ = step == 0 || find_unused_ ? &initial_ : &rebuilt_;
    bucket_of_.assign(c_.params.size(), 0);
    for (std::size_t k = 0; k < buckets_->size(); ++k)
        for (std::size_t pi : (*buckets_)[k].params) bucket_of_[order_[pi]] = k;
}

void DdpSchedule::beginBackward(bool last) {
    sync_ = c_.world > 1 && last;
    const bool first_static = c_.sc.ddp.static_graph && step_ == 0;
    delayed_ = sync_ && first_static;
    map_launched_ = false;
    if (c_.world > 1 && (find_unused_ || first_static)) {
        // _DDPSink clones the forward's output (the logits) at the end of DDP's forward.
        const Phase was = b_.phase;
        b_.phase = Phase::forward;
        b_.mem("DDPSink clone of the output", 2 * c_.ce * double(c_.t.T) * double(c_.t.V), MemKind::elementwise,
               KernelClass::copy);
        b_.phase = was;
    }
    if (sync_ && find_unused_ && walk_s_ > 0) b_.host("ddp find_unused_parameters: autograd graph walk", walk_s_);
    const std::vector<Bucket>& buckets = *buckets_;
    pending_.assign(buckets.size(), 0);
    for (std::size_t k = 0; k < buckets.size(); ++k) pending_[k] = int(buckets[k].params.size());
    next_bucket_ = 0;
    done_events_.assign(buckets.size(), 0);
}

void DdpSchedule::gradReady(std::size_t i) {
    if (c_.world > 1 && duplicate_[i]) duplicateAllReduce(i);
    if (!sync_) return;
    if (defer_ || delayed_) {
        deferred_.push_back(i);
        return;
    }
    onReady(i);
}

void DdpSchedule::onReady(std::size_t i) {
    // DDP's autograd hook: copy (and divide) the gradient into its bucket, one mul_out per parameter;
    // with gradient_as_bucket_view the gradient is the bucket's view and it is an in-place div_ of the
    // same bytes (H200 traces, PyTorch 2.11: one such kernel per parameter in both, 3.0 ms a step of
    // the 1.4B model). The hook's host cost (calibrated per parameter tensor) includes launching it.
    if (hook_s_ > 0) b_.host("ddp hook", hook_s_);
    b_.mem(c_.params[i].name + " copy to bucket", 2 * c_.pe * c_.params[i].numel, MemKind::elementwise,
           traced_ ? KernelClass::memory : KernelClass::copy);
    b_.last().host_s = 0.0;
    if (--pending_[bucket_of_[i]] > 0) return;
    launchReadyBuckets();
}

// The gradient all-reduced again by a synchronous dist.all_reduce in a gradient hook; the compute stream
// waits for it (ProcessGroupNCCL's work.wait()).
void DdpSchedule::duplicateAllReduce(std::size_t i) {
    const ParamInfo& p = c_.params[i];
    b_.wait(kCommStream, b_.record(kComputeStream));
    b_.collective(p.name + " duplicate all_reduce", CollectiveKind::all_reduce, p.numel * c_.pe, grad_dtype_);
    b_.last().host_s = nccl_s_;
    b_.wait(kComputeStream, b_.record(kCommStream));
}

// all_reduce_local_used_map: one int32 per parameter tensor, copied from pinned host memory on the compute stream
// (non_blocking), then all-reduced on the NCCL stream.
void DdpSchedule::launchUsedMap() {
    const double bytes = 4.0 * double(order_.size());
    const LinkRates& links = c_.cost.profile().links;
    const IoRates& io = c_.cost.profile().io;
    TransferCall t;
    t.kind = TransferKind::h2d;
    t.pinned = true;
    t.bytes = bytes;
    t.cap_Bps = (io.h2d_pinned_gbps > 0 ? io.h2d_pinned_gbps : links.pcie_h2d_gbps) * 1e9;
    t.alpha_s = io.copy_alpha_us * 1e-6;
    b_.transfer("ddp used-parameter map to GPU", t, kComputeStream);
    b_.wait(kCommStream, b_.record(kComputeStream));
    b_.collective("ddp used-parameter map all_reduce", CollectiveKind::all_reduce, bytes, "fp32");  // int32: 4 bytes
    b_.last().host_s = nccl_s_;
    map_event_ = b_.record(kCommStream);
    map_launched_ = true;
}

// Every bucket from the next one on whose gradients are all in, in index order: the NCCL stream waits for the compute
// stream, then (compressed) all-reduces the bucket.
void DdpSchedule::launchReadyBuckets() {
    const std::vector<Bucket>& buckets = *buckets_;
    for (; next_bucket_ < buckets.size() && pending_[next_bucket_] == 0; ++next_bucket_) {
        const Bucket& bk = buckets[next_bucket_];
        const std::string name = fmt::format("bucket {}", next_bucket_);
        double bytes = bk.bytes;
        if (const int bits = quantizedHookBits(c_.sc.ddp.comm_hook); bits > 0) {
            done_events_[next_bucket_] = quantizedAllReduce(b_, c_, name, bytes, bits, eager_s_, nccl_s_);
            continue;
        }
        if (c_.sc.ddp.comm_hook == CommHook::powersgd) {
            std::vector<std::size_t> params;
            for (std::size_t j : bk.params) params.push_back(order_[j]);
            done_events_[next_bucket_] =
                powerSgdAllReduce(b_, c_, name, bytes, params, step_, eager_s_, nccl_s_);
            continue;
        }
        const std::uint32_t ev = b_.record(kComputeStream);
        b_.wait(kCommStream, ev);
        if (compress_) {
            b_.mem(name + " compress", 1.5 * bytes, MemKind::elementwise, KernelClass::copy);
            bytes /= 2;
        }
        b_.collective(name + " all_reduce", CollectiveKind::all_reduce, bytes, compress_ ? "bf16" : grad_dtype_);
        b_.last().host_s = nccl_s_;
        done_events_[next_bucket_] = b_.record(kCommStream);
    }
    if (find_unused_ && next_bucket_ == buckets.size() && !map_launched_) launchUsedMap();
}

void DdpSchedule::endBackward() {
    if (!sync_) return;
    if (delayed_) launchUsedMap();  // static_graph's first step: delay_all_reduce maps first, then the buckets
    for (std::size_t i : deferred_) onReady(i);  // optimize_ddp none, static_graph's first step: after the backward
    deferred_.clear();
    // finalize_backward: wait for each bucket, then copy it back into the gradients, one
    // copy_ per parameter (reducer.cpp's copy_bucket_to_grad, issued from C++: one eager op each).
    const std::vector<Bucket>& buckets = *buckets_;
    b_.phase = Phase::backward;
    for (std::size_t k = 0; k < buckets.size(); ++k) {
        b_.wait(kComputeStream, done_events_[k]);
        if (compress_)
            b_.mem(fmt::format("bucket {} decompress", k), 3 * buckets[k].bytes, MemKind::elementwise,
                   KernelClass::copy);
        if (c_.sc.ddp.gradient_as_bucket_view) continue;
        for (std::size_t j : buckets[k].params) {
            const ParamInfo& pi = c_.params[order_[j]];
            b_.mem(pi.name + " copy to grad", 2 * c_.pe * pi.numel, MemKind::elementwise, KernelClass::copy);
            b_.last().host_s = eager_s_;
        }
    }
    if (map_launched_) b_.wait(kComputeStream, map_event_);  // finalize_backward: local_used_work_->wait()
}

void DdpSchedule::report(Expansion& out) const {
    out.buckets = find_unused_ ? initial_ : rebuilt_;
    if (c_.sc.ddp.comm_hook == CommHook::powersgd && c_.world > 1) {
        std::vector<std::vector<std::size_t>> buckets;
        for (const Bucket& bk : out.buckets) {
            buckets.emplace_back();
            for (std::size_t j : bk.params) buckets.back().push_back(order_[j]);
        }
        const double state = powerSgdStateBytes(c_, buckets);
        out.memory.buckets += state;
        for (MemoryEstimate& phase : out.memory.phases) phase.buckets += state;  // resident in every phase
    }
}

}  // namespace stepsim
