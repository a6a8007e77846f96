// Naming helpers shared by the prelude's files (cpp_prelude.cpp, cpp_prelude_math.cpp).
#pragma once

#include <string>

#include "ir/ir.h"

namespace kf::prelude_detail {

// Helpers on bf16 values are the f32 ones (bf16 values are carried as float).
inline ir::Type value_kind(ir::Type t) {
  return t.kind() == ir::ScalarKind::bf16 ? ir::Type::f32(t.lanes()) : t;
}

inline std::string suffix(ir::Type t) {
  return ir::to_string(value_kind(t));
}

inline std::string float_suffix(ir::Type scalar) {
  return scalar.kind() == ir::ScalarKind::f64 ? "" : "f";
}

}  // namespace kf::prelude_detail
