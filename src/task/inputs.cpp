#include "task/inputs.h"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <vector>

namespace kf {
namespace {

constexpr int64_t kMaxPartitionTotal = int64_t{1} << 31;

uint64_t splitmix(uint64_t& x) {
  uint64_t z = (x += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

uint64_t rotl(uint64_t x, int k) {
  return (x << k) | (x >> (64 - k));
}

// Random non-negative group sizes summing to `total`, with one group forced empty when there
// are at least two groups (ragged kernels must handle empty groups).
std::vector<int64_t> random_partition(Rng& rng, size_t groups, int64_t total) {
  std::vector<int64_t> sizes(groups, 0);
  if (groups == 0) return sizes;
  size_t empty =
      groups >= 2 ? static_cast<size_t>(rng.randint(0, static_cast<int64_t>(groups))) : groups;
  std::vector<size_t> live;
  for (size_t g = 0; g < groups; ++g)
    if (g != empty) live.push_back(g);
  for (int64_t i = 0; i < total; ++i)
    sizes[live[static_cast<size_t>(rng.randint(0, static_cast<int64_t>(live.size())))]]++;
  return sizes;
}

}  // namespace

Rng::Rng(uint64_t seed) {
  for (auto& s : s_) s = splitmix(seed);
}

uint64_t Rng::next() {
  uint64_t result = rotl(s_[1] * 5, 7) * 9;
  uint64_t t = s_[1] << 17;
  s_[2] ^= s_[0];
  s_[3] ^= s_[1];
  s_[1] ^= s_[2];
  s_[0] ^= s_[3];
  s_[2] ^= t;
  s_[3] = rotl(s_[3], 45);
  return result;
}

double Rng::uniform() {
  return static_cast<double>(next() >> 11) * 0x1.0p-53;
}

double Rng::normal() {
  double u1 = uniform(), u2 = uniform();
  if (u1 < 1e-300) u1 = 1e-300;
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
}

int64_t Rng::randint(int64_t lo, int64_t hi) {
  KF_CHECK(hi > lo);
  return lo + static_cast<int64_t>(next() % static_cast<uint64_t>(hi - lo));
}

Status generate_input(const Task& task, const ShapeInstance& shape, size_t index, uint64_t seed,
                      void* data) {
  const TensorSpec& t = task.inputs.at(index);
  const Distribution& d = t.dist;
  const size_t n = shape.elements.at(index);
  Rng rng(seed * 0x100000001b3ull + index * 0x9e3779b97f4a7c15ull + 1);
  auto bound = [&]() -> Expected<int64_t> {
    auto v = d.bound->eval_int(shape.env);
    if (!v) return Status::error("input '" + t.name + "': " + v.error().message());
    return v;
  };
  switch (d.kind) {
    case DistKind::normal:
      for (size_t i = 0; i < n; ++i) store_from_double(data, t.dtype, i, d.a + d.b * rng.normal());
      return ok_status();
    case DistKind::uniform:
    case DistKind::positive:
      for (size_t i = 0; i < n; ++i)
        store_from_double(data, t.dtype, i, d.a + (d.b - d.a) * rng.uniform());
      return ok_status();
    case DistKind::constant:
      for (size_t i = 0; i < n; ++i) store_from_double(data, t.dtype, i, d.a);
      return ok_status();
    case DistKind::randint: {
      auto hi = bound();
      if (!hi) return hi.error();
      const auto lo = static_cast<int64_t>(d.a);
      if (n > 0 && *hi <= lo)
        return Status::error("input '" + t.name + "': randint needs hi > lo, got [" +
                             std::to_string(lo) + ", " + std::to_string(*hi) + ")");
      std::vector<int64_t> v(n);
      for (auto& x : v) x = rng.randint(lo, *hi);
      if (d.sorted) std::sort(v.begin(), v.end());
      for (size_t i = 0; i < n; ++i) store_from_double(data, t.dtype, i, static_cast<double>(v[i]));
      return ok_status();
    }
    case DistKind::partition:
    case DistKind::offsets: {
      auto total = bound();
      if (!total) return total.error();
      if (*total < 0) return Status::error("input '" + t.name + "': negative total");
      // The generator draws one group per unit of the total: bound the work it can be asked for.
      if (*total > kMaxPartitionTotal)
        return Status::error("input '" + t.name + "': total " + std::to_string(*total) +
                             " is beyond 2^31 (each unit is drawn)");
      const bool offsets = d.kind == DistKind::offsets;
      if (offsets && n == 0)
        return Status::error("input '" + t.name + "': offsets need length >= 1");
      auto sizes = random_partition(rng, offsets ? n - 1 : n, *total);
      if (!offsets && n == 0 && *total != 0)
        return Status::error("input '" + t.name + "': cannot partition into zero groups");
      int64_t acc = 0;
      if (offsets) store_from_double(data, t.dtype, 0, 0);
      for (size_t g = 0; g < sizes.size(); ++g) {
        acc += sizes[g];
        store_from_double(data, t.dtype, offsets ? g + 1 : g,
                          static_cast<double>(offsets ? acc : sizes[g]));
      }
      return ok_status();
    }
  }
  return ok_status();
}

}  // namespace kf
