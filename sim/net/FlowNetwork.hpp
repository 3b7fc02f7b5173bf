#pragma once
// Flows sharing links by max-min fairness, recomputed only in the connected component that changed.
//
// The system (SimGrid's LMM with all weights 1; Bertsekas & Gallager, "Data Networks", §6.5.2):
//   links l with capacity C_l, flows f with route R_f ⊆ links and a private bound c_f (the rate one flow can
//   reach alone: for a collective, the calibrated bus bandwidth). Rates r_f are max-min fair:
//     Σ_{f ∋ l} r_f ≤ C_l for every link,  r_f ≤ c_f,
//   and no r_f can grow without shrinking some r_g ≤ r_f.
// Progressive filling computes them: raise every unfrozen flow's rate together; when a link saturates (its
// fair share (C_l − frozen load) / unfrozen count is the smallest) or a flow reaches c_f, freeze those flows
// at that rate; repeat until all are frozen.
//
// Locality: adding, removing or re-bounding a flow can change rates only in its connected component
// (flows joined transitively by shared links), so only that component is refilled, and only flows whose
// rate actually changed are reported in `changed()` for rescheduling (SimGrid's lazy, component-local update).
// A flow's remaining bytes are advanced to `now` only when its rate changes.
// Components are kept between refills: re-bounding a flow whose connected component was collected (from one flow)
// since the last add or remove refills that same component (the same flows in the same order, so the same rates
// bit for bit) without walking and sorting it again; compute kernels starting and ending beside a collective do this
// once per kernel. And re-bounding a flow that sits at its bound on links with spare capacity left before and after
// moves that flow alone, without a refill (setCap; the rates are the refill's, the max-min solution being unique).
// A route may name a link more than once: a flow standing for several identical ones (the symmetry reduction,
// docs/performance.md) loads each link once per member that crosses it.
// Private links: a link that one flow alone crosses (m times) constrains only that flow, m·r ≤ C, a bound of its own.
// Such links are folded into the flow's bound (min C/m over them, the same number the filling would take as that
// link's share) and left out of components, refills and setCap's shortcut, which then walk only the links a flow
// shares: a merged flow of the symmetry reduction names O(GPUs) links, nearly all its own. A link becomes shared when
// a second flow joins it and stays so until it empties; the rates are the max-min rates over every link
// (FlowNetwork.RatesAreTheMaxMinOfEveryLink).
#include <algorithm>
#include <cstdint>
#include <vector>

#include "sim/base/Time.hpp"
#include "sim/base/Link.hpp"

namespace stepsim {

using FlowId = std::uint32_t;

class FlowNetwork {
public:
    explicit FlowNetwork(std::vector<Link> links);

    // Starts a flow of `bytes` along `route` bounded by `cap_Bps`; `owner` is the caller's tag.
    FlowId add(Time now, const Route& route, double bytes, double cap_Bps, std::uint32_t owner);
    // Removes a flow (finished or cancelled) and re-shares its links.
    void remove(Time now, FlowId id);
    // Changes a flow's private bound (e.g. the GPU it runs on became busy with compute).
    void setCap(Time now, FlowId id, double cap_Bps);

    // Flows whose rate changed in the last add/remove/setCap, new flows included: reschedule these.
    const std::vector<FlowId>& changed() const { return changed_; }
    // When the flow will finish at its current rate (Time::max() if its rate is zero).
    Time completion(FlowId id) const;
    double rate(FlowId id) const { return flows_[id].rate; }
    double cap(FlowId id) const { return flows_[id].cap; }
    double remaining(FlowId id) const { return flows_[id].remaining; }
    std::uint32_t owner(FlowId id) const { return flows_[id].owner; }
    const Route& route(FlowId id) const { return flows_[id].route; }
    std::uint32_t version(FlowId id) const { return flows_[id].version; }
    bool active(FlowId id) const { return id < flows_.size() && flows_[id].active; }

    const std::vector<Link>& links() const { return links_; }
    // Sum of the rates of the flows on a link now (bytes/s).
    double load(LinkId l) const;
    std::size_t activeFlows() const { return active_count_; }

private:
    struct Flow {
        Route route;
        Route shared;  // the route's links that other flows cross too (each as often as in the route)
        double private_bound = 0.0;  // min C/m over the links it alone crosses (m times); infinite for none
        double remaining = 0.0;
        double rate = 0.0;
        double cap = 0.0;
        Time last;  // when `remaining` was last advanced
        std::uint32_t owner = 0;
        std::uint32_t version = 0;
        bool active = false;
    };
    // A connected component: its flows and links, each ascending.
    struct Component {
        std::vector<FlowId> flows;
        std::vector<LinkId> links;
    };

    void reshare(Time now, const std::vector<FlowId>& seeds, const std::vector<LinkId>& seed_links);
    void collectComponent(const std::vector<FlowId>& seeds, const std::vector<LinkId>& seed_links);
    // The connected component of one flow, from the kept ones or collected (and kept).
    const Component& componentOf(FlowId f);
    void setRate(Time now, FlowId id, double r);
    // The bound the filling sees: the flow's own, or its private links' if lower.
    double bound(FlowId id) const { return std::min(flows_[id].cap, flows_[id].private_bound); }
    // Splits a new flow's route into its shared links and its private links' bound.
    void split(FlowId id);
    // setCap's shortcut: whether the flow alone moves, to its new bound (and if so its links' spare capacity follows).
    bool capAlone(FlowId id, double cap_Bps);

    std::vector<Link> links_;
    std::vector<std::vector<FlowId>> link_flows_;  // a shared link's flows, once per entry (empty for a private link)
    static constexpr FlowId kShared = ~FlowId{0};
    std::vector<FlowId> link_owner_;          // a non-empty link's only flow, or kShared
    std::vector<std::uint32_t> link_count_;   // the routes' entries on each link (link_flows_ lists a shared link's)
    std::vector<double> capacity_;            // links_[l].capacity_Bps, dense
    std::vector<Flow> flows_;
    std::vector<FlowId> free_;
    std::vector<FlowId> changed_;
    std::size_t active_count_ = 0;

    // Scratch space for one refill, kept to avoid allocating per event.
    std::vector<FlowId> comp_flows_;
    std::vector<LinkId> comp_links_;
    std::vector<std::uint32_t> flow_mark_, link_mark_;
    std::uint32_t mark_ = 0;
    // Connected components collected since the last add/remove (`topology_epoch_` counts those), and each flow's
    // (index + 1 into components_, 0 for none) while components_epoch_ == topology_epoch_.
    std::uint64_t topology_epoch_ = 0, components_epoch_ = 0;
    std::vector<Component> components_;
    std::vector<std::uint32_t> flow_component_;
    std::vector<LinkId> stack_;
    std::vector<double> link_left_;  // after a refill or setCap's shortcut: the spare capacity of the links touched
    std::vector<std::uint32_t> link_unfrozen_;
    std::vector<double> new_rate_;
};

}  // namespace stepsim
