#include "harness/bench_inputs.h"

#include <cstring>

#include "task/inputs.h"

namespace kf {
namespace {

// One element in 64 of each independently drawn input is patched: few enough that a handful of
// sampled elements almost never sees the difference, enough that every long reduction does.
constexpr size_t kPatchShare = 64;

bool independent(const Distribution& d) {
  switch (d.kind) {
    case DistKind::normal:
    case DistKind::uniform:
    case DistKind::positive:
      return true;
    case DistKind::randint:
      return !d.sorted;
    case DistKind::partition:
    case DistKind::offsets:
    case DistKind::constant:
      return false;
  }
  return false;
}

uint64_t mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

}  // namespace

SlotBuffers worker_buffers(const Worker& w, ShimKind kind) {
  return {[&w](int slot, size_t tensor) { return w.buffer(slot, tensor); }, kind};
}

Expected<BenchInputs> BenchInputs::create(const Task& task, const ShapeInstance& shape, int slots,
                                          uint64_t seed) {
  KF_CHECK(slots >= 1);
  BenchInputs in(task, shape, slots, seed);
  KF_RETURN_IF_ERROR(in.draw_base(seed));
  return in;
}

Status BenchInputs::add_bases(int count) {
  while (bases() < count) KF_RETURN_IF_ERROR(draw_base(seed_ + static_cast<uint64_t>(bases())));
  return ok_status();
}

Status BenchInputs::draw_base(uint64_t seed) {
  Base b;
  for (size_t i = 0; i < task_->inputs.size(); ++i) {
    const size_t size = dtype_size(task_->inputs[i].dtype), n = shape_->elements[i];
    b.inputs.emplace_back(n * size);
    KF_RETURN_IF_ERROR(generate_input(*task_, *shape_, i, seed, b.inputs.back().data()));
    Patch p;
    if (independent(task_->inputs[i].dist) && n > 1) {
      // Each patched element takes the value of another element of the same tensor (a value
      // the distribution produced), one that differs from its own where any does.
      uint64_t x = mix(seed ^ (0x70a7c4ull + i));
      const size_t m = std::max<size_t>(1, n / kPatchShare);
      for (size_t k = 0; k < m; ++k) {
        const size_t e = static_cast<size_t>((x = mix(x)) % n);
        uint64_t own = 0;
        std::memcpy(&own, b.inputs.back().data() + e * size, size);
        uint64_t bits = own;
        for (int tries = 0; tries < 4 && bits == own; ++tries) {
          const size_t from = static_cast<size_t>((x = mix(x)) % n);
          bits = 0;
          std::memcpy(&bits, b.inputs.back().data() + from * size, size);
        }
        if (bits == own) continue;
        p.index.push_back(e);
        p.bits.push_back(bits);
      }
    }
    b.patches.push_back(std::move(p));
  }
  bases_.push_back(std::move(b));
  return ok_status();
}

bool BenchInputs::has_patches() const {
  for (const Patch& p : bases_.front().patches)
    if (!p.index.empty()) return true;
  return false;
}

namespace {

// dst[index[k]] = value(k) for every k, in the buffer's own type T.
template <typename T, typename Value>
void scatter(void* dst, const std::vector<size_t>& index, Value value) {
  T* d = static_cast<T*>(dst);
  for (size_t k = 0; k < index.size(); ++k) {
    const uint64_t bits = value(k);
    std::memcpy(&d[index[k]], &bits, sizeof(T));
  }
}

}  // namespace

void BenchInputs::apply_patch(const SlotBuffers& buf, int slot, size_t i, int base,
                              bool patched) const {
  const Base& b = bases_.at(static_cast<size_t>(base));
  const Patch& p = b.patches[i];
  if (p.index.empty()) return;
  const DType from = task_->inputs[i].dtype, to = buffer_dtype(*task_, i, buf.kind);
  const size_t size = dtype_size(from);
  const unsigned char* original = b.inputs[i].data();
  // The value patch element k takes: its patched bits, or the base's own.
  auto value = [&](size_t k) {
    if (patched) return p.bits[k];
    uint64_t bits = 0;
    std::memcpy(&bits, original + p.index[k] * size, size);
    return bits;
  };
  void* dst = buf.at(slot, i);
  if (from != to) {  // the oracle's widened copy
    for (size_t k = 0; k < p.index.size(); ++k) {
      const uint64_t bits = value(k);
      store_from_double(dst, to, p.index[k], load_as_double(&bits, from, 0));
    }
    return;
  }
  switch (size) {
    case 1:
      return scatter<uint8_t>(dst, p.index, value);
    case 2:
      return scatter<uint16_t>(dst, p.index, value);
    case 4:
      return scatter<uint32_t>(dst, p.index, value);
    case 8:
      return scatter<uint64_t>(dst, p.index, value);
  }
  KF_CHECK(false) << "no dtype of " << size << " bytes";
}

void BenchInputs::write(const SlotBuffers& to_buf, int slot, ContentId c) const {
  const Base& b = bases_.at(static_cast<size_t>(c.base));
  for (size_t i = 0; i < task_->inputs.size(); ++i) {
    const DType from = task_->inputs[i].dtype, to = buffer_dtype(*task_, i, to_buf.kind);
    void* dst = to_buf.at(slot, i);
    if (from == to) {
      std::memcpy(dst, b.inputs[i].data(), b.inputs[i].size());
    } else {
      for (size_t e = 0; e < shape_->elements[i]; ++e)
        store_from_double(dst, to, e, load_as_double(b.inputs[i].data(), from, e));
    }
    if (c.variant == 1) apply_patch(to_buf, slot, i, c.base, true);
  }
}

void BenchInputs::switch_content(const SlotBuffers& buf, int slot, ContentId from,
                                 ContentId to) const {
  KF_CHECK(from.base == to.base) << "switch_content changes the variant, not the base";
  if (from.variant == to.variant) return;
  for (size_t i = 0; i < task_->inputs.size(); ++i)
    apply_patch(buf, slot, i, to.base, to.variant == 1);
}

bool BenchInputs::holds(const SlotBuffers& buf, int slot, ContentId c) const {
  const Base& b = bases_.at(static_cast<size_t>(c.base));
  for (size_t i = 0; i < task_->inputs.size(); ++i) {
    const DType from = task_->inputs[i].dtype, to = buffer_dtype(*task_, i, buf.kind);
    const auto* got = static_cast<const unsigned char*>(buf.at(slot, i));
    const Patch& p = b.patches[i];
    if (from != to) continue;  // only the oracle's widened copies, which the judge alone writes
    // Patched elements first (where the variant differs), then everything else.
    std::vector<unsigned char> want;
    const unsigned char* expect = b.inputs[i].data();
    if (c.variant == 1 && !p.index.empty()) {
      want = b.inputs[i];
      const size_t size = dtype_size(from);
      for (size_t k = 0; k < p.index.size(); ++k)
        std::memcpy(want.data() + p.index[k] * size, &p.bits[k], size);
      expect = want.data();
    }
    if (std::memcmp(got, expect, b.inputs[i].size()) != 0) return false;
  }
  return true;
}

}  // namespace kf
