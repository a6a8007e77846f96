// Input generation: draws a tensor's values from its declared distribution, deterministically
// from a seed (the same seed gives the same bits on every machine and compiler).
//
//   generate_input(task.inputs[0], shape, /*index=*/0, seed, buffer);
#pragma once

#include <cstdint>

#include "support/status.h"
#include "task/task.h"

namespace kf {

// A small, fast, portable generator (xoshiro256**, seeded through splitmix64).
class Rng {
 public:
  explicit Rng(uint64_t seed);
  uint64_t next();
  double uniform();                         // [0, 1)
  double normal();                          // N(0, 1), Box–Muller
  int64_t randint(int64_t lo, int64_t hi);  // [lo, hi)

 private:
  uint64_t s_[4];
};

// Writes input `index` of `task` at shape `shape` into `data` (of the tensor's dtype and size).
// Fails when a distribution's bound does not evaluate or leaves no valid value (e.g. randint with
// hi <= lo on a non-empty tensor).
Status generate_input(const Task& task, const ShapeInstance& shape, size_t index, uint64_t seed,
                      void* data);

}  // namespace kf
