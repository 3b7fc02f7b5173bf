// parallelFor: every index exactly once at any thread count, results by index independent of the thread count,
// and the lowest failing index's error rethrown on the caller.
#include "sim/base/ParallelFor.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

namespace stepsim {
namespace {

TEST(ParallelFor, RunsEveryIndexExactlyOnceAtAnyThreadCount) {
    for (int threads : {0, 1, 2, 3, 8, 64}) {
        std::vector<std::atomic<int>> hits(1000);
        parallelFor(hits.size(), threads, [&](std::size_t i) { hits[i].fetch_add(1); });
        for (std::size_t i = 0; i < hits.size(); ++i) ASSERT_EQ(hits[i].load(), 1) << "index " << i << ", " << threads;
    }
}

TEST(ParallelFor, ResultsKeptByIndexDoNotDependOnTheThreadCount) {
    auto run = [](int threads) {
        std::vector<double> out(257);
        parallelFor(out.size(), threads, [&](std::size_t i) { out[i] = std::sin(static_cast<double>(i)) * 1e3; });
        return out;
    };
    const auto one = run(1);
    EXPECT_EQ(one, run(2));
    EXPECT_EQ(one, run(7));
}

TEST(ParallelFor, NoItemsRunsNothing) {
    int calls = 0;
    parallelFor(0, 4, [&](std::size_t) { ++calls; });
    EXPECT_EQ(calls, 0);
}

TEST(ParallelFor, RethrowsTheLowestFailingIndexOnTheCaller) {
    // On one thread the items run in order, so the first failure is index 3 and nothing after it runs.
    std::vector<int> ran;
    try {
        parallelFor(10, 1, [&](std::size_t i) {
            ran.push_back(static_cast<int>(i));
            if (i == 3 || i == 7) throw std::runtime_error("item " + std::to_string(i));
        });
        FAIL() << "expected an exception";
    } catch (const std::runtime_error& e) {
        EXPECT_EQ(std::string(e.what()), "item 3");
    }
    EXPECT_EQ(ran, (std::vector<int>{0, 1, 2, 3}));
    // On many threads every item fails, and whichever ran, the reported one is the lowest index that ran: index 0
    // is always handed out first.
    try {
        parallelFor(100, 4, [](std::size_t i) { throw std::runtime_error("item " + std::to_string(i)); });
        FAIL() << "expected an exception";
    } catch (const std::runtime_error& e) {
        EXPECT_EQ(std::string(e.what()), "item 0");
    }
}

}  // namespace
}  // namespace stepsim
