// A schedule is a trace: the list of primitive applications, with their arguments, that turns
// the default (naive) loop nest into a fast one. It serializes to text, one primitive per line,
// and replays exactly; its hash is part of a generated candidate's identity. docs/schedule.md is
// the reference for the syntax and for what each primitive does.
//
//   # 08_gemm: 6x32 register tile, packed B panel, 16 lanes
//   cache_write C C_acc
//   split C.i i.o i.i 6
//   reorder C j.o i.o i.i j.i
//   vectorize C_acc.j 16
//
//   Expected<Schedule> s = parse_schedule(text, "gemm.sched");  // "gemm.sched:3: expected ..."
//   s->to_string();   // canonical text (comments and extra spaces dropped)
//   s->hash();        // 32 hex digits of the canonical text
//
// Parsing checks the shape of each line (the primitive's name, the number and form of its
// arguments); whether a primitive is legal for a given pipeline is decided when it is applied
// (primitives.h).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "support/status.h"

namespace kf::sched {

enum class PrimitiveKind {
  split,
  tile,
  reorder,
  fuse,
  vectorize,
  unroll,
  parallel,
  compute_at,
  compute_inline,
  compute_root,
  cache_read,
  cache_write,
  rfactor,
  reorder_storage,
  nontemporal,
  prefetch,
  double_buffer,
  reciprocal,
  hoist,
  vectorize_reductions,
  approximate,
  align_storage,
  hoist_gathers,
  phase_split,
  online_softmax,
  mask_range,
  specialize_uniform
};

std::string to_string(PrimitiveKind k);

struct Primitive {
  PrimitiveKind kind = PrimitiveKind::split;
  std::vector<std::string> args;  // as written: names, STAGE.LOOP references, integers
  int line = 0;                   // line in the schedule file (0 when built in code)

  std::string to_string() const;  // "split C.i i.o i.i 32"
};

struct Schedule {
  std::string file;  // used in error messages
  std::vector<Primitive> steps;

  std::string to_string() const;  // one primitive per line
  std::string hash() const;       // of to_string(); "" is hashed too (the default schedule)
  bool empty() const { return steps.empty(); }
};

// Parses one primitive (no comment, no newline). Errors: "expected ..." without a location.
Expected<Primitive> parse_primitive(std::string_view text);

// Parses a schedule file. `#` starts a comment; blank lines are ignored. Errors read
// "FILE:LINE: expected ...".
Expected<Schedule> parse_schedule(std::string_view text, const std::string& file);

// A STAGE.LOOP reference split at its first dot: {"C", "j.i"} for "C.j.i".
struct LoopRef {
  std::string stage, loop;
};
LoopRef split_loop_ref(const std::string& ref);

}  // namespace kf::sched
