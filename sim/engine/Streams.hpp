#pragma once
// The CUDA streams of every rank, and the events that link them.
//
// A stream is a FIFO: its head op starts once the previous one finished and any event it waits for completed. A
// kernel starts on the GPU (GpuCompute); a collective's NCCL kernel joins its collective (Collectives), or, while a
// compute kernel holds the SMs, waits for them; record_event completes its event when reached; step_end records the
// step's end on this rank (and its power state's). A stream waiting on an event resumes after what runs at the
// moment the event completes: a kernel next on the recording stream reaches the SMs first, as on the GPU, where a
// stream's next kernel starts before a cross-stream wait resolves. Streams are numbered globally by slot: a rank's
// first stream's slot plus the stream's index in its Program.
#include <cstdint>
#include <optional>
#include <vector>

#include "sim/base/Time.hpp"
#include "sim/engine/EngineContext.hpp"

namespace stepsim {

class Collectives;
class GpuCompute;
class Hosts;
class PowerState;
class Transfers;

class Streams {
public:
    struct Stream {
        int rank = 0;
        std::uint8_t index = 0;
        std::vector<std::uint32_t> queue;  // ops (indices into the rank's Program) in launch order
        std::size_t head = 0;
        bool running = false;               // the head op runs (or its NCCL kernel waits for the SMs)
        std::optional<std::uint32_t> blocked_on;  // event the head waits for
        std::uint32_t op = 0;               // the running op
        Time start;                         // when it started
    };

    Streams(EngineContext& ctx, Hosts& hosts, GpuCompute& gpus, Collectives& collectives, PowerState& power,
            Transfers& transfers);

    std::uint32_t slotOf(int rank, std::uint8_t stream) const { return base_[rank] + stream; }
    Stream& operator[](std::uint32_t slot) { return streams_[slot]; }
    std::size_t size() const { return streams_.size(); }
    bool eventDone(int rank, std::uint32_t event) const { return event_done_[rank][event] != 0; }

    // The host launched `op` of `rank`: it joins its stream.
    void enqueue(int rank, std::uint32_t op);
    // Runs the stream's head ops until one takes time or waits (kStreamWake, and after each op ends).
    void tryStart(std::uint32_t slot);
    // The head op starts now, and it ends.
    Stream& begin(std::uint32_t slot) {
        Stream& st = streams_[slot];
        st.running = true;
        st.op = st.queue[st.head];
        st.start = ctx_.now;
        return st;
    }
    void end(std::uint32_t slot) {
        streams_[slot].running = false;
        ++streams_[slot].head;
    }
    // Throws if a stream stopped with ops left.
    void checkFinished() const;

private:
    void completeEvent(int rank, std::uint32_t event);

    EngineContext& ctx_;
    Hosts& hosts_;
    GpuCompute& gpus_;
    Collectives& collectives_;
    PowerState& power_;
    Transfers& transfers_;
    std::vector<std::uint32_t> base_;                  // [rank] → its first stream's slot
    std::vector<Stream> streams_;                      // [slot]
    std::vector<std::vector<std::uint8_t>> event_done_;  // [rank][event]
};

}  // namespace stepsim
