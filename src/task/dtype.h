// Element types of task tensors: names, sizes, C++ spellings, and conversion to/from double.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace kf {

enum class DType { f32, f64, bf16, i32, i64 };

std::string_view dtype_name(DType t);
std::optional<DType> parse_dtype(std::string_view s);
size_t dtype_size(DType t);
bool is_floating(DType t);
// The C++ type a candidate sees: "float", "double", "kf::bf16", "int32_t", "int64_t".
std::string_view dtype_cpp(DType t);
// The type of a floating scalar parameter for a task of this dtype (bf16 tasks get float).
std::string_view scalar_cpp(DType t);

// Element i of a buffer of dtype t, widened exactly to double.
double load_as_double(const void* data, DType t, size_t i);
// Stores v (rounded to the dtype; round-to-nearest-even for bf16) into element i.
void store_from_double(void* data, DType t, size_t i, double v);

}  // namespace kf
