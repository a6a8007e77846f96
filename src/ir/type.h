// Value types of the loop-nest IR: a scalar kind (f32, f64, bf16, i32, i64, boolean) and a lane
// count (1 for scalars, a power of two up to 64 for vectors).
//
//   Type t = Type::f32(16);            // sixteen f32 lanes
//   t.scalar() == Type::f32();         // true
//   Type idx = type_of(DType::i64);    // the index type of every loop variable
//   to_string(Type::f32(16)) == "f32x16"
//
// bf16 is a storage type: a bf16 value is a float that is exactly representable in bf16, and
// arithmetic whose type is bf16 rounds its result to bf16 (codegen computes in float).
#pragma once

#include <string>

#include "task/dtype.h"

namespace kf::ir {

enum class ScalarKind { f32, f64, bf16, i32, i64, boolean };

class Type {
 public:
  constexpr Type() = default;
  constexpr Type(ScalarKind kind, int lanes) : kind_(kind), lanes_(lanes) {}

  static constexpr Type f32(int lanes = 1) { return {ScalarKind::f32, lanes}; }
  static constexpr Type f64(int lanes = 1) { return {ScalarKind::f64, lanes}; }
  static constexpr Type bf16(int lanes = 1) { return {ScalarKind::bf16, lanes}; }
  static constexpr Type i32(int lanes = 1) { return {ScalarKind::i32, lanes}; }
  static constexpr Type i64(int lanes = 1) { return {ScalarKind::i64, lanes}; }
  static constexpr Type boolean(int lanes = 1) { return {ScalarKind::boolean, lanes}; }

  constexpr ScalarKind kind() const { return kind_; }
  constexpr int lanes() const { return lanes_; }
  constexpr bool is_scalar() const { return lanes_ == 1; }
  constexpr bool is_vector() const { return lanes_ > 1; }
  constexpr bool is_float() const {
    return kind_ == ScalarKind::f32 || kind_ == ScalarKind::f64 || kind_ == ScalarKind::bf16;
  }
  constexpr bool is_int() const { return kind_ == ScalarKind::i32 || kind_ == ScalarKind::i64; }
  constexpr bool is_bool() const { return kind_ == ScalarKind::boolean; }
  // Size of one lane in bytes as codegen stores it (bf16: 2, boolean: 1).
  int bytes() const;

  constexpr Type scalar() const { return {kind_, 1}; }
  constexpr Type with_lanes(int lanes) const { return {kind_, lanes}; }

  constexpr bool operator==(const Type& o) const { return kind_ == o.kind_ && lanes_ == o.lanes_; }
  constexpr bool operator!=(const Type& o) const { return !(*this == o); }

 private:
  ScalarKind kind_ = ScalarKind::i64;
  int lanes_ = 1;
};

// True for 1, 2, 4, ..., 64: the lane counts codegen supports.
bool is_valid_lanes(int lanes);

// "f32", "i64", "bool", "f32x16".
std::string to_string(ScalarKind k);
std::string to_string(Type t);

// The scalar IR type of a task dtype.
Type type_of(DType t);

}  // namespace kf::ir
