#include "sim/cost/PowerModel.hpp"

#include <cmath>

namespace stepsim {

double PowerModel::attentionFactor(long head_dim, bool backward, double clock_mhz) const {
    if (!modelled || attention.empty() || clock_mhz <= 0.0) return 1.0;
    const auto exponent = [&](const AttentionClockExponent& a) { return backward ? a.backward : a.forward; };
    double beta = exponent(attention.front());
    if (head_dim >= attention.back().head_dim) {
        beta = exponent(attention.back());
    } else if (head_dim > attention.front().head_dim) {
        std::size_t i = 1;
        while (attention[i].head_dim < head_dim) ++i;
        const AttentionClockExponent &lo = attention[i - 1], &hi = attention[i];
        const double t = double(head_dim - lo.head_dim) / double(hi.head_dim - lo.head_dim);
        beta = exponent(lo) + t * (exponent(hi) - exponent(lo));
    }
    return std::pow(attention_reference_mhz / clock_mhz, beta);
}

}  // namespace stepsim
