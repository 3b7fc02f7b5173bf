// What torchtitan's published recipes need of the workload: its selective op checkpointing (TransformerStep,
// MemoryEstimate), its split of layers over uneven pipeline stages (PipelineStage.hpp), activations under tensor and
// sequence parallelism.
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "sim/scenario/ProfileYaml.hpp"
#include "sim/workload/Expand.hpp"
#include "sim/workload/PipelineStage.hpp"
#include "sim/workload/Transformer.hpp"
#include "tests/workload/ExpandScenarios.hpp"

namespace stepsim {
namespace {

Expansion expandOn(const Scenario& sc, const char* profile = "h200-sxm") {
    const HardwareProfile prof = builtinProfile(profile);
    CostModel cost(prof, NcclSpec{}, true);
    return expand(sc, cost);
}

// A Llama-style tiny model: separate q/k/v, SwiGLU, RMSNorm, rotary embeddings, bf16 throughout.
Scenario llama(Checkpointing ac) {
    Scenario sc = tiny(1);
    sc.model.mlp = MlpKind::swiglu;
    sc.model.norm = NormKind::rmsnorm;
    sc.model.qkv = QkvLayout::separate;
    sc.model.position_embedding = PositionEmbedding::rope;
    sc.model.ffn_hidden = 512;
    sc.training.param_dtype = DType::bf16;
    sc.training.activation_checkpointing = ac;
    // Enough tokens that the loss's backward, with every activation alive, is the step's peak.
    sc.model.seq_len = 1024;
    sc.training.micro_batch = 8;
    return sc;
}

int forwardGemms(const Expansion& e, int* attention = nullptr) {
    const Program& p = e.workload.programs[0];
    int gemms = 0;
    for (const Op& op : p.ops) {
        if (op.step != 1 || op.phase != Phase::forward) continue;
        if (op.cls == KernelClass::gemm) ++gemms;
        if (attention && op.cls == KernelClass::attention) ++*attention;
    }
    return gemms;
}

// The op policy saves the odd matmuls' outputs (q, v, gate, down of q, k, v, proj, gate, up, down) and SDPA's: k,
// proj and up come back in backward, the attention does not.
TEST(PublishedRecipes, OpPolicyRecomputesTheEvenMatmulsAndNotAttention) {
    int att_none = 0, att_op = 0;
    const int none = forwardGemms(expandOn(llama(Checkpointing::none)), &att_none);
    const int op = forwardGemms(expandOn(llama(Checkpointing::selective_op)), &att_op);
    const int L = 2;
    EXPECT_EQ(op, none + 3 * L);
    EXPECT_EQ(att_op, att_none);
}

// Its memory: per layer the block's input and SDPA's output (T·h each, bf16 here) and the odd matmuls' outputs
// (q: T·h, v: T·kv·d, gate: T·f, down: T·h), then one layer's full A while it is recomputed.
TEST(PublishedRecipes, OpPolicyKeepsWhatItSaves) {
    const Scenario sc = llama(Checkpointing::selective_op);
    const Expansion op = expandOn(sc), none = expandOn(llama(Checkpointing::none));
    ASSERT_EQ(op.memory.phase, "loss_backward");
    ASSERT_EQ(none.memory.phase, "loss_backward");
    const double T = 8 * 1024, h = 256, f = 512, kvd = 256, c = 2;
    const double saved = c * T * (h + h + h + kvd + f + h);
    const double per_layer = none.memory.activations / 2;
    EXPECT_DOUBLE_EQ(op.memory.activations, 2 * saved + per_layer);
    EXPECT_LT(op.memory.activations, none.memory.activations);
}

// Full checkpointing under sequence parallelism keeps each layer's input as its sequence shard (T/tp rows).
// (Fused q/k/v and learned positions.)
TEST(PublishedRecipes, FullCheckpointingKeepsTheSequenceShard) {
    Scenario sc = llama(Checkpointing::full);
    sc.model.qkv = QkvLayout::fused;
    sc.model.position_embedding = PositionEmbedding::learned;
    sc.cluster.gpus_per_node = 2;
    sc.parallel.tp = 2;
    Scenario sp = sc;
    sp.parallel.sequence_parallel = true;
    const Expansion plain = expandOn(sc), sharded = expandOn(sp);
    // (Under TP every term is at its largest, MemoryEstimate.hpp's estimateMemory: activations are all of them.)
    const double T = 8 * 1024, h = 256, r = 2, L = 2;
    // L layers' inputs and one recomputed layer's two norm inputs, each T/2 rows fewer.
    EXPECT_DOUBLE_EQ(plain.memory.activations - sharded.memory.activations, (L + 2) * r * (T / 2) * h);
}

struct Comm {
    int n = 0;
    double bytes = 0;
};

// Step 1's collectives of rank 0 by kind.
std::map<CollectiveKind, Comm> stepCollectives(const Expansion& e) {
    const Program& p = e.workload.programs[0];
    std::map<CollectiveKind, Comm> out;
    for (const Op& op : p.ops) {
        if (op.step != 1 || op.kind != OpKind::collective) continue;
        const CollectiveCall& call = p.collectives[op.collective];
        ++out[call.kind].n;
        out[call.kind].bytes += call.bytes;
    }
    return out;
}

// Step 1's collectives of rank 0 by name.
std::map<std::string, double> collectiveBytes(const Expansion& e) {
    const Program& p = e.workload.programs[0];
    std::map<std::string, double> out;
    for (const Op& op : p.ops)
        if (op.step == 1 && op.kind == OpKind::collective) out[p.names[op.name]] = p.collectives[op.collective].bytes;
    return out;
}

Scenario llamaTp(bool sp) {
    Scenario sc = llama(Checkpointing::none);
    sc.cluster.gpus_per_node = 2;
    sc.parallel.tp = 2;
    sc.parallel.sequence_parallel = sp;
    return sc;
}

// Llama's variants split over TP ranks issue the fused model's TP collectives: separate q, k and v share one gathered
// input and one reduced input gradient, rotary embeddings and the fp32 loss add none.
TEST(PublishedRecipes, LlamaUnderTensorParallelismIssuesTheFusedModelsCollectives) {
    for (const bool sp : {false, true}) {
        Scenario fused = llamaTp(sp);
        fused.model.qkv = QkvLayout::fused;
        fused.model.position_embedding = PositionEmbedding::learned;
        Scenario llama = llamaTp(sp);
        llama.model.loss_dtype = LossDtype::fp32;
        const auto a = stepCollectives(expandOn(fused)), b = stepCollectives(expandOn(llama));
        ASSERT_EQ(a.size(), b.size());
        for (const auto& [kind, comm] : a) {
            EXPECT_EQ(b.at(kind).n, comm.n);
            EXPECT_DOUBLE_EQ(b.at(kind).bytes, comm.bytes);
        }
    }
}

// FP8 linears under TP with SP (torchao's Float8 TP plans): a column-parallel group's input gathered in FP8 (one byte
// an element) after its amax all-reduce, its other linears casting no input.
TEST(PublishedRecipes, Fp8UnderTensorParallelismGathersTheInputInFp8) {
    Scenario sc = llamaTp(true);
    const Expansion bf16 = expandOn(sc, "h200x2");
    sc.fp8.enabled = true;
    const Expansion fp8 = expandOn(sc, "h200x2");
    const auto a = collectiveBytes(bf16), b = collectiveBytes(fp8);
    const double T = 8 * 1024, h = 256;
    EXPECT_DOUBLE_EQ(a.at("h.0.attn.q input all_gather"), 2 * T * h);
    EXPECT_DOUBLE_EQ(b.at("h.0.attn.q input all_gather"), T * h);
    EXPECT_DOUBLE_EQ(b.at("h.0.mlp.gate input all_gather"), T * h);
    EXPECT_DOUBLE_EQ(b.at("lm_head input all_gather"), a.at("lm_head input all_gather") / 2);
    for (const char* amax : {"h.0.attn.q input amax all_reduce", "h.0.attn.proj input amax all_reduce",
                             "h.0.mlp.gate input amax all_reduce", "h.0.mlp.down input amax all_reduce"})
        EXPECT_EQ(b.count(amax), 1u) << amax;
    const auto ops = stepOps(fp8.workload.programs[0]);
    EXPECT_EQ(ops.count("h.0.attn.q input fp8 abs"), 1u);
    EXPECT_EQ(ops.count("h.0.attn.k input fp8 abs"), 0u);
    EXPECT_EQ(ops.count("h.0.mlp.up input fp8 abs"), 0u);
}

// torch.compile under TP: TP's collectives are traced into the graphs, so sequence parallelism's extra collectives
// split none (FSDP2's still do).
TEST(PublishedRecipes, CompileUnderTensorParallelismSplitsNoGraphAtTpCollectives) {
    Scenario plain = llamaTp(false);
    plain.cluster.gpus_per_node = 4;
    plain.parallel.data = DataParallel::fsdp2;
    plain.compile.enabled = true;
    Scenario sp = plain;
    sp.parallel.sequence_parallel = true;
    const Expansion a = expandOn(plain, "h200x2"), b = expandOn(sp, "h200x2");
    EXPECT_GT(a.compiled_graphs_per_step, 0);
    EXPECT_EQ(a.compiled_graphs_per_step, b.compiled_graphs_per_step);
}

std::vector<int> stageSizes(int layers, int stages, int chunks) {
    ModelSpec m;
    m.layers = layers;
    const TransformerShape t = transformerShape(m, 1);
    std::vector<int> sizes(std::size_t(stages * chunks));
    for (int s = 0; s < stages; ++s) {
        const std::vector<ModelSlice> slices = pipelineSlices(t, s, stages, chunks);
        for (int c = 0; c < chunks; ++c)
            sizes[std::size_t(c * stages + s)] = slices[std::size_t(c)].end - slices[std::size_t(c)].begin;
    }
    return sizes;
}

// torchtitan's split of 126 blocks over 16 virtual stages: 7 on the first (with the embeddings), 8 on the next 14, the
// last (with the head) what is left, 7; over 8 stages 15, six of 16, 15. Divisible counts split evenly.
TEST(PublishedRecipes, UnevenStagesSplitAsTorchtitanSplitsThem) {
    std::vector<int> v16(16, 8);
    v16.front() = v16.back() = 7;
    EXPECT_EQ(stageSizes(126, 8, 2), v16);
    EXPECT_EQ(stageSizes(126, 8, 1), (std::vector<int>{15, 16, 16, 16, 16, 16, 16, 15}));
    EXPECT_EQ(stageSizes(80, 4, 1), (std::vector<int>{20, 20, 20, 20}));
    EXPECT_EQ(stageSizes(10, 4, 1), (std::vector<int>{2, 3, 3, 2}));
}

}  // namespace
}  // namespace stepsim
