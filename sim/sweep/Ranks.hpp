#pragma once
// Where a sweep's points run: on this process's threads (parallelFor), and, in a build with STEPSIM_WITH_MPI
// started by `mpirun -n N`, on N processes. Point i of a batch runs on rank i mod N; every rank sends each record
// to rank 0 as it finishes, rank 0 hands them to `deliver` (which appends them to the journal) in the order they
// arrive, and at the end of the batch rank 0 sends every record to every rank, so all ranks take the same next
// step of a search. Records are kept by index, so what a batch returns does not depend on the number of ranks
// or threads.
#include <cstddef>
#include <functional>
#include <string>
#include <vector>

namespace stepsim {

class Ranks {
public:
    // Joins the MPI job when this process was started by mpirun (and the build has MPI); otherwise one rank.
    Ranks();
    ~Ranks();
    Ranks(const Ranks&) = delete;
    Ranks& operator=(const Ranks&) = delete;

    int rank() const { return rank_; }
    int size() const { return size_; }
    bool root() const { return rank_ == 0; }
    // Threads for this rank when the user asked for `threads` (0: the cores, shared by the ranks on this host).
    int threadsPerRank(int threads) const;

    // Runs run(i) for every i < n (each returns a record as text) and returns every text by index, on every rank.
    // On rank 0, deliver(i, text) is called once per item as it finishes, one call at a time.
    std::vector<std::string> spread(std::size_t n, int threads, const std::function<std::string(std::size_t)>& run,
                                    const std::function<void(std::size_t, const std::string&)>& deliver) const;

    // Rank 0's `text` on every rank.
    std::string broadcast(std::string text) const;

    // Stops every rank with this message (an internal error on one rank would leave the others waiting).
    [[noreturn]] void abort(const std::string& message) const;

private:
    int rank_ = 0, size_ = 1, local_size_ = 1;
    bool mpi_ = false, serialized_ = false;
};

}  // namespace stepsim
