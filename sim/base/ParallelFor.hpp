#pragma once
// parallelFor(n, threads, fn) calls fn(i) once for every i in [0, n), spread over `threads` threads (0: one per
// core, std::thread::hardware_concurrency). Work is handed out one index at a time from a shared counter, so
// uneven items balance themselves. fn must write only to what item i owns (results[i], …): the order in which
// items run depends on the scheduler, and the caller gets deterministic output by keeping results by index.
//
// Errors: when items throw, the exception of the lowest-numbered failing item among those that ran is rethrown
// on the calling thread once every thread has stopped; items not yet started are skipped after the first failure.
// With one thread (or one item) everything runs on the calling thread, in index order.
#include <algorithm>
#include <atomic>
#include <cstddef>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace stepsim {

inline int hardwareThreads() {
    const unsigned n = std::thread::hardware_concurrency();
    return n == 0 ? 1 : static_cast<int>(n);
}

template <class Fn>
void parallelFor(std::size_t n, int threads, Fn&& fn) {
    if (threads <= 0) threads = hardwareThreads();
    const std::size_t workers = std::min<std::size_t>(static_cast<std::size_t>(threads), n);
    if (workers <= 1) {
        for (std::size_t i = 0; i < n; ++i) fn(i);
        return;
    }
    std::atomic<std::size_t> next{0};
    std::atomic<bool> failed{false};
    std::mutex errorMutex;
    std::exception_ptr error;
    std::size_t errorIndex = n;
    auto work = [&] {
        while (!failed.load(std::memory_order_relaxed)) {
            const std::size_t i = next.fetch_add(1, std::memory_order_relaxed);
            if (i >= n) return;
            try {
                fn(i);
            } catch (...) {
                const std::lock_guard<std::mutex> lock(errorMutex);
                if (i < errorIndex) {
                    errorIndex = i;
                    error = std::current_exception();
                }
                failed.store(true, std::memory_order_relaxed);
            }
        }
    };
    {
        std::vector<std::jthread> pool;
        pool.reserve(workers - 1);
        for (std::size_t t = 1; t < workers; ++t) pool.emplace_back(work);
        work();
    }  // joins
    if (error) std::rethrow_exception(error);
}

}  // namespace stepsim
