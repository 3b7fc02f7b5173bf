#include "sim/workload/PipelineStage.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "sim/workload/Fsdp2Schedule.hpp"
#include "sim/workload/OptimizerStep.hpp"
#include "sim/workload/ParallelLayout.hpp"
#include "sim/workload/TransformerStep.hpp"

namespace stepsim {

// The first block of virtual stage k of S over L blocks: k·b + min(e, k − 1) for k ≥ 1, b = ⌊L/S⌋, e = L mod S.
int stageBegin(int k, int virtual_stages, int layers) {
    if (k <= 0) return 0;
    if (k >= virtual_stages) return layers;
    const int base = layers / virtual_stages, extra = layers % virtual_stages;
    return k * base + std::min(extra, k - 1);
}

std::vector<ModelSlice> pipelineSlices(const TransformerShape& t, int stage, int stages, int chunks) {
    std::vector<ModelSlice> out;
    const int virtual_stages = stages * chunks;
    for (int c = 0; c < chunks; ++c) {
        const int k = c * stages + stage;
        ModelSlice s;
        s.begin = stageBegin(k, virtual_stages, t.L);
        s.end = stageBegin(k + 1, virtual_stages, t.L);
        s.embedding = k == 0;
        s.head = k == virtual_stages - 1;
        out.push_back(s);
    }
    return out;
}

std::vector<std::size_t> stageReadyOrder(StepContext& c, const std::vector<ModelSlice>& slices) {
    std::vector<std::size_t> order;
    Program scratch;
    ProgramBuilder b(c, scratch);
    const int out_of_domain = c.out_of_domain;
    for (auto s = slices.rbegin(); s != slices.rend(); ++s)
        TransformerStep(c, b, false, nullptr, *s).backward([&](std::size_t i) { order.push_back(i); });
    c.out_of_domain = out_of_domain;
    return order;
}

PipelineStage::PipelineStage(StepContext& c, const StepContext& shard, ProgramBuilder& b, ParallelSchedule* dp,
                             int stage)
    : c_(c),
      shard_(shard),
      b_(b),
      dp_(dp),
      stage_(stage),
      stages_(c.sc.parallel.pp),
      slices_(pipelineSlices(c.t, stage, c.sc.parallel.pp, c.sc.parallel.pp_virtual_stages)),
      actions_(pipelineActions(c.sc.parallel.pp_schedule, stage, stages_, c.sc.training.grad_accum,
                               c.sc.parallel.pp_virtual_stages)),
      ready_order_(stageReadyOrder(c, slices_)) {}

std::vector<StreamInfo> PipelineStage::streams(std::vector<StreamInfo> s) {
    auto add = [&](StreamKind kind, const char* name) {
        s.push_back({kind, name});
        return std::uint8_t(s.size() - 1);
    };
    if (!dp_) {
        gather_ = add(StreamKind::comm, "nccl:dp all_gather");
        scatter_ = add(StreamKind::comm, "nccl:dp reduce_scatter");
    }
    send_act_ = add(StreamKind::comm, "nccl:pp send act");
    recv_act_ = add(StreamKind::comm, "nccl:pp recv act");
    send_grad_ = add(StreamKind::comm, "nccl:pp send grad");
    recv_grad_ = add(StreamKind::comm, "nccl:pp recv grad");
    return s;
}

void PipelineStage::transfer(const char* what, int micro, int chunk, std::uint8_t stream, int group, bool receive) {
    const double bytes = c_.ce * double(c_.t.Ts) * double(c_.t.h);
    const std::string name = fmt::format("pp {} {} mb {} chunk {}", receive ? "recv" : "send", what, micro, chunk);
    const std::string dtype = c_.cdt == DType::fp16 ? "fp16" : "bf16";
    if (!receive) b_.wait(stream, b_.record(kComputeStream));
    b_.collective(name, CollectiveKind::sendrecv, bytes, dtype, stream, group);
    b_.last().host_s = c_.nccl_s;
    if (receive) b_.wait(kComputeStream, b_.record(stream));
}

void PipelineStage::forward(const PipelineAction& a) {
    b_.phase = Phase::forward;
    if (!dp_ && c_.world > 1 && !waited_[std::size_t(a.chunk)]) {
        b_.wait(kComputeStream, gathered_[std::size_t(a.chunk)]);
        waited_[std::size_t(a.chunk)] = true;
    }
    if (!firstChunk(a.chunk)) transfer("act", a.micro, a.chunk, recv_act_, kActPrev, true);
    TransformerStep(c_, b_, false, nullptr, slices_[std::size_t(a.chunk)]).forward();
    if (!lastChunk(a.chunk)) transfer("act", a.micro, a.chunk, send_act_, kActNext, false);
}

void PipelineStage::backward(const PipelineAction& a) {
    b_.phase = Phase::backward;
    const bool weight_only = a.kind == PipelineAction::backward_weight;
    if (!weight_only && !lastChunk(a.chunk)) transfer("grad", a.micro, a.chunk, recv_grad_, kGradNext, true);
    const BackwardPart part = a.kind == PipelineAction::backward_input    ? BackwardPart::input
                              : a.kind == PipelineAction::backward_weight ? BackwardPart::weight
                                                                          : BackwardPart::whole;
    int& done = backwards_done_[std::size_t(a.chunk)];
    TransformerStep(c_, b_, /*accumulate=*/done > 0, nullptr, slices_[std::size_t(a.chunk)])
        .backward([](std::size_t) {}, part);
    if (part != BackwardPart::input) ++done;
    if (!weight_only && !firstChunk(a.chunk)) transfer("grad", a.micro, a.chunk, send_grad_, kGradPrev, false);
}

// FSDP2: the stage's blocks (and its part of the root) all-gathered at the start of the step, in forward order.
void PipelineStage::fsdpGather() {
    const double g = elementBytes(fsdpGatherDtype(c_.sc));
    b_.wait(gather_, b_.record(kComputeStream));
    gathered_.assign(slices_.size(), 0);
    waited_.assign(slices_.size(), false);
    for (std::size_t k = 0; k < slices_.size(); ++k) {
        const ModelSlice& s = slices_[k];
        auto gather = [&](const std::string& name, double numel) {
            b_.collective(name + " all_gather", CollectiveKind::all_gather, g * numel, g == 4 ? "fp32" : "bf16",
                          gather_, kDpGroup);
            b_.last().host_s = c_.nccl_s;
        };
        double root = 0;
        for (const ParamInfo& p : shard_.params) {
            const bool embedding = p.name.rfind("wte", 0) == 0 || p.name.rfind("wpe", 0) == 0;
            if (p.layer < 0 && (embedding ? s.embedding : s.head)) root += p.numel;
        }
        if (root > 0) gather("root", root);
        for (int l = s.begin; l < s.end; ++l) {
            double n = 0;
            for (const ParamInfo& p : shard_.params)
                if (p.layer == l) n += p.numel;
            gather(fmt::format("h.{}", l), n);
        }
        gathered_[k] = b_.record(gather_);
    }
}

// FSDP2: each block's accumulated gradients reduce-scattered after the stage's last backward; the optimizer waits.
void PipelineStage::fsdpReduce() {
    const double r = elementBytes(fsdpReduceDtype(c_.sc));
    b_.wait(scatter_, b_.record(kComputeStream));
    for (auto s = slices_.rbegin(); s != slices_.rend(); ++s)
        for (int l = s->end - 1; l >= s->begin; --l) {
            double n = 0;
            for (const ParamInfo& p : shard_.params)
                if (p.layer == l) n += p.numel;
            b_.collective(fmt::format("h.{} reduce_scatter", l), CollectiveKind::reduce_scatter, r * n,
                          r == 4 ? "fp32" : "bf16", scatter_, kDpGroup);
            b_.last().host_s = c_.nccl_s;
        }
    double root = 0;
    for (const ParamInfo& p : shard_.params)
        if (p.layer < 0) root += p.numel;
    if (root > 0) {
        b_.collective("root reduce_scatter", CollectiveKind::reduce_scatter, r * root, r == 4 ? "fp32" : "bf16",
                      scatter_, kDpGroup);
        b_.last().host_s = c_.nccl_s;
    }
    b_.wait(kComputeStream, b_.record(scatter_));
}

double PipelineStage::step(int step) {
    b_.step = step;
    if (dp_) dp_->beginStep(step);
    zeroGrad(b_, shard_);
    backwards_done_.assign(slices_.size(), 0);
    if (!dp_ && c_.world > 1) fsdpGather();
    const double flops_before = b_.model_flops;
    for (const PipelineAction& a : actions_) {
        if (a.kind == PipelineAction::forward) forward(a);
        else backward(a);
    }
    const double flops = b_.model_flops - flops_before;
    if (dp_) {
        dp_->beginBackward(true);
        b_.phase = Phase::backward;
        for (std::size_t i : ready_order_) dp_->gradReady(i);
        dp_->endBackward();
    } else if (c_.world > 1) {
        fsdpReduce();
    }
    double params = 0;
    for (const ParamInfo& p : shard_.params) params += p.numel;
    optimizerStep(b_, shard_, dp_ ? params : params / double(std::max(1, c_.world)));
    b_.stepEnd();
    return flops;
}

// Memory of the stage: the parameters, gradients and optimizer state of its own parameters (estimateMemory; under
// FSDP2 p·n/dp sharded, plus the unsharded gradients g·n accumulated over the micro-batches and the gathered
// parameters g·n, resharded only at the end of the step), and the activations of the chunk–micro-batches in flight
// at the schedule's peak (peakInFlight: min(p − s, m) on stage s under 1F1B, m under GPipe) times one chunk's
// (estimateMemory's per-layer A times the chunk's blocks); the loss's tensors on the last stage only.
MemoryEstimate PipelineStage::memory() const {
    const bool fsdp = dp_ == nullptr;
    MemoryEstimate m = estimateMemory(c_, !fsdp && c_.world > 1);
    StepContext chunk = c_;
    chunk.t.L = slices_.front().end - slices_.front().begin;
    m.activations = estimateMemory(chunk, false).activations * peakInFlight(actions_);
    if (!(stage_ == stages_ - 1)) m.loss = 0;
    if (fsdp && c_.world > 1) {
        double n = 0;
        for (const ParamInfo& p : shard_.params) n += p.numel;
        const double N = double(c_.world), p = shard_.pe, g = elementBytes(fsdpGatherDtype(c_.sc));
        m.params = p * n / N;
        m.optimizer = optimizerStatesPerParam(c_.sc.training) * p * n / N;  // the optimizer's states of the shard
        m.grads = p * n / N + g * n;
        m.gathered = g * n;
        m.buckets = 0;
    }
    return m;
}

}  // namespace stepsim
