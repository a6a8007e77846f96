#include "harness/oracle_cache.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstdlib>
#include <string_view>

#include "support/hash.h"

namespace kf {

size_t OracleRecord::bytes() const {
  size_t n = sizeof(*this);
  for (const auto& content : answers)
    for (const auto& s : content)
      n += s.index.size() * sizeof(size_t) + s.value.size() * sizeof(double);
  for (const auto* full : {&first, &last})
    for (const auto& out : *full) n += out.size() * sizeof(double);
  return n;
}

OracleCache& OracleCache::process() {
  static OracleCache cache([] {
    size_t mib = 512;
    if (const char* v = std::getenv("KFORGE_ORACLE_CACHE_MB"); v && *v) {
      char* end = nullptr;
      const unsigned long long n = std::strtoull(v, &end, 10);
      if (end && *end == '\0') mib = static_cast<size_t>(std::min<unsigned long long>(n, 1 << 20));
    }
    return mib << 20;
  }());
  return cache;
}

std::shared_ptr<const OracleRecord> OracleCache::find(const std::string& key) {
  std::lock_guard lock(mu_);
  for (auto it = entries_.begin(); it != entries_.end(); ++it)
    if (it->key == key) {
      entries_.splice(entries_.begin(), entries_, it);
      ++hits_;
      return it->record;
    }
  ++misses_;
  return nullptr;
}

void OracleCache::put(const std::string& key, std::shared_ptr<const OracleRecord> r) {
  if (!r) return;
  const size_t size = r->bytes();
  std::lock_guard lock(mu_);
  if (size > capacity_ / 4) return;
  for (auto it = entries_.begin(); it != entries_.end(); ++it)
    if (it->key == key) {
      bytes_ -= it->bytes;
      entries_.erase(it);
      break;
    }
  while (!entries_.empty() && bytes_ + size > capacity_) {
    bytes_ -= entries_.back().bytes;
    entries_.pop_back();
  }
  entries_.push_front({key, std::move(r), size});
  bytes_ += size;
}

size_t OracleCache::bytes() const {
  std::lock_guard lock(mu_);
  return bytes_;
}

size_t OracleCache::hits() const {
  std::lock_guard lock(mu_);
  return hits_;
}

size_t OracleCache::misses() const {
  std::lock_guard lock(mu_);
  return misses_;
}

std::string oracle_cache_key(const Task& task, const ShapeInstance& inst,
                             const std::string& oracle_id, int slots, uint64_t input_seed,
                             const std::vector<uint64_t>& sample_seeds) {
  Hasher h;
  h.add("oracle-answers/1").add(task.content_hash()).add(oracle_id).add(inst.label());
  // The inputs' distributions and the derived dims decide the inputs drawn; content_hash()
  // holds neither.
  for (const auto& in : task.inputs) {
    const Distribution& d = in.dist;
    h.add(fmt::format("{} {} {} {} {}", in.name, static_cast<int>(d.kind), d.a, d.b, d.sorted));
    h.add(d.bound ? d.bound->text() : std::string_view("-"));
  }
  for (const auto& [name, f] : task.derived) h.add(name).add(f.text());
  for (const auto& e : inst.extents) h.add(fmt::format("{}", fmt::join(e, "x")));
  h.add(fmt::format("{} {}", slots, input_seed));
  for (uint64_t s : sample_seeds) h.add(fmt::format("{}", s));
  return h.hex();
}

}  // namespace kf
