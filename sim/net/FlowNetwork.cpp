#include "sim/net/FlowNetwork.hpp"

#include <algorithm>
#include <limits>

namespace stepsim {

namespace {
constexpr double kUnfrozen = -1.0;
// Relative tolerance for "this link saturates at the same level": keeps ties together despite rounding.
constexpr double kTie = 1e-12;
// A link counts as saturated for setCap's shortcut when its spare capacity is at most this share of its capacity.
constexpr double kSlack = 1e-9;
}  // namespace

FlowNetwork::FlowNetwork(std::vector<Link> links)
    : links_(std::move(links)),
      link_flows_(links_.size()),
      link_owner_(links_.size(), kShared),
      link_count_(links_.size(), 0),
      capacity_(links_.size()),
      link_mark_(links_.size(), 0),
      link_left_(links_.size(), 0.0),
      link_unfrozen_(links_.size(), 0) {
    for (std::size_t l = 0; l < links_.size(); ++l) capacity_[l] = links_[l].capacity_Bps;
}

FlowId FlowNetwork::add(Time now, const Route& route, double bytes, double cap_Bps, std::uint32_t owner) {
    FlowId id;
    if (!free_.empty()) {
        id = free_.back();
        free_.pop_back();
    } else {
        id = static_cast<FlowId>(flows_.size());
        flows_.emplace_back();
        flow_mark_.push_back(0);
        flow_component_.push_back(0);
        new_rate_.push_back(0.0);
    }
    Flow& f = flows_[id];
    f.route = route;
    f.remaining = bytes;
    f.rate = 0.0;
    f.cap = cap_Bps;
    f.last = now;
    f.owner = owner;
    f.active = true;
    ++f.version;
    ++active_count_;
    ++topology_epoch_;
    for (LinkId l : route) {
        const std::uint32_t on = link_count_[l]++;
        if (on == 0) {
            link_owner_[l] = id;
        } else if (link_owner_[l] == kShared) {
            link_flows_[l].push_back(id);
        } else if (link_owner_[l] != id) {
            // Another flow's private link, shared from now: it joins that flow's shared links (as often as it names
            // it). Its C/m stays in that flow's private bound, a bound the shared link implies (m·r ≤ C − the
            // others' load ≤ C), so it never binds before the link does.
            Flow& g = flows_[link_owner_[l]];
            g.shared.insert(g.shared.end(), on, l);
            link_flows_[l].assign(on, link_owner_[l]);
            link_flows_[l].push_back(id);
            link_owner_[l] = kShared;
        }
    }
    split(id);
    reshare(now, {id}, {});
    // A new flow is always reported, even if its first rate happens to be 0.
    if (std::find(changed_.begin(), changed_.end(), id) == changed_.end()) changed_.push_back(id);
    return id;
}

void FlowNetwork::remove(Time now, FlowId id) {
    Flow& f = flows_[id];
    f.active = false;
    ++f.version;
    --active_count_;
    ++topology_epoch_;
    // Its private links empty; a shared link left to one flow stays shared (walked, exact) until it empties.
    std::vector<LinkId> seeds;
    for (LinkId l : f.route) {
        --link_count_[l];
        if (link_owner_[l] == id) continue;
        auto& v = link_flows_[l];
        v.erase(std::find(v.begin(), v.end(), id));
        if (!v.empty()) seeds.push_back(l);
    }
    f.route.clear();
    f.shared.clear();
    free_.push_back(id);
    reshare(now, {}, seeds);
}

void FlowNetwork::split(FlowId id) {
    Flow& f = flows_[id];
    f.shared.clear();
    f.private_bound = std::numeric_limits<double>::infinity();
    for (LinkId l : f.route) {
        if (link_owner_[l] == id)
            f.private_bound = std::min(f.private_bound, std::max(0.0, capacity_[l]) /
                                                            static_cast<double>(link_count_[l]));
        else
            f.shared.push_back(l);
    }
}

void FlowNetwork::setCap(Time now, FlowId id, double cap_Bps) {
    if (flows_[id].cap == cap_Bps) {
        changed_.clear();
        return;
    }
    Flow& f = flows_[id];
    if (f.rate == f.cap && f.rate > 0.0 && capAlone(id, cap_Bps)) {
        changed_.clear();
        f.cap = cap_Bps;
        setRate(now, id, cap_Bps);
        return;
    }
    f.cap = cap_Bps;
    reshare(now, {id}, {});
}

// A flow at its bound whose links all keep spare capacity (before and after the change, by more than kSlack of
// each link's capacity) stays at its bound, and no other flow's rate moves: every other flow's bottleneck (its
// bound, or a saturated link on which it has the largest rate) is untouched, so the max-min rates are the old ones
// with this flow at its new bound. The links' spare capacity follows it.
bool FlowNetwork::capAlone(FlowId id, double cap_Bps) {
    const Flow& f = flows_[id];
    // Its private links (C − m·r > kSlack·C on each: r below (1 − kSlack) of their bound), then the shared ones.
    const double room = f.private_bound * (1.0 - kSlack);
    if (!(f.rate < room && cap_Bps < room)) return false;
    const double delta = cap_Bps - f.rate;
    for (LinkId l : f.shared)
        if (link_left_[l] <= kSlack * capacity_[l]) return false;
    for (LinkId l : f.shared) link_left_[l] -= delta;
    bool spare = true;
    for (LinkId l : f.shared) spare = spare && link_left_[l] > kSlack * capacity_[l];
    if (!spare)
        for (LinkId l : f.shared) link_left_[l] += delta;
    return spare;
}

Time FlowNetwork::completion(FlowId id) const {
    const Flow& f = flows_[id];
    if (f.remaining <= 0.0) return f.last;
    if (f.rate <= 0.0) return Time::max();
    return f.last + fromSeconds(f.remaining / f.rate);
}

double FlowNetwork::load(LinkId l) const {
    double s = 0.0;
    if (link_count_[l] > 0 && link_owner_[l] != kShared) {
        for (std::uint32_t i = 0; i < link_count_[l]; ++i) s += flows_[link_owner_[l]].rate;  // as a list would sum
        return s;
    }
    for (FlowId id : link_flows_[l]) s += flows_[id].rate;
    return s;
}

void FlowNetwork::collectComponent(const std::vector<FlowId>& seeds, const std::vector<LinkId>& seed_links) {
    ++mark_;
    comp_flows_.clear();
    comp_links_.clear();
    std::vector<LinkId>& stack = stack_;
    stack.clear();
    auto addFlow = [&](FlowId f) {
        if (flow_mark_[f] == mark_) return;
        flow_mark_[f] = mark_;
        comp_flows_.push_back(f);
        for (LinkId l : flows_[f].shared)
            if (link_mark_[l] != mark_) stack.push_back(l);
    };
    for (FlowId f : seeds) addFlow(f);
    // A seed link (a removed flow's) that is empty now joins nothing; one private to a flow brings that flow alone.
    for (LinkId l : seed_links) {
        if (link_count_[l] == 0) continue;
        if (link_owner_[l] != kShared) addFlow(link_owner_[l]);
        else stack.push_back(l);
    }
    while (!stack.empty()) {
        LinkId l = stack.back();
        stack.pop_back();
        if (link_mark_[l] == mark_) continue;
        link_mark_[l] = mark_;
        comp_links_.push_back(l);
        for (FlowId f : link_flows_[l]) addFlow(f);
    }
    // Fixed order, so the arithmetic (and thus every rate) is the same on every run.
    std::sort(comp_flows_.begin(), comp_flows_.end());
    std::sort(comp_links_.begin(), comp_links_.end());
}

void FlowNetwork::reshare(Time now, const std::vector<FlowId>& seeds, const std::vector<LinkId>& seed_links) {
    changed_.clear();
    const std::vector<FlowId>* flows = &comp_flows_;
    const std::vector<LinkId>* links = &comp_links_;
    if (seed_links.empty() && seeds.size() == 1) {
        const Component& c = componentOf(seeds.front());
        flows = &c.flows;
        links = &c.links;
    } else {
        collectComponent(seeds, seed_links);
    }
    const std::vector<FlowId>& comp_flows = *flows;
    const std::vector<LinkId>& comp_links = *links;

    for (LinkId l : comp_links) {
        link_left_[l] = links_[l].capacity_Bps;
        link_unfrozen_[l] = static_cast<std::uint32_t>(link_flows_[l].size());
    }
    for (FlowId f : comp_flows) new_rate_[f] = kUnfrozen;

    std::size_t unfrozen = comp_flows.size();
    while (unfrozen > 0) {
        double level = std::numeric_limits<double>::infinity();
        for (LinkId l : comp_links)
            if (link_unfrozen_[l] > 0) level = std::min(level, std::max(0.0, link_left_[l]) / link_unfrozen_[l]);
        for (FlowId f : comp_flows)
            if (new_rate_[f] == kUnfrozen) level = std::min(level, bound(f));
        const double tie = level * (1.0 + kTie);

        auto freeze = [&](FlowId f) {
            new_rate_[f] = level;
            --unfrozen;
            for (LinkId l : flows_[f].shared) {
                link_left_[l] -= level;
                --link_unfrozen_[l];
            }
        };
        for (FlowId f : comp_flows)
            if (new_rate_[f] == kUnfrozen && bound(f) <= tie) freeze(f);
        for (LinkId l : comp_links) {
            if (link_unfrozen_[l] == 0) continue;
            if (std::max(0.0, link_left_[l]) / link_unfrozen_[l] > tie) continue;
            for (FlowId f : link_flows_[l])
                if (new_rate_[f] == kUnfrozen) freeze(f);
        }
    }
    for (FlowId f : comp_flows)
        if (new_rate_[f] != flows_[f].rate) setRate(now, f, new_rate_[f]);
}

const FlowNetwork::Component& FlowNetwork::componentOf(FlowId f) {
    if (components_epoch_ != topology_epoch_) {
        for (const Component& c : components_)
            for (FlowId g : c.flows) flow_component_[g] = 0;
        components_.clear();
        components_epoch_ = topology_epoch_;
    }
    if (flow_component_[f] == 0) {
        collectComponent({f}, {});
        components_.push_back(Component{comp_flows_, comp_links_});
        for (FlowId g : comp_flows_) flow_component_[g] = static_cast<std::uint32_t>(components_.size());
    }
    return components_[flow_component_[f] - 1];
}

void FlowNetwork::setRate(Time now, FlowId id, double r) {
    Flow& f = flows_[id];
    f.remaining = std::max(0.0, f.remaining - f.rate * (now - f.last).seconds());
    f.last = now;
    f.rate = r;
    ++f.version;
    changed_.push_back(id);
}

}  // namespace stepsim
