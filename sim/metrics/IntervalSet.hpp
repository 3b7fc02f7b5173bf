#pragma once
// Sets of half-open time intervals in picoseconds (boost::icl), for the unions and intersections of a rank's
// activity that the metrics and the breakdown take.
#include <cstdint>
#include <functional>

// GCC 12 at -O3 reports a false -Wdangling-pointer inside std::set's swap, inlined from boost::icl's
// intersection (a local tree's header address is stored and then swapped away); the code is correct. It holds for
// the rest of the including file, where the intersections are instantiated.
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 12
#pragma GCC diagnostic ignored "-Wdangling-pointer"
#endif
#include <boost/icl/interval_set.hpp>
#include <boost/icl/right_open_interval.hpp>

namespace stepsim {

using Interval = boost::icl::right_open_interval<std::int64_t>;
using IntervalSet = boost::icl::interval_set<std::int64_t, std::less, Interval>;

}  // namespace stepsim
