#pragma once
// The future event list: a binary heap of small events ordered by (time, insertion sequence).
//
// Equal times resolve first-in first-out by the sequence number, so a run with the same inputs and seed
// pops the same events in the same order, bit for bit. Events are plain structs that refer to typed
// storage by index (`target`, `version`); nothing is allocated per event once the heap has grown.
// A consumer invalidates an event lazily: it bumps the version it keeps for `target`, and ignores a popped
// event whose version no longer matches (the rescheduling scheme of SimGrid's lazy update).
#include <cstdint>
#include <queue>
#include <vector>

#include "sim/base/Time.hpp"

namespace stepsim {

struct Event {
    Time time;
    std::uint64_t seq = 0;
    std::uint32_t type = 0;     // consumer-defined kind
    std::uint32_t target = 0;   // index into the consumer's storage
    std::uint32_t version = 0;  // consumer-defined staleness check
};

class EventQueue {
public:
    void reserve(std::size_t n) {
        std::vector<Event> v;
        v.reserve(n);
        heap_ = Heap(Later{}, std::move(v));
    }
    void push(Time t, std::uint32_t type, std::uint32_t target, std::uint32_t version = 0) {
        heap_.push(Event{t, next_seq_++, type, target, version});
    }
    bool empty() const { return heap_.empty(); }
    std::size_t size() const { return heap_.size(); }
    const Event& top() const { return heap_.top(); }
    Event pop() {
        Event e = heap_.top();
        heap_.pop();
        return e;
    }

private:
    struct Later {
        bool operator()(const Event& a, const Event& b) const {
            if (a.time != b.time) return a.time > b.time;
            return a.seq > b.seq;
        }
    };
    using Heap = std::priority_queue<Event, std::vector<Event>, Later>;
    Heap heap_;
    std::uint64_t next_seq_ = 0;
};

}  // namespace stepsim
