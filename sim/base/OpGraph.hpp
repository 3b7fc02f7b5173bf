#pragma once
// One training step captured as an op graph (model.type: ops; the file format: docs/ops-format.md; the model:
// docs/ops.md): the plain data the reader (sim/scenario/OpsImport.hpp) fills, with every scaled dimension already
// evaluated at the scenario's micro-batch and sequence length, and the step's expansion into Programs
// (sim/workload/OpsSchedule.hpp) reads. Sizes are elements and bytes; times microseconds.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "sim/base/Program.hpp"

namespace stepsim {

// A tensor argument or result of an op: its storage, shape, strides (elements), dtype (torch's name) and offset.
struct OpTensorRef {
    int t = -1;
    std::vector<long long> shape, stride;
    std::string dtype;
    long long offset = 0;

    long long numel() const {
        long long n = 1;
        for (long long d : shape) n *= d;
        return n;
    }
};

// One tensor argument: a tensor (`list` false, one item) or a list of tensors (the _foreach_* ops' TensorList).
struct OpTensorArg {
    bool list = false;
    std::vector<OpTensorRef> items;
};

// A non-tensor argument: null, a bool, a number, a string or a list of numbers.
struct OpScalarArg {
    enum class Kind : std::uint8_t { null, boolean, number, string, list } kind = Kind::null;
    double number = 0.0;  // boolean: 0 or 1
    std::string text;
    std::vector<double> list;
};

// `buffer`: a module buffer (resident, as parameters are); `other`: any other storage the capture saw.
enum class OpTensorKind : std::uint8_t { param, grad, optimizer_state, activation, temp, input, buffer, other };

struct OpModule {
    std::string path, cls;
    int parent = -1;
    int calls = 0;  // times its forward ran in the step (a recomputed forward again; an uncalled container 0)
};

struct OpParam {
    std::string name;
    std::vector<long long> shape;
    std::string dtype;
    int module = -1;
    int tensor = -1;
    int grad_ready_op = -1;  // -1: no gradient in this step
    long long numel() const {
        long long n = 1;
        for (long long d : shape) n *= d;
        return n;
    }
};

struct OpStorage {
    double bytes = 0.0;
    OpTensorKind kind = OpTensorKind::temp;
    bool cpu = false;  // a host tensor (device "cpu": the optimizer's step counts): no GPU memory, no kernel
};

struct OpNode {
    std::string op, overload;  // "aten::addmm", "default"
    Phase phase = Phase::forward;
    int module = -1;  // innermost module, -1: none
    std::vector<OpTensorArg> in, out;
    std::map<int, OpScalarArg> args;  // by position in the op's schema
    bool view = false;
    std::optional<long long> seq_nr;
    int fwd_op = -1;
    bool recompute = false;
    std::vector<int> alloc, free;
};

// A measured op (model.op_times: `stepsim calibrate --ops`): its kernels and device time on the GPU that timed it,
// and its host time there.
struct OpTime {
    bool measured = false;
    int kernels = 0;
    double device_us = 0.0, host_us = 0.0;
};

struct OpGraph {
    std::string file;
    std::string sha256;  // of the file's bytes
    std::string torch, device_name;
    std::string source;  // the model as the capture named it
    double model_parameters = 0.0;
    // How the step was run (docs/ops-format.md, `step`).
    std::string dtype_policy, optimizer, optimizer_impl, loss, activation_checkpointing;
    long long capture_b = 0, capture_s = 0;  // the capture's symbols (S 0: the model has no sequence, a ViT)
    bool scaled = false;
    long long b = 0, s = 0;  // the symbols the dimensions were evaluated at
    std::vector<OpModule> modules;
    std::vector<OpParam> params;
    std::vector<OpStorage> tensors;
    std::vector<OpNode> ops;
    // The scenario names parallel.data: at one GPU, DDP still wraps the model (a one-process group: its reducer's
    // buckets, copies and all-reduces run), as FSDP2 does.
    bool data_parallel_named = false;
    // model.op_times, one per op (empty: none given); its file.
    std::vector<OpTime> times;
    std::string times_file;
};

}  // namespace stepsim
