#include "sim/sweep/Ranks.hpp"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <thread>

#include <nlohmann/json.hpp>

#include "sim/base/ParallelFor.hpp"

#ifdef STEPSIM_WITH_MPI
#include <mpi.h>
#endif

namespace stepsim {

namespace {

std::vector<std::string> spreadLocally(std::size_t n, int threads, const std::function<std::string(std::size_t)>& run,
                                       const std::function<void(std::size_t, const std::string&)>& deliver) {
    std::vector<std::string> out(n);
    std::mutex m;
    parallelFor(n, threads, [&](std::size_t i) {
        std::string text = run(i);
        const std::lock_guard lock(m);
        out[i] = std::move(text);
        deliver(i, out[i]);
    });
    return out;
}

}  // namespace

int Ranks::threadsPerRank(int threads) const {
    if (threads > 0) return threads;
    return std::max(1, hardwareThreads() / std::max(1, local_size_));
}

#ifdef STEPSIM_WITH_MPI

namespace {
constexpr int kTagRecord = 29;
}

Ranks::Ranks() {
    // Started by mpirun (Open MPI sets OMPI_COMM_WORLD_SIZE; PMIx launchers PMIX_RANK): join the job. A plain
    // `stepsim sweep` stays one process without MPI.
    if (!std::getenv("OMPI_COMM_WORLD_SIZE") && !std::getenv("PMIX_RANK")) return;
    int provided = 0;
    MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SERIALIZED, &provided);
    mpi_ = true;
    serialized_ = provided >= MPI_THREAD_SERIALIZED;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
    if (const char* local = std::getenv("OMPI_COMM_WORLD_LOCAL_SIZE")) local_size_ = std::max(1, std::atoi(local));
}

Ranks::~Ranks() {
    if (mpi_) MPI_Finalize();
}

void Ranks::abort(const std::string& message) const {
    std::fprintf(stderr, "internal error on rank %d: %s\n", rank_, message.c_str());
    if (mpi_) MPI_Abort(MPI_COMM_WORLD, 3);
    std::exit(3);
}

std::vector<std::string> Ranks::spread(std::size_t n, int threads,
                                       const std::function<std::string(std::size_t)>& run,
                                       const std::function<void(std::size_t, const std::string&)>& deliver) const {
    if (size_ == 1) return spreadLocally(n, threads, run, deliver);
    const std::size_t ranks = static_cast<std::size_t>(size_);
    std::vector<std::size_t> mine;
    for (std::size_t i = static_cast<std::size_t>(rank_); i < n; i += ranks) mine.push_back(i);
    std::vector<std::string> out(n);
    std::mutex m;
    if (rank_ != 0) {
        // Each record to rank 0 as it finishes: "INDEX\nTEXT". MPI calls from the pool's threads one at a time
        // (MPI_THREAD_SERIALIZED), or from this thread alone when the library does not grant that.
        try {
            parallelFor(mine.size(), serialized_ ? threads : 1, [&](std::size_t k) {
                const std::string msg = std::to_string(mine[k]) + "\n" + run(mine[k]);
                const std::lock_guard lock(m);
                MPI_Send(msg.data(), static_cast<int>(msg.size()), MPI_CHAR, 0, kTagRecord, MPI_COMM_WORLD);
            });
        } catch (const std::exception& e) {
            abort(e.what());
        }
    } else {
        std::exception_ptr error;
        std::thread local([&] {
            try {
                parallelFor(mine.size(), threads, [&](std::size_t k) {
                    std::string text = run(mine[k]);
                    const std::lock_guard lock(m);
                    out[mine[k]] = std::move(text);
                    deliver(mine[k], out[mine[k]]);
                });
            } catch (...) {
                error = std::current_exception();
            }
        });
        // This thread receives the other ranks' records (the only thread of rank 0 that calls MPI), polling
        // rather than blocking so that it does not spin a core that the points need.
        for (std::size_t got = 0, remote = n - mine.size(); got < remote;) {
            int flag = 0;
            MPI_Status st;
            MPI_Iprobe(MPI_ANY_SOURCE, kTagRecord, MPI_COMM_WORLD, &flag, &st);
            if (!flag) {
                std::this_thread::sleep_for(std::chrono::milliseconds(1));
                continue;
            }
            int len = 0;
            MPI_Get_count(&st, MPI_CHAR, &len);
            std::string msg(static_cast<std::size_t>(len), '\0');
            MPI_Recv(msg.data(), len, MPI_CHAR, st.MPI_SOURCE, kTagRecord, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            const std::size_t nl = msg.find('\n');
            const std::size_t i = std::stoull(msg.substr(0, nl));
            const std::lock_guard lock(m);
            out[i] = msg.substr(nl + 1);
            deliver(i, out[i]);
            ++got;
        }
        local.join();
        if (error) {
            try {
                std::rethrow_exception(error);
            } catch (const std::exception& e) {
                abort(e.what());
            }
        }
    }
    // Every record to every rank.
    const std::string all = broadcast(rank_ == 0 ? nlohmann::json(out).dump() : std::string());
    if (rank_ != 0) out = nlohmann::json::parse(all).get<std::vector<std::string>>();
    return out;
}

std::string Ranks::broadcast(std::string text) const {
    if (size_ == 1) return text;
    unsigned long long len = text.size();
    MPI_Bcast(&len, 1, MPI_UNSIGNED_LONG_LONG, 0, MPI_COMM_WORLD);
    text.resize(len);
    MPI_Bcast(text.data(), static_cast<int>(len), MPI_CHAR, 0, MPI_COMM_WORLD);
    return text;
}

#else  // one process: the points on this process's threads

Ranks::Ranks() = default;
Ranks::~Ranks() = default;

std::string Ranks::broadcast(std::string text) const { return text; }

void Ranks::abort(const std::string& message) const {
    std::fprintf(stderr, "internal error: %s\n", message.c_str());
    std::exit(3);
}

std::vector<std::string> Ranks::spread(std::size_t n, int threads,
                                       const std::function<std::string(std::size_t)>& run,
                                       const std::function<void(std::size_t, const std::string&)>& deliver) const {
    return spreadLocally(n, threads, run, deliver);
}

#endif

}  // namespace stepsim
