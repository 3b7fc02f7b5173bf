#include "sim/workload/DdpBuckets.hpp"

#include <map>

namespace stepsim {

std::vector<Bucket> assignBuckets(const std::vector<GradParam>& ready_order, double first_bucket_bytes,
                                  double bucket_cap_bytes) {
    struct Open {
        Bucket bucket;
        int limit_index = 0;
    };
    std::vector<Bucket> out;
    std::map<std::string, Open> open;  // one open bucket per dtype
    auto limit = [&](int i) { return i == 0 ? first_bucket_bytes : bucket_cap_bytes; };
    for (std::size_t i = 0; i < ready_order.size(); ++i) {
        Open& o = open[ready_order[i].dtype];
        o.bucket.params.push_back(i);
        o.bucket.bytes += ready_order[i].bytes;
        if (o.bucket.bytes >= limit(o.limit_index)) {
            out.push_back(std::move(o.bucket));
            o.bucket = Bucket{};
            ++o.limit_index;
        }
    }
    for (auto& [dtype, o] : open)
        if (!o.bucket.params.empty()) out.push_back(std::move(o.bucket));
    return out;
}

}  // namespace stepsim
