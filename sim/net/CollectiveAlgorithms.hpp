#pragma once
// The data phase of a collective as flows on the fabric: which GPU sends how many bytes to which. Every flow of
// one collective is bounded so that, alone on the fabric, all of them end together at
//     t_bw = S·F / busbw        (S the message size, F nccl-tests' bus factor, busbw what the cost model gives),
// i.e. cap = flow bytes / t_bw. So a collective alone reproduces t = α + S·F/busbw exactly (as long as no link
// of its own routes is slower than its caps, which each function below checks against the HGX figures), and one
// that shares NVLink, PCIe, NIC, leaf or spine links with other traffic slows down through the max-min flow
// network (FlowNetwork.hpp). The collective ends when its last flow ends.
//
// Rails (NCCL's PXN / rail-aligned rings and trees, src/graph/search.cc, src/transport/net.cc): NCCL runs one
// channel per NIC and keeps each channel's inter-node hop on one rail (same NIC index on both sides). A hop of
// the algorithm from node A to node B is therefore split over the rails: GPU with local index j on A → GPU j
// on B, for every j whose GPUs on A and B are both in the group, bytes/rails each. If no such pair exists
// (e.g. group {0, 9}), the hop stays one flow src → dst (crossing rails through the spine).
//
// Channel counts stay implicit: a channel is a slice of the bytes; the flows carry the union of all channels
// on each hop (one flow per GPU pair), which is the same load per link.
#include <string>
#include <vector>

#include "sim/net/Fabric.hpp"
#include "sim/base/Program.hpp"

namespace stepsim {

struct FlowSpec {
    int src = 0, dst = 0;   // global GPU ranks; the engine routes src → dst on the fabric
    double bytes = 0.0;
    double cap_Bps = 0.0;   // private bound of the flow
};

// Dispatch on what the cost model chose. `algo` ∈ {"Ring", "Tree", "NVLS", "Hierarchical", "P2P"} (anything else,
// and a fitted "auto", is laid out by the op's natural pattern: ring for all_reduce / all_gather /
// reduce_scatter, chain for broadcast, all-pairs for alltoall, one hop for sendrecv); `busbw_Bps` and `factor`
// as in CollectiveEstimate. Returns no flows for a one-rank group, zero bytes or zero bandwidth.
std::vector<FlowSpec> collectiveFlows(CollectiveKind kind, const std::string& algo, const std::vector<int>& ranks,
                                      const Fabric& fabric, double bytes, double busbw_Bps, double factor);

// Each function takes `seconds` = t_bw and bounds every flow by bytes / seconds.

// Ring (NCCL ring all_reduce / all_gather / reduce_scatter, src/device/all_reduce.h; nccl-tests' busbw):
// rank i sends `per_rank_bytes` (= S·F) to rank i+1 (mod n). A hop inside a node is one flow; a hop between
// nodes is split over the rails (above). With `closed` = false the last hop is left out: a chain (broadcast).
std::vector<FlowSpec> ringFlows(const std::vector<int>& ranks, const Fabric& fabric, double per_rank_bytes,
                                double seconds, bool closed = true);

// Broadcast (NCCL ring broadcast: a pipelined chain from the root, src/device/broadcast.h): ranks[0] is the
// root; ranks[i] → ranks[i+1] carries S for i < n−1, node crossings split over rails. F = 1.
std::vector<FlowSpec> broadcastFlows(const std::vector<int>& ranks, const Fabric& fabric, double bytes,
                                     double seconds);

// Double binary tree (NCCL Tree all_reduce; src/graph/trees.cc ncclGetBtree / ncclGetDtree; Sanders, Speck &
// Träff 2009): inside each node the group's GPUs form a chain local[0] – local[1] – … (reduce up the chain,
// broadcast down it), local[0] being the node's head; across nodes two binary trees over the node indices
// (tree 0 = ncclGetBtree, tree 1 its mirror for an even node count and its shift by one for an odd count),
// each carrying half the data. Flows, all concurrent (NCCL pipelines reduce and broadcast chunk by chunk):
//   chain edge local[i] ↔ local[i+1]: S each way (S/2 reduce + S/2 broadcast per tree, two trees);
//   tree edge child node ↔ parent node, per tree: S/2 each way (reduce up, broadcast down), split over rails.
std::vector<FlowSpec> treeFlows(const std::vector<int>& ranks, const Fabric& fabric, double bytes, double seconds);

// NVLS (NVLink SHARP all_reduce on one NVSwitch node, src/device/all_reduce.h runTreeSplit/NVLS): GPU j owns
// shard j (S/n); the switch reads all n GPUs' copies of each shard (multimem.ld_reduce: S/n from every GPU per
// shard, S from each GPU in all), reduces in the switch and returns shard j to GPU j (S/n), then GPU j's
// multimem.st sends its reduced shard once (S/n) and the switch multicasts it to every GPU (S into each GPU).
// Per GPU: S·(n+1)/n up to the switch and S·(n+1)/n down from it. The switch is not a rank of the flow network,
// so the pattern is laid out as GPU i → GPU i+1 (mod n) with S·(n+1)/n bytes: the same load on every GPU's
// uplink and downlink, the one place NVLS's traffic can meet other traffic.
std::vector<FlowSpec> nvlsFlows(const std::vector<int>& ranks, double bytes, double seconds);

// Hierarchical all_reduce (intra-node reduce-scatter, inter-node all-reduce of each shard over its rail,
// intra-node all-gather; Jia et al. 2018 "hierarchical all-reduce", the HSDP pattern), pipelined: per node of
// G group GPUs, every intra-node ring hop carries 2·S·(G−1)/G (reduce-scatter plus all-gather); per rail j (the
// GPUs with local index j on each of the M nodes) a ring over the nodes carries 2·(S/G)·(M−1)/M per hop. All
// flows are concurrent (chunk pipelining). Needs the same local indices on every node; otherwise (or on one
// node) it is a ring of all ranks.
std::vector<FlowSpec> hierarchicalFlows(const std::vector<int>& ranks, const Fabric& fabric, double bytes,
                                        double seconds);

// Point-to-point transfers between nodes use PXN (NCCL_P2P_PXN_LEVEL's default, src/graph/paths.cc): a → b with
// b on another node and another local index is laid out as a → p over NVLink and p → b over b's rail, p being
// the GPU of a's node with b's local index; two concurrent flows of the same bytes (chunk pipelining).

// All-to-all (NCCL grouped send/recv; nccl-tests alltoall: S is each rank's whole send buffer): every rank sends
// S/n to every other rank, n·(n−1) transfers (PXN across nodes).
std::vector<FlowSpec> allToAllFlows(const std::vector<int>& ranks, const Fabric& fabric, double bytes,
                                    double seconds);

// Send/recv: a two-rank group is one transfer ranks[0] → ranks[1] of S (a pipeline stage boundary); a larger group
// is nccl-tests' sendrecv, every rank sending S to its successor (mod n). PXN across nodes.
std::vector<FlowSpec> sendRecvFlows(const std::vector<int>& ranks, const Fabric& fabric, double bytes,
                                    double seconds);

}  // namespace stepsim
