#include "ir/type.h"

#include "support/check.h"

namespace kf::ir {

int Type::bytes() const {
  switch (kind_) {
    case ScalarKind::f32:
      return 4;
    case ScalarKind::f64:
      return 8;
    case ScalarKind::bf16:
      return 2;
    case ScalarKind::i32:
      return 4;
    case ScalarKind::i64:
      return 8;
    case ScalarKind::boolean:
      return 1;
  }
  return 0;
}

bool is_valid_lanes(int lanes) {
  return lanes >= 1 && lanes <= 64 && (lanes & (lanes - 1)) == 0;
}

std::string to_string(ScalarKind k) {
  switch (k) {
    case ScalarKind::f32:
      return "f32";
    case ScalarKind::f64:
      return "f64";
    case ScalarKind::bf16:
      return "bf16";
    case ScalarKind::i32:
      return "i32";
    case ScalarKind::i64:
      return "i64";
    case ScalarKind::boolean:
      return "bool";
  }
  return "?";
}

std::string to_string(Type t) {
  std::string s = to_string(t.kind());
  if (t.is_vector()) s += "x" + std::to_string(t.lanes());
  return s;
}

Type type_of(DType t) {
  switch (t) {
    case DType::f32:
      return Type::f32();
    case DType::f64:
      return Type::f64();
    case DType::bf16:
      return Type::bf16();
    case DType::i32:
      return Type::i32();
    case DType::i64:
      return Type::i64();
  }
  KF_CHECK(false) << "unknown dtype";
  return Type::i64();
}

}  // namespace kf::ir
