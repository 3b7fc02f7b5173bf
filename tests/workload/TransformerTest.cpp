// Transformer: the parameters of a GPT/Llama-style decoder, in registration order.
#include "sim/workload/Transformer.hpp"

#include <gtest/gtest.h>

namespace stepsim {
namespace {

// GPT-2 small (124M): 12 layers, hidden 768, vocab 50257, context 1024, no biases in Linear here.
// Parameters: wte 50257·768 + wpe 1024·768 + 12·(2·2·768 + 3·768² + 768² + 2·4·768²) + 2·768 + lm_head 50257·768.
TEST(Transformer, ParameterCountMatchesTheFormula) {
    ModelSpec m;
    m.layers = 12;
    m.hidden = 768;
    m.heads = 12;
    m.vocab = 50257;
    m.seq_len = 1024;
    const TransformerShape t = transformerShape(m, 1);
    double n = 0;
    for (const ParamInfo& p : transformerParams(t)) n += p.numel;
    const double h = 768;
    const double expected = 50257 * h + 1024 * h + 12 * (4 * h + 12 * h * h) + 2 * h + 50257 * h;
    EXPECT_DOUBLE_EQ(n, expected);
}

}  // namespace
}  // namespace stepsim
