// The prelude of a generated C++ kernel: vector typedefs and the small static inline helpers
// the body calls, each emitted once and only when used. CodeGen asks for a helper by what it
// does and for which type, and gets back the name to call:
//
//   CppPrelude p;
//   std::string t = p.value_type(ir::Type::f32(16));   // "f32x16" (+ its typedef)
//   std::string ld = p.load(ir::Type::f32(16), ir::ScalarKind::f32, false);  // "kf_load_f32x16"
//   std::string text = p.render();   // typedefs first, then helpers in first-use order
//
// Value representation (what the body computes with):
//   f32, bf16 → float;  f64 → double;  i32 → int32_t;  i64 → int64_t;  bool → bool;
//   vectors → GCC vector types f32xN, f64xN, i32xN, i64xN (bf16xN is carried as f32xN);
//   a vector bool is a lane mask i32xN (-1 true, 0 false).
// Storage (what buffers hold): float, double, kf::bf16, int32_t, int64_t, bool.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "ir/ir.h"

namespace kf {

class CppPrelude {
 public:
  // The C++ type of a value of type t (registers the vector typedef).
  std::string value_type(ir::Type t);
  // The C++ type of one stored element of kind k ("kf::bf16" for bf16).
  static std::string storage_type(ir::ScalarKind k);

  // Dense loads/stores of t.lanes() elements of storage kind k from a pointer; masked variants
  // take an i32xN mask (masked-off lanes load 0 and are not stored).
  std::string load(ir::Type t, ir::ScalarKind k, bool masked);
  std::string store(ir::Type t, ir::ScalarKind k, bool masked);
  // Gather/scatter through an i64xN index vector, optionally masked.
  std::string gather(ir::Type t, ir::ScalarKind k, bool masked);
  std::string scatter(ir::Type t, ir::ScalarKind k, bool masked);
  // kf_transpose_f32xN(d, ds, s, ss): d[r * ds + c] = s[c * ss + r] for r, c < N (N = lanes):
  // N rows loaded as vectors and transposed in registers (AVX-512 for 16, AVX for 8; a plain
  // loop where the target has neither).
  std::string transpose_f32(int lanes);

  std::string splat(ir::Type t);  // scalar → every lane of t
  std::string ramp(ir::Type t);   // (base, stride) → {base, base + stride, ...}
  // (count) → the i32xN mask of lanes l < count (a tail mask: ramp(b, 1, N) < xN(n) is
  // first_lanes(n - b)).
  std::string first_lanes(int lanes);
  std::string reduce(ir::ReduceOp op, ir::Type vector_type);
  std::string min_max(ir::BinOp op, ir::Type t);  // op is min or max
  std::string round_bf16(ir::Type t);             // float value(s) → nearest bf16 value(s)
  // A lane-wise math helper for vector t (scalars use builtins directly: see math_builtin).
  // With `approx` (the `approximate` primitive), f32 exp/log/tanh/erf/sigmoid use the fast forms
  // (kf_exp_fast_f32x16, ...), and a scalar t gets one too: the 4-lane form on a broadcast.
  std::string math(ir::MathFn fn, ir::Type t, bool approx = false);
  // Whether fn of t has a fast form (f32 and bf16 exp, log, tanh, erf, sigmoid).
  static bool has_fast_form(ir::MathFn fn, ir::Type t);
  // exp and sigmoid of f32 vectors as a polynomial (no libm call per lane).
  std::string vector_exp_f32(ir::MathFn fn, ir::Type t, bool approx = false);
  // erf and tanh of f32 vectors, from the vector exp and fitted polynomials.
  std::string vector_erf_tanh_f32(ir::MathFn fn, ir::Type t, bool approx = false);
  // log of f32 vectors as a polynomial (`approximate` uses it as is).
  std::string vector_log_f32(ir::Type t);
  // The scalar expression of fn applied to argument texts (f32/bf16 use float builtins).
  static std::string math_builtin(ir::MathFn fn, ir::Type scalar,
                                  const std::vector<std::string>& args);
  std::string heap_alloc();  // kf_alloc(bytes): 64-byte aligned, never null for 0 bytes
  // kf_scratch(slot, bytes): a 64-byte aligned buffer kept across calls (per slot and thread),
  // for intermediates allocated once per call; slots are 0 .. kScratchSlots - 1.
  static constexpr int kScratchSlots = 32;
  std::string scratch_alloc();
  // A non-temporal (cache-bypassing) store of an f32 vector of 8 or 16 lanes: movntps where
  // the address is aligned to the vector, a plain store elsewhere.
  std::string stream_store(ir::Type t);
  // sfence: orders the non-temporal stores before whatever follows (a thread's last row,
  // the kernel's return).
  std::string stream_fence();
  // kf_prefetch(p, i): a cache prefetch of &p[i], its address computed in integer arithmetic
  // (i may run past the end of the buffer).
  std::string prefetch();
  // kf_num_threads(): the OpenMP thread count a parallel loop runs on (ir::kNumThreadsVar).
  std::string num_threads();

  bool uses_heap() const { return uses_heap_; }
  std::string render() const;

 private:
  std::string vector_typedef(const std::string& elem, const std::string& name, int bytes);
  std::string mask_type(int lanes);
  std::string u16_type(int lanes);
  std::string u32_type(int lanes);
  // Registers a helper's definition once under its name; returns the name.
  std::string define(const std::string& name, const std::string& text);

  std::set<std::string> typedef_names_, helper_names_;
  std::vector<std::string> typedefs_, helpers_;
  bool uses_heap_ = false;
};

}  // namespace kf
