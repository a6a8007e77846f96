// The schedule primitives, one row each: the word and operands the trace parser reads and
// prints (trace.h), the function apply_primitive dispatches to (primitives.h), and how often the
// random-schedule fuzzer draws it (random_schedule.h). A new primitive is one PrimitiveKind, one
// row here and its apply function; docs/schedule.md's table is checked against these rows
// (tests/unit/schedule_primitive_table_test.cpp).
//
//   const PrimitiveInfo& info = primitive_info(PrimitiveKind::split);
//   info.usage();                           // "split STAGE.LOOP OUTER INNER FACTOR"
//   Status s = info.apply(pipeline, prim);  // checks and transforms (apply_primitive validates)
#pragma once

#include <string>
#include <vector>

#include "schedule/pipeline.h"
#include "schedule/trace.h"
#include "support/status.h"

namespace kf::sched {

// The argument forms of a primitive.
enum class PrimitiveArg {
  name,      // an identifier (dots allowed): a stage, a loop, a new name
  loop_ref,  // STAGE.LOOP
  integer,   // a (signed) integer
};

struct PrimitiveInfo {
  PrimitiveKind kind;
  const char* word;
  const char* operands;  // for people: "STAGE.LOOP OUTER INNER FACTOR"
  std::vector<PrimitiveArg> args;
  int optional = 0;       // how many trailing args may be left out
  bool variadic = false;  // the last arg may repeat
  // Transforms `p` (arguments already checked for form by the parser); fails naming why the
  // primitive is illegal here. apply_primitive validates the result and keeps `p` on failure.
  Status (*apply)(Pipeline& p, const Primitive& prim) = nullptr;
  int random_weight = 0;  // relative frequency in random schedules (0: never drawn)

  std::string usage() const { return std::string(word) + " " + operands; }
};

// Every primitive, in PrimitiveKind order.
const std::vector<PrimitiveInfo>& primitive_table();
const PrimitiveInfo& primitive_info(PrimitiveKind kind);

}  // namespace kf::sched
