#pragma once
// DDP's gradient buckets, assigned exactly as PyTorch does (torch/nn/parallel/distributed.py,
// torch/csrc/distributed/c10d/reducer.cpp: compute_bucket_assignment_by_size, rebuild_buckets).
//
// After the first iteration DDP rebuilds its buckets in the order gradients became ready in backward
// (for a sequential model: reverse registration order). Walking the parameters in that order, each is
// added whole to the open bucket (a parameter is never split); when the bucket's size reaches its limit
// (size ≥ limit, so a bucket may exceed it) the bucket is closed and the next limit applies. The limits
// are [first_bucket_bytes (1 MiB), bucket_cap_bytes (25 MiB), bucket_cap_bytes, ...]. Buckets are reduced
// strictly in index order; parameters of different dtypes never share a bucket.
#include <cstdint>
#include <string>
#include <vector>

namespace stepsim {

struct GradParam {
    std::string name;
    double bytes = 0.0;  // gradient size (numel · element size)
    std::string dtype = "fp32";
};

struct Bucket {
    std::vector<std::size_t> params;  // indices into the input list
    double bytes = 0.0;
};

// `ready_order`: the parameters in the order their gradients become ready.
std::vector<Bucket> assignBuckets(const std::vector<GradParam>& ready_order, double first_bucket_bytes,
                                  double bucket_cap_bytes);

}  // namespace stepsim
