#include "sim/workload/Zero3Schedule.hpp"

#include <algorithm>
#include <limits>
#include <map>

#include <fmt/format.h>

#include "sim/workload/Expand.hpp"
#include "sim/workload/ShardedMemory.hpp"
#include "sim/workload/ZeroSchedule.hpp"

namespace stepsim {

namespace {

constexpr std::size_t npos = std::numeric_limits<std::size_t>::max();

// The module of a parameter: its name without the trailing ".weight" or ".bias".
std::string moduleName(const std::string& param) {
    const auto dot = param.rfind('.');
    return dot == std::string::npos ? param : param.substr(0, dot);
}

bool embedding(const std::string& module) { return module == "wte" || module == "wpe"; }

}  // namespace

Zero3Schedule::Zero3Schedule(const StepContext& c, ProgramBuilder& b)
    : c_(c), b_(b), comm_(c, b), world_(std::max(c.world, 1)), overlap_(zeroOverlapComm(c.sc)) {
    gather_stream_ = overlap_ ? kAllGatherStream : kComputeStream;
    reduce_stream_ = overlap_ ? kReduceStream : kComputeStream;
    std::map<std::string, std::size_t> index;
    module_of_.assign(c.params.size(), npos);
    for (std::size_t i = 0; i < c.params.size(); ++i) {
        const ParamInfo& p = c.params[i];
        total_ += p.numel;
        if (p.numel < c.sc.zero.stage3_param_persistence_threshold) {
            persistent_ += p.numel;
            continue;
        }
        const std::string name = moduleName(p.name);
        auto [it, fresh] = index.emplace(name, modules_.size());
        if (fresh) {
            Module mod;
            mod.name = name;
            mod.layer = p.layer;
            modules_.push_back(std::move(mod));
        }
        modules_[it->second].numel += p.numel;
        module_of_[i] = it->second;
    }
    // The forward's order: the embeddings, the blocks, the rest of the root (the LM head); backward in reverse.
    std::vector<std::size_t> forward;
    for (std::size_t m = 0; m < modules_.size(); ++m)
        if (embedding(modules_[m].name)) forward.push_back(m);
    for (int l = 0; l < c.t.L; ++l)
        for (std::size_t m = 0; m < modules_.size(); ++m)
            if (modules_[m].layer == l) forward.push_back(m);
    for (std::size_t m = 0; m < modules_.size(); ++m)
        if (modules_[m].layer < 0 && !embedding(modules_[m].name)) forward.push_back(m);
    trace_ = forward;
    trace_.insert(trace_.end(), forward.rbegin(), forward.rend());
    for (std::size_t k = 0; k < trace_.size(); ++k) modules_[trace_[k]].uses.push_back(k);
}

std::vector<StreamInfo> Zero3Schedule::streams() const {
    return {{StreamKind::compute, "compute"},
            {StreamKind::comm, "nccl:dp allgather"},
            {StreamKind::comm, "nccl:dp reduce_and_partition"}};
}

std::vector<ProcessGroup> Zero3Schedule::groups() const {
    ProcessGroup dp{"dp", {}};
    for (int r = 0; r < world_; ++r) dp.ranks.push_back(r);
    return {dp};
}

void Zero3Schedule::beginStep(int) { micro_ = 0; }

void Zero3Schedule::beginBackward(bool last) {
    ++micro_;
    last_ = last;
}

// Whether module m is used again, walking the trace from position `from`, before zero.stage3_max_reuse_distance
// elements of the modules in between have been traversed (__params_to_release).
bool Zero3Schedule::reusedWithin(std::size_t m, std::size_t from) const {
    double traversed = 0;
    for (std::size_t k = from; k < trace_.size(); ++k) {
        if (traversed >= c_.sc.zero.stage3_max_reuse_distance) return false;
        if (trace_[k] == m) return true;
        traversed += modules_[trace_[k]].numel;
    }
    return false;
}

double Zero3Schedule::keptNumel() const {
    double kept = 0;
    for (std::size_t m = 0; m < modules_.size(); ++m)
        if (reusedWithin(m, modules_[m].uses.front() + 1)) kept += modules_[m].numel;
    return kept;
}

void Zero3Schedule::fetch(std::size_t m) {
    while (pos_ < trace_.size() && trace_[pos_] != m) ++pos_;
    Module& mod = modules_[m];
    const double N = double(world_);
    auto gather = [&](const std::vector<std::size_t>& list) {
        double numel = 0;
        std::string name = modules_[list.front()].name;
        for (std::size_t k : list) numel += modules_[k].numel;
        if (list.size() > 1) {
            name += fmt::format(" +{} prefetched", list.size() - 1);
            comm_.kernel(name + " zero3 allgather_coalesced copy-in", 2 * c_.pe * numel / N, MemKind::elementwise,
                         gather_stream_);
        }
        const std::uint32_t ev =
            world_ > 1 ? comm_.collective(name + " zero3 all_gather", CollectiveKind::all_gather, c_.pe * numel,
                                          c_.sc.training.param_dtype, gather_stream_)
                       : b_.record(gather_stream_);
        for (std::size_t k : list) {
            modules_[k].in_flight = ev;
            modules_[k].coalesced = list.size() > 1;
        }
    };
    if (!mod.gathered && !mod.in_flight) gather({m});
    else if (mod.in_flight) in_flight_ -= mod.numel;  // a prefetched module reaches its use
    if (mod.in_flight) {
        b_.wait(kComputeStream, *mod.in_flight);
        mod.in_flight.reset();
        if (mod.coalesced)
            comm_.kernel(mod.name + " zero3 copy-out of the gathered buffer", 2 * c_.pe * mod.numel,
                         MemKind::elementwise, kComputeStream);
    }
    mod.gathered = true;
    // The prefetch: on along the trace while the elements in flight stay below the prefetch bucket.
    queue_ = std::max(queue_, pos_ + 1);
    std::vector<std::size_t> ahead;
    while (queue_ < trace_.size() && in_flight_ < c_.sc.zero.stage3_prefetch_bucket_size) {
        const std::size_t k = trace_[queue_++];
        Module& q = modules_[k];
        if (q.gathered || q.in_flight || std::find(ahead.begin(), ahead.end(), k) != ahead.end()) continue;
        ahead.push_back(k);
        in_flight_ += q.numel;
    }
    if (!ahead.empty()) gather(ahead);
    ++pos_;
}

void Zero3Schedule::release(std::size_t m) {
    if (!reusedWithin(m, pos_)) modules_[m].gathered = false;
}

void Zero3Schedule::useLayer(int layer, bool forward) {
    std::vector<std::size_t> mods;
    for (std::size_t m = 0; m < modules_.size(); ++m)
        if (modules_[m].layer == layer && (layer >= 0 || !embedding(modules_[m].name))) mods.push_back(m);
    if (!forward) std::reverse(mods.begin(), mods.end());
    for (std::size_t m : mods) fetch(m);
}

void Zero3Schedule::releaseLayer(int layer) {
    for (std::size_t m = 0; m < modules_.size(); ++m)
        if (modules_[m].layer == layer && (layer >= 0 || !embedding(modules_[m].name))) release(m);
}

void Zero3Schedule::beforeForward() {
    pos_ = queue_ = 0;
    in_flight_ = 0;
    // The partitions the optimizer step wrote are gathered after it.
    if (gather_stream_ != kComputeStream) b_.wait(gather_stream_, b_.record(kComputeStream));
    for (std::size_t m = 0; m < modules_.size(); ++m)
        if (embedding(modules_[m].name)) fetch(m);
}

void Zero3Schedule::beforeLayerForward(int l) {
    if (l == 0)
        for (std::size_t m = 0; m < modules_.size(); ++m)
            if (embedding(modules_[m].name)) release(m);
    useLayer(l, true);
}

void Zero3Schedule::afterLayerForward(int l) {
    releaseLayer(l);
    if (l == c_.t.L - 1) useLayer(-1, true);  // the LM head's pre-forward
}

void Zero3Schedule::afterForward() { releaseLayer(-1); }

void Zero3Schedule::beforeHeadBackward() { useLayer(-1, false); }

void Zero3Schedule::beforeLayerBackward(int l) {
    if (l == c_.t.L - 1) releaseLayer(-1);
    useLayer(l, false);
}

void Zero3Schedule::afterLayerBackward(int l) {
    releaseLayer(l);
    if (l == 0)
        for (std::size_t m = modules_.size(); m-- > 0;)
            if (embedding(modules_[m].name)) fetch(m);
}

void Zero3Schedule::gradReady(std::size_t i) {
    const double n = c_.params[i].numel;
    if (bucket_elems_ > 0 && bucket_elems_ + n > c_.sc.zero.reduce_bucket_size) reduceBucket();
    if (reduce_stream_ != kComputeStream) b_.wait(reduce_stream_, b_.record(kComputeStream));
    comm_.kernel(c_.params[i].name + " zero3 copy grad to ipg bucket", 2 * c_.pe * n, MemKind::elementwise,
                 reduce_stream_);
    bucket_elems_ += n;
}

void Zero3Schedule::reduceBucket() {
    const double bytes = c_.pe * bucket_elems_, N = double(world_);
    const std::string name = fmt::format("zero3 ipg bucket {}", bucket_index_++);
    comm_.kernel(name + " interleave partitions", 2 * bytes, MemKind::elementwise, reduce_stream_);
    comm_.kernel(name + " div", 2 * bytes, MemKind::elementwise, reduce_stream_);
    if (world_ > 1)
        comm_.collective(name + " reduce_scatter", CollectiveKind::reduce_scatter, bytes, c_.sc.training.param_dtype,
                         reduce_stream_);
    comm_.kernel(name + " copy shard to fp32 partition", (micro_ > 1 ? 3 : 2) * bytes / N, MemKind::elementwise,
                 reduce_stream_);
    bucket_elems_ = 0;
}

void Zero3Schedule::endBackward() {
    b_.phase = Phase::backward;
    for (std::size_t m = 0; m < modules_.size(); ++m)
        if (embedding(modules_[m].name)) release(m);
    if (bucket_elems_ > 0) reduceBucket();
    if (reduce_stream_ != kComputeStream) b_.wait(kComputeStream, b_.record(reduce_stream_));
    if (!last_) return;
    b_.phase = Phase::optimizer;
    comm_.kernel("zero3 grad partition norm", 4 * total_ / world_, MemKind::elementwise, kComputeStream);
    if (world_ > 1)
        comm_.collective("zero3 grad norm all_reduce", CollectiveKind::all_reduce, 4, DType::fp32, kComputeStream);
    b_.phase = Phase::backward;
}

void Zero3Schedule::afterOptimizer() {
    b_.phase = Phase::optimizer;
    comm_.kernel("zero3 fp32 partition to params", 2 * c_.pe * total_ / world_, MemKind::elementwise, kComputeStream);
    if (world_ > 1 && persistent_ > 0)
        comm_.collective("zero3 persistent params all_gather", CollectiveKind::all_gather, c_.pe * persistent_,
                         c_.sc.training.param_dtype, kComputeStream);
}

void Zero3Schedule::report(Expansion& out) const {
    double largest = 0;
    for (int l = 0; l < c_.t.L; ++l) {
        double n = 0;
        for (const Module& m : modules_)
            if (m.layer == l) n += m.numel;
        largest = std::max(largest, n);
    }
    double head = 0;
    for (const Module& m : modules_)
        if (m.layer < 0) head = std::max(head, m.numel);
    out.memory = estimateZero3Memory(c_, {persistent_, keptNumel(), std::max(largest, head)});
}

}  // namespace stepsim
