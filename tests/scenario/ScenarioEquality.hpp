#pragma once
// Test helper: every member of two Scenarios compared one by one (kv_heads and ffn_hidden by their resolved
// values, since `explain` writes them resolved). Written out by hand, so a member the loader forgets to read
// or write shows up as a difference.
#include <gtest/gtest.h>

#include "sim/scenario/ScenarioLoader.hpp"

namespace stepsim {

inline void expectSameScenario(const Scenario& a, const Scenario& b) {
    EXPECT_EQ(a.stepsim, b.stepsim);
    EXPECT_EQ(a.name, b.name);
    EXPECT_EQ(a.source, b.source);
    EXPECT_EQ(a.cluster.node, b.cluster.node);
    EXPECT_EQ(a.cluster.nodes, b.cluster.nodes);
    EXPECT_EQ(a.cluster.gpus_per_node, b.cluster.gpus_per_node);
    EXPECT_EQ(a.cluster.profile, b.cluster.profile);
    EXPECT_EQ(a.cluster.network.fabric, b.cluster.network.fabric);
    EXPECT_EQ(a.cluster.network.nic_gbps, b.cluster.network.nic_gbps);
    EXPECT_EQ(a.cluster.network.nics_per_node, b.cluster.network.nics_per_node);
    EXPECT_EQ(a.cluster.network.oversubscription, b.cluster.network.oversubscription);
    EXPECT_EQ(a.model.type, b.model.type);
    EXPECT_EQ(a.model.trace, b.model.trace);
    EXPECT_EQ(a.model.trace_params, b.model.trace_params);
    EXPECT_EQ(a.model.trace_host, b.model.trace_host);
    EXPECT_EQ(a.model.layers, b.model.layers);
    EXPECT_EQ(a.model.hidden, b.model.hidden);
    EXPECT_EQ(a.model.heads, b.model.heads);
    EXPECT_EQ(kvHeads(a.model), kvHeads(b.model));
    EXPECT_EQ(ffnHidden(a.model), ffnHidden(b.model));
    EXPECT_EQ(a.model.vocab, b.model.vocab);
    EXPECT_EQ(a.model.seq_len, b.model.seq_len);
    EXPECT_EQ(a.model.mlp, b.model.mlp);
    EXPECT_EQ(a.model.norm, b.model.norm);
    EXPECT_EQ(a.model.tied_embeddings, b.model.tied_embeddings);
    EXPECT_EQ(a.model.linear_bias, b.model.linear_bias);
    EXPECT_EQ(a.model.position_embedding, b.model.position_embedding);
    EXPECT_EQ(a.model.qkv, b.model.qkv);
    EXPECT_EQ(a.model.loss_dtype, b.model.loss_dtype);
    EXPECT_EQ(a.model.dropout, b.model.dropout);
    EXPECT_EQ(a.training.micro_batch, b.training.micro_batch);
    EXPECT_EQ(a.training.grad_accum, b.training.grad_accum);
    EXPECT_EQ(a.training.param_dtype, b.training.param_dtype);
    EXPECT_EQ(a.training.compute_dtype, b.training.compute_dtype);
    EXPECT_EQ(a.training.optimizer, b.training.optimizer);
    EXPECT_EQ(a.training.sgd_momentum, b.training.sgd_momentum);
    EXPECT_EQ(a.training.activation_checkpointing, b.training.activation_checkpointing);
    EXPECT_EQ(a.parallel.data, b.parallel.data);
    EXPECT_EQ(a.parallel.tp, b.parallel.tp);
    EXPECT_EQ(a.parallel.pp, b.parallel.pp);
    EXPECT_EQ(a.parallel.pp_schedule, b.parallel.pp_schedule);
    EXPECT_EQ(a.ddp.bucket_cap_mb, b.ddp.bucket_cap_mb);
    EXPECT_EQ(a.ddp.first_bucket_mb, b.ddp.first_bucket_mb);
    EXPECT_EQ(a.ddp.gradient_as_bucket_view, b.ddp.gradient_as_bucket_view);
    EXPECT_EQ(a.ddp.find_unused_parameters, b.ddp.find_unused_parameters);
    EXPECT_EQ(a.ddp.static_graph, b.ddp.static_graph);
    EXPECT_EQ(a.ddp.comm_hook, b.ddp.comm_hook);
    EXPECT_EQ(a.ddp.duplicate_gradients, b.ddp.duplicate_gradients);
    EXPECT_EQ(a.ddp.powersgd_rank, b.ddp.powersgd_rank);
    EXPECT_EQ(a.ddp.powersgd_start_iter, b.ddp.powersgd_start_iter);
    EXPECT_EQ(a.ddp.powersgd_min_compression_rate, b.ddp.powersgd_min_compression_rate);
    EXPECT_EQ(a.ddp.powersgd_error_feedback, b.ddp.powersgd_error_feedback);
    EXPECT_EQ(a.ddp.powersgd_warm_start, b.ddp.powersgd_warm_start);
    EXPECT_EQ(a.fsdp.reshard_after_forward, b.fsdp.reshard_after_forward);
    EXPECT_EQ(a.fsdp.sync_every_micro_batch, b.fsdp.sync_every_micro_batch);
    EXPECT_EQ(a.zero.reduce_bucket_size, b.zero.reduce_bucket_size);
    EXPECT_EQ(a.zero.overlap_comm, b.zero.overlap_comm);
    EXPECT_EQ(a.zero.stage3_prefetch_bucket_size, b.zero.stage3_prefetch_bucket_size);
    EXPECT_EQ(a.zero.stage3_max_reuse_distance, b.zero.stage3_max_reuse_distance);
    EXPECT_EQ(a.zero.stage3_param_persistence_threshold, b.zero.stage3_param_persistence_threshold);
    EXPECT_EQ(a.fsdp.backward_prefetch, b.fsdp.backward_prefetch);
    EXPECT_EQ(a.fsdp.forward_prefetch, b.fsdp.forward_prefetch);
    EXPECT_EQ(a.fsdp.limit_all_gathers, b.fsdp.limit_all_gathers);
    EXPECT_EQ(a.fsdp.param_dtype, b.fsdp.param_dtype);
    EXPECT_EQ(a.fsdp.reduce_dtype, b.fsdp.reduce_dtype);
    EXPECT_EQ(a.compile.enabled, b.compile.enabled);
    EXPECT_EQ(a.compile.fullgraph, b.compile.fullgraph);
    EXPECT_EQ(a.compile.dynamic, b.compile.dynamic);
    EXPECT_EQ(a.compile.mode, b.compile.mode);
    EXPECT_EQ(a.compile.optimize_ddp, b.compile.optimize_ddp);
    EXPECT_EQ(a.compile.loss, b.compile.loss);
    EXPECT_EQ(a.compile.optimizer, b.compile.optimizer);
    EXPECT_EQ(a.compile.graph_breaks, b.compile.graph_breaks);
    EXPECT_EQ(a.compile.comm_fusion_depth, b.compile.comm_fusion_depth);
    EXPECT_EQ(a.compile.async_collectives, b.compile.async_collectives);
    EXPECT_EQ(a.fp8.enabled, b.fp8.enabled);
    EXPECT_EQ(a.fp8.recipe, b.fp8.recipe);
    EXPECT_EQ(a.fp8.fp8_all_gather, b.fp8.fp8_all_gather);
    EXPECT_EQ(a.data_loader.pin_memory, b.data_loader.pin_memory);
    EXPECT_EQ(a.data_loader.num_workers, b.data_loader.num_workers);
    EXPECT_EQ(a.checkpoint.interval_steps, b.checkpoint.interval_steps);
    EXPECT_EQ(a.checkpoint.mode, b.checkpoint.mode);
    EXPECT_EQ(a.nccl.algo, b.nccl.algo);
    EXPECT_EQ(a.nccl.proto, b.nccl.proto);
    EXPECT_EQ(a.nccl.nvls, b.nccl.nvls);
    EXPECT_EQ(a.jitter.enabled, b.jitter.enabled);
    ASSERT_EQ(a.jitter.stragglers.size(), b.jitter.stragglers.size());
    for (std::size_t i = 0; i < a.jitter.stragglers.size(); ++i) {
        EXPECT_EQ(a.jitter.stragglers[i].target, b.jitter.stragglers[i].target);
        EXPECT_EQ(a.jitter.stragglers[i].ranks, b.jitter.stragglers[i].ranks);
        EXPECT_EQ(a.jitter.stragglers[i].random, b.jitter.stragglers[i].random);
        EXPECT_EQ(a.jitter.stragglers[i].factor, b.jitter.stragglers[i].factor);
        EXPECT_EQ(a.jitter.stragglers[i].cv, b.jitter.stragglers[i].cv);
    }
    EXPECT_EQ(a.sim.steps, b.sim.steps);
    EXPECT_EQ(a.sim.seed, b.sim.seed);
    EXPECT_EQ(a.sim.samples, b.sim.samples);
}

}  // namespace stepsim
