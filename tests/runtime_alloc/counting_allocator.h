// The global operator new and delete of lsjit_runtime_alloc_tests, replaced to count: how
// many allocations happen while `counting` is set, and the heap bytes live at once. This is
// why these tests are a program of their own: in the runtime test executable the
// replacement would apply to every other test too.
#pragma once

#include <atomic>
#include <cstddef>

namespace lsjit::testing {

extern std::atomic<bool> counting;    // count allocations while set
extern std::atomic<long> allocations;  // allocations made while counting
// Bytes allocated through operator new and not yet freed (malloc_usable_size of each
// block), and the most there were at once since reset_peak_bytes().
extern std::atomic<long long> live_bytes;
extern std::atomic<long long> peak_bytes;
inline void reset_peak_bytes() { peak_bytes.store(live_bytes.load()); }

}  // namespace lsjit::testing
