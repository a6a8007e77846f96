// The f64 oracle's answers at a bench shape, kept for the rest of the process.
//
// An evaluation draws its bench inputs from its seed, and every evaluation of an optimize run
// or a search is given the run's seed: they all draw the same inputs, and the oracle (the task's
// reference compiled in f64, deterministic) would compute the same answers for each of them,
// at 0.4-3 s a run and two runs per input base. The judge asks this cache first and runs the
// oracle only when it misses.
//
// Nothing a candidate does reaches an entry: the judge writes it from the oracle's own buffers
// before any candidate call at that shape could follow, and the key holds everything the
// answers depend on (the task's semantics and input distributions, the shape, the oracle's
// compiled object, the seeds of the inputs and of the sampled elements, the input sets), so a
// hit is exactly the answer a fresh oracle run would give. Fresh seeds (kforge eval without
// --seed) never hit.
//
//   const std::string key = oracle_cache_key(task, inst, oracle_id, slots, input_seed, samples);
//   if (auto hit = OracleCache::process().find(key)) ...  // hit->answers, hit->full(...)
#pragma once

#include <cstddef>
#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "harness/side_by_side.h"
#include "task/task.h"

namespace kf {

struct OracleRecord {
  int bases = 0;          // input bases the oracle answered for (2 contents each)
  OracleAnswers answers;  // [content][output]: the sampled elements
  // The full answers of content 0 (checked at the warm-up) and of the last content (checked
  // after timing), one f64 array per output.
  std::vector<std::vector<double>> first, last;
  size_t bytes() const;
};

class OracleCache {
 public:
  explicit OracleCache(size_t capacity_bytes) : capacity_(capacity_bytes) {}

  // The process's cache: $KFORGE_ORACLE_CACHE_MB MiB (0 turns it off; default 512).
  static OracleCache& process();

  std::shared_ptr<const OracleRecord> find(const std::string& key);
  // Keeps `r` under `key`, dropping the least recently used entries to make room; a record
  // larger than a quarter of the capacity is not kept.
  void put(const std::string& key, std::shared_ptr<const OracleRecord> r);

  size_t capacity() const { return capacity_; }
  size_t bytes() const;
  size_t hits() const;
  size_t misses() const;

 private:
  struct Entry {
    std::string key;
    std::shared_ptr<const OracleRecord> record;
    size_t bytes = 0;
  };
  mutable std::mutex mu_;
  size_t capacity_ = 0, bytes_ = 0, hits_ = 0, misses_ = 0;
  std::list<Entry> entries_;  // most recently used first
};

// Everything the oracle's answers at `inst` depend on. `oracle_id` names the oracle's compiled
// object (its compile key); `sample_seeds` drew the sampled elements of each output.
std::string oracle_cache_key(const Task& task, const ShapeInstance& inst,
                             const std::string& oracle_id, int slots, uint64_t input_seed,
                             const std::vector<uint64_t>& sample_seeds);

}  // namespace kf
