// A kernel's C++ signature read from a user's text (`kforge new --signature "void f(...)"`) or
// found in a user's file (`kforge new --from reference.cpp`), mapped onto a task's signature:
//
//   const float* x      -> input tensor x (f32)        const T* x   (in a template over T)
//   float* y            -> output tensor y (f32)       T* y
//   const int32_t* idx  -> input tensor idx (i32)      int64_t* -> i64
//   int64_t n, int n, size_t n, ...   -> dim n (the kernel ABI passes sizes as int64_t)
//   float a, double a   -> scalar a (the task's floating dtype); `float a = 0.5f` gives its default
//
//   auto sig = parse_signature("void scale_add(const float* x, float* y, int64_t n, float a)");
//   if (!sig) return sig.error();     // "column 27: parameter 'y' ..."
//   sig->params[1].role == ParamRole::output;
//
// The text is untrusted: every parse ends in a value or an error that says where (line and column
// of the token) and what was expected; nothing recurses on the input's nesting. Accepted: `const`
// on either side of the element type, `__restrict__`/`__restrict`, array parameters (`float x[]`),
// `std::` spellings, `template <typename T>` (one type parameter), `static`/`inline`/`extern "C"`
// before the return type, which must be void. Refused, with the reason: references, pointers to
// pointers, `void*`, bool/char/class-type parameters, unnamed parameters, other return types.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "support/status.h"
#include "task/dtype.h"

namespace kf {

enum class ParamRole { input, output, dim, scalar };

struct SignatureParam {
  std::string name;
  ParamRole role = ParamRole::dim;
  // Tensors: the element dtype (a template's T-tensors have the task's dtype, chosen later).
  // Scalars: the dtype of a plain function's float/double. Dims: i64.
  DType dtype = DType::i64;
  bool element = false;  // the type is the template parameter or the kernel's element type
  std::string base;      // the type without qualifiers and `*`: "float", "int", "size_t", "T"
  std::string declared;  // the parameter as written, without its name: "const float* __restrict__"
  bool value_const = false;  // a by-value parameter declared const
  bool restrict_ptr = false;
  std::optional<double> default_value;  // a scalar's default argument (`float a = 0.5f`)
  int line = 1, column = 1;
};

struct ParsedSignature {
  std::string function;
  std::string template_param;          // "T" for `template <typename T>`; "" for a plain function
  std::optional<DType> dtype;          // the floating dtype a plain function's tensors fix
  std::vector<SignatureParam> params;  // in the order written

  bool is_template() const { return !template_param.empty(); }
  // Inputs, outputs, dims, scalars, each in the order written: the kernel ABI's order.
  std::vector<SignatureParam> abi_order() const;
  bool in_abi_order() const;
  size_t count(ParamRole r) const;
};

// Where a kernel function is in its source file (byte offsets into the text).
struct FunctionSite {
  ParsedSignature signature;
  size_t head_begin = 0;    // the first token of its declaration (`template`, `static`, `void`)
  size_t params_begin = 0;  // just after '('
  size_t params_end = 0;    // at ')'
  size_t body_begin = 0;    // at '{'
  size_t body_end = 0;      // just after '}'
  int line = 1;
};

// Parses one declaration: "[template <typename T>] void NAME(PARAMS)", optionally followed by
// `;` or an empty body `{}`. Errors read "column C: ..." (with "line L, " when the text has
// several lines).
Expected<ParsedSignature> parse_signature(std::string_view text);

// Refuses a signature that cannot be a task's kernel: no input or no output tensor, more than the
// loader's limits, a parameter named like the function.
Status check_kernel_signature(const ParsedSignature& sig);

// The kernel defined in C++ source text: the void function at global scope named `function`, or,
// when `function` is empty, the only void function with pointer parameters that passes
// check_kernel_signature. Errors read "line L: ..." and, when several functions qualify or none
// does, name the functions seen.
Expected<FunctionSite> find_kernel(std::string_view source, std::string_view function);

// A valid C++ identifier made of ASCII letters, digits and '_'.
bool is_plain_identifier(std::string_view s);

}  // namespace kf
