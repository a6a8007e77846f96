// Internals of the signature parser (signature_parse.h), shared by its files: signature_parse.cpp
// (declarations and parameters), signature_types.cpp (the type names it maps onto a task's
// signature, default arguments) and find_kernel.cpp (the kernel in a source file). Internal to
// the task module.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "support/status.h"
#include "task/cpp_lexer.h"
#include "task/dtype.h"
#include "task/signature_parse.h"

namespace kf {

// A word that names a type (a keyword or a standard typedef): it cannot be a parameter's name.
bool is_type_word(std::string_view word);

// One spelling per type: leading "::" and "std::" dropped, "bf16" -> "kf::bf16", every spelling of
// the accumulator type ("acc_t<T>", "typename kf::acc_type<T>::type") -> "kf::acc_t<T>", and the
// integer keywords in one order ("long int" -> "long", "signed" -> "int", "unsigned int" ->
// "unsigned").
std::string normalize_type(std::string base);

// float -> f32, double -> f64, kf::bf16 -> bf16.
std::optional<DType> element_dtype(std::string_view base);
// The types a tensor of integers may have: int / int32_t -> i32, int64_t / long -> i64 (the same
// types as the kernel ABI's int32_t and int64_t on LP64 Linux).
std::optional<DType> integer_tensor_dtype(std::string_view base);
// Every integer type a size may be passed as (int, size_t, int64_t, unsigned long, ...).
bool is_integer_type(std::string_view base);
// Whether a size of this type is already the kernel ABI's int64_t (int64_t, long).
bool is_int64_type(std::string_view base);

// A default argument's value when tokens [b, e) are a number with an optional sign ("0.5f",
// "-1", "1e-5"); nullopt for anything else.
std::optional<double> parse_default_number(const std::vector<CppToken>& t, size_t b, size_t e);

// Parses the function head in tokens [b, e) of `source` ("[template <...>] void NAME(PARAMS)
// [noexcept]"); errors read "line L: ...". Sets *open and *close to the indices of the
// parameter list's parentheses.
Expected<ParsedSignature> parse_function_head(const std::vector<CppToken>& t,
                                              std::string_view source, size_t b, size_t e,
                                              size_t* open, size_t* close);

}  // namespace kf
