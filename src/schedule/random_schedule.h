// The space of schedule moves, sampled at random: a seeded generator of primitive applications
// for a pipeline, used by the differential property tests (every legal schedule must lower to a
// kernel that passes the judge) and usable by search as a source of random moves.
//
//   Pipeline p = make_pipeline(program, task);
//   Rng rng(seed);
//   Primitive m = random_move(p, rng);          // may be illegal for p
//   Schedule s = random_schedule(p, seed, {});  // only moves that applied, in order
//   apply_schedule(p, s);                       // replays exactly
//
// Moves draw their arguments from the pipeline's current state (existing stages and loops,
// consumers of a stage, small factors including ones that do not divide) so most are legal;
// the rest exercise the legality checks.
#pragma once

#include <cstdint>
#include <vector>

#include "schedule/pipeline.h"
#include "schedule/trace.h"

namespace kf::sched {

// A small deterministic generator (SplitMix64), so a seed means the same schedule everywhere.
class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed) {}
  uint64_t next();
  // Uniform in [0, n); n > 0.
  size_t below(size_t n) { return static_cast<size_t>(next() % n); }
  template <typename T>
  const T& pick(const std::vector<T>& v) {
    return v[below(v.size())];
  }

 private:
  uint64_t state_;
};

// One random primitive for the pipeline's current state (not necessarily legal).
Primitive random_move(const Pipeline& p, Rng& rng);

struct RandomScheduleOptions {
  int moves = 8;      // legal moves wanted
  int attempts = 60;  // moves tried at most
};

// A schedule of up to `moves` legal primitives drawn with `seed`; the schedule's file is
// "random-SEED".
Schedule random_schedule(const Pipeline& p, uint64_t seed, const RandomScheduleOptions& options);

}  // namespace kf::sched
