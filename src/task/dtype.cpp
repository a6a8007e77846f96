#include "task/dtype.h"

#include <cmath>
#include <cstdint>
#include <cstring>

#include "kforge/kernel.h"

namespace kf {

std::string_view dtype_name(DType t) {
  switch (t) {
    case DType::f32:
      return "f32";
    case DType::f64:
      return "f64";
    case DType::bf16:
      return "bf16";
    case DType::i32:
      return "i32";
    case DType::i64:
      return "i64";
  }
  return "?";
}

std::optional<DType> parse_dtype(std::string_view s) {
  for (DType t : {DType::f32, DType::f64, DType::bf16, DType::i32, DType::i64})
    if (dtype_name(t) == s) return t;
  return std::nullopt;
}

size_t dtype_size(DType t) {
  switch (t) {
    case DType::f32:
      return 4;
    case DType::f64:
      return 8;
    case DType::bf16:
      return 2;
    case DType::i32:
      return 4;
    case DType::i64:
      return 8;
  }
  return 0;
}

bool is_floating(DType t) {
  switch (t) {
    case DType::f32:
    case DType::f64:
    case DType::bf16:
      return true;
    case DType::i32:
    case DType::i64:
      return false;
  }
  return false;
}

std::string_view dtype_cpp(DType t) {
  switch (t) {
    case DType::f32:
      return "float";
    case DType::f64:
      return "double";
    case DType::bf16:
      return "kf::bf16";
    case DType::i32:
      return "int32_t";
    case DType::i64:
      return "int64_t";
  }
  return "?";
}

std::string_view scalar_cpp(DType t) {
  switch (t) {
    case DType::f32:
    case DType::bf16:
      return "float";
    case DType::f64:
      return "double";
    case DType::i32:
    case DType::i64:
      return "int64_t";
  }
  return "?";
}

double load_as_double(const void* data, DType t, size_t i) {
  switch (t) {
    case DType::f32:
      return static_cast<const float*>(data)[i];
    case DType::f64:
      return static_cast<const double*>(data)[i];
    case DType::bf16:
      return bf16::to_float(static_cast<const uint16_t*>(data)[i]);
    case DType::i32:
      return static_cast<const int32_t*>(data)[i];
    case DType::i64:
      return static_cast<double>(static_cast<const int64_t*>(data)[i]);
  }
  return 0;
}

void store_from_double(void* data, DType t, size_t i, double v) {
  switch (t) {
    case DType::f32:
      static_cast<float*>(data)[i] = static_cast<float>(v);
      return;
    case DType::f64:
      static_cast<double*>(data)[i] = v;
      return;
    case DType::bf16:
      static_cast<uint16_t*>(data)[i] = bf16::from_float(static_cast<float>(v));
      return;
    case DType::i32:
      static_cast<int32_t*>(data)[i] = static_cast<int32_t>(std::llround(v));
      return;
    case DType::i64:
      static_cast<int64_t*>(data)[i] = std::llround(v);
      return;
  }
}

}  // namespace kf
