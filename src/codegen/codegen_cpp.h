// C++ code generation: turns a LoweredFunc into one self-contained translation unit that defines
// the task's function with its kernel-ABI signature (docs/task-format.md); the harness appends
// its entry shim. The output is meant to be read: named loops, a comment per stage, OpenMP
// pragmas for parallel loops, and vectors as GCC vector extensions (`f32x16`), never
// <immintrin.h> (compile time).
//
//   LoweredFunc f = lower(...);                       // or built by hand, see ir/ir.h
//   f.body = vectorize_loops(unroll_loops(simplify(f.body)));
//   std::string src = codegen_cpp(f, CodegenTarget::avx512);
//   Expected<RunResult> r = evaluate(task, src, options);
//
// What it emits:
// - headers: <cstdint>; <kforge/kernel.h> when bf16 appears; <cstdlib> for heap allocations.
//   Math uses GCC builtins (__builtin_expf, ...), which need no header.
// - per vector type used: a typedef (`typedef float f32x16 __attribute__((vector_size(64)))`)
//   and small static inline helpers (dense load/store through memcpy, masked load/store and
//   gather/scatter as lane loops, splat, tail masks, tree reductions, lane-wise math), only
//   those the body uses.
// - the signature with `__restrict__` tensors (the ABI's buffers never alias); a parameter the
//   body does not use is commented out (`int64_t /*K*/`).
// - For loops as `for (int64_t i = min; i < min + extent; ++i)`; a parallel loop gets
//   `#pragma omp parallel for` (a parallel loop nested in one runs serially, with a comment);
//   loops of kind vectorized/unrolled that reach codegen (the passes left them: non-constant
//   extent) are emitted serially with a comment.
// - a stack Allocate of constant extent as a local array (zero-initialized up to 1 KiB, so the
//   compiler never warns about maybe-uninitialized reads); one accessed only as whole vectors at
//   constant offsets as an array of vectors kept in registers (vector_registers.h); a heap
//   Allocate (or a stack one of non-constant extent) through aligned_alloc and free.
// - LetStmt as `const T name = value;` (a new C++ scope when a name repeats, e.g. in unrolled
//   copies); Let as a GCC statement expression; ProducerConsumer as `// produce NAME`.
// - bf16 values are carried as float; bf16 arithmetic rounds to bf16 after each operation.
//
// Requires a well-formed IR (every Var bound by a loop, Let or parameter; every buffer a
// parameter or an Allocate); violations are kforge bugs and stop with KF_CHECK.
#pragma once

#include <string>
#include <vector>

#include "ir/ir.h"

namespace kf {

// The instruction set the code is written for; it only sets the natural vector width (for
// `preferred_lanes`) — the code itself is portable GCC/Clang C++, compiled with -march=native.
enum class CodegenTarget { avx512, avx2, scalar };

std::string to_string(CodegenTarget t);

// f32 lanes of one native vector register: 16, 8 or 1.
int preferred_lanes(CodegenTarget t, ir::ScalarKind kind = ir::ScalarKind::f32);

std::string codegen_cpp(const ir::LoweredFunc& f, CodegenTarget target);

struct CodegenOptions {
  // The profiler's instrumented build: every stage produced at the function's top level (not
  // inside another stage's loops; a stage computed inside it counts as its time) is timed with
  // the monotonic clock on each call, and the shared object also exports
  //   extern "C" int kf_stage_times(int64_t* ns, int cap);
  // which copies the nanoseconds each timed stage has taken since the library was loaded (in
  // the order of GeneratedCpp::timed_stages, at most `cap`) and returns how many stages are
  // timed. Such a build is evidence only, never judged: the judge times with its own clock.
  bool stage_timers = false;
};

struct GeneratedCpp {
  std::string source;
  std::vector<std::string> timed_stages;  // stage names, in kf_stage_times order
};

GeneratedCpp codegen_cpp(const ir::LoweredFunc& f, CodegenTarget target,
                         const CodegenOptions& options);

// The C++ identifier codegen uses for an IR name ("C.s0.i" → "C_s0_i").
std::string cpp_name(const std::string& ir_name);

}  // namespace kf
