// The bench shape's input contents and where each solution holds them. Every solution timed side
// by side has `slots` input sets (its worker's sets); every kernel call reads one slot; the
// judge knows the oracle's answer for each content a slot can hold.
//
//   BenchInputs in(task, shape, /*slots=*/4, seed);
//   KF_RETURN_IF_ERROR(in.add_bases(2));          // base 0 was drawn by the constructor's caller
//   in.write(worker, ShimKind::candidate, /*slot=*/3, in.initial(3));
//   ContentId next = in.other_variant(c);
//   in.switch_content(worker, ShimKind::candidate, 3, c, next);  // rewrites the patched elements
//
// Contents. A base is one full draw of every input from the task's distributions (its own seed).
// Each base has two variants: the base itself, and the base with a patch: 1/64 of the elements
// of every independently drawn input (at least one each) replaced by values the same tensor holds
// elsewhere, so the patched content is another valid draw. Slot s holds base s % bases, and its
// variant changes every time it has been used, so a kernel is never called twice in a row on
// the same bytes at the same address:
//   - a kernel that returns what it computed for an address (or its last result) is stale;
//   - a kernel that keys a cache on a few sampled input elements almost surely samples none of
//     the patched ones, sees both variants as one, and returns the other variant's answer;
//   - a variant differs from its base in most rows of a reduction, so reusing an old answer for
//     the unchanged rows saves nothing.
// Inputs drawn from structured distributions (offsets, partitions, sorted indices, constants)
// are never patched: their elements are not independent.
//
// Switching variants rewrites only the patched elements, so it costs a small fraction of a copy
// and leaves the caches much as the kernel's own reads would.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "harness/sandbox.h"
#include "harness/shim.h"
#include "support/status.h"
#include "task/task.h"

namespace kf {

// Where one solution's input buffers are: the address of input `tensor` of slot `slot`, laid out
// for `kind` (the oracle's floating inputs are f64). A worker's are worker_buffers(w, kind).
struct SlotBuffers {
  std::function<void*(int slot, size_t tensor)> at;
  ShimKind kind = ShimKind::candidate;
};
SlotBuffers worker_buffers(const Worker& w, ShimKind kind);

struct ContentId {
  int base = 0;
  int variant = 0;  // 0: the base; 1: the base with its patch
  bool operator==(const ContentId&) const = default;
};

class BenchInputs {
 public:
  // Draws base 0 from `seed`. Fails when a distribution does not evaluate.
  static Expected<BenchInputs> create(const Task& task, const ShapeInstance& shape, int slots,
                                      uint64_t seed);

  // Draws bases until there are `count` (each from its own seed), with their patches.
  Status add_bases(int count);

  int slots() const { return slots_; }
  int bases() const { return static_cast<int>(bases_.size()); }
  int contents() const { return 2 * bases(); }
  // A dense index of a content: 2 * base + variant.
  static int index(ContentId c) { return 2 * c.base + c.variant; }
  // The content slot `s` holds first: its base, unpatched.
  ContentId initial(int slot) const { return {slot % bases(), 0}; }
  ContentId other_variant(ContentId c) const { return {c.base, 1 - c.variant}; }
  // Whether the patch changes anything (false when every input is structured).
  bool has_patches() const;

  // Writes content `c` into slot `slot` of `b`.
  void write(const SlotBuffers& b, int slot, ContentId c) const;
  // Changes slot `slot` of `b` from content `from` to `to` (the same base): rewrites only the
  // patched elements.
  void switch_content(const SlotBuffers& b, int slot, ContentId from, ContentId to) const;
  // Whether slot `slot` of `b` holds exactly content `c` (the inputs were not modified). Buffers
  // of another dtype than the task's (the oracle's) are not compared: only the judge writes them.
  bool holds(const SlotBuffers& b, int slot, ContentId c) const;
  // The same, on a worker's buffers.
  void write(Worker& w, ShimKind kind, int slot, ContentId c) const {
    write(worker_buffers(w, kind), slot, c);
  }
  void switch_content(Worker& w, ShimKind kind, int slot, ContentId from, ContentId to) const {
    switch_content(worker_buffers(w, kind), slot, from, to);
  }
  bool holds(const Worker& w, ShimKind kind, int slot, ContentId c) const {
    return holds(worker_buffers(w, kind), slot, c);
  }

 private:
  BenchInputs(const Task& task, const ShapeInstance& shape, int slots, uint64_t seed)
      : task_(&task), shape_(&shape), slots_(slots), seed_(seed) {}

  // The patched elements of one input of one base: their indices and new values (raw bits of
  // the input's dtype).
  struct Patch {
    std::vector<size_t> index;
    std::vector<uint64_t> bits;
  };
  struct Base {
    std::vector<std::vector<unsigned char>> inputs;  // one per input, the task's dtypes
    std::vector<Patch> patches;                      // one per input (empty: not patched)
  };
  Status draw_base(uint64_t seed);
  // Writes the patched elements of input `i` of `buf`'s slot: base `base`'s patch values, or
  // its own values there (undoing the patch).
  void apply_patch(const SlotBuffers& buf, int slot, size_t i, int base, bool patched) const;

  const Task* task_;
  const ShapeInstance* shape_;
  int slots_ = 0;
  uint64_t seed_ = 0;
  std::vector<Base> bases_;
};

}  // namespace kf
