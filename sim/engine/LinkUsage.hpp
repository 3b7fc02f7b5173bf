#pragma once
// The load on the flow network's links over time, for link-utilization series and heat maps
// (sim/metrics/LinkUtilization.hpp). Asked for by EngineConfig::link_usage; otherwise the engine holds none and
// pays one null check per rate change.
//
// The network's rates are piecewise constant between changes, so a link's load is recorded only when a flow that
// crosses it changes rate, starts or ends: after each change, every link of the changed flows (and of a removed
// flow's route) is sampled once, LinkSample{now, link, Σ rates}, and only if its load moved since its last sample.
#include <vector>

#include "sim/engine/Timeline.hpp"
#include "sim/net/FlowNetwork.hpp"

namespace stepsim {

class LinkUsage {
public:
    LinkUsage(Timeline& tl, const std::vector<Link>& links) : tl_(tl), last_(links.size(), 0.0) { tl.links = links; }

    // After an add, remove or re-bound: the flows whose rate changed, and the route a removed flow left.
    void record(Time now, const FlowNetwork& net, const std::vector<FlowId>& changed, const Route& removed = {}) {
        for (LinkId l : removed) sample(now, net, l);
        for (FlowId f : changed)
            if (net.active(f))
                for (LinkId l : net.route(f)) sample(now, net, l);
    }

private:
    void sample(Time now, const FlowNetwork& net, LinkId l) {
        const double load = net.load(l);
        if (load == last_[l]) return;
        last_[l] = load;
        tl_.link_samples.push_back(LinkSample{now, l, load});
    }

    Timeline& tl_;
    std::vector<double> last_;  // [link]: its last recorded load
};

}  // namespace stepsim
