// The clock every timing in lsjit reads (summaries, compile logs, benchmarks): steady, so
// that a wall-clock adjustment never makes a time negative.
#pragma once

#include <chrono>

namespace lsjit {

using Clock = std::chrono::steady_clock;

// Seconds from `start` to now.
inline double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

}  // namespace lsjit
