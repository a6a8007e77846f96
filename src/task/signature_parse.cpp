#include "task/signature_parse.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>
#include <set>

#include "support/text_scan.h"
#include "task/cpp_lexer.h"
#include "task/signature_internal.h"

namespace kf {
namespace {

using Tokens = std::vector<CppToken>;

// The loader's limits (task_loader_internal.h), checked here so `kforge new` refuses a kernel
// whose task could not load.
constexpr size_t kMaxNames = 64, kMaxTensors = 64, kMaxIdentifier = 128;

// Reads declarations from tokens; errors name the token's place: "line L" in a file, "column C"
// in a one-line signature.
class HeadParser {
 public:
  HeadParser(const Tokens& t, std::string_view source, bool file_mode)
      : t_(t), src_(source), file_mode_(file_mode) {}

  Status fail(size_t i, const std::string& what) const {
    if (t_.empty()) return Status::error(what);
    const CppToken& k = t_[std::min(i, t_.size() - 1)];
    if (file_mode_) return Status::error(fmt::format("line {}: {}", k.line, what));
    if (k.line > 1)
      return Status::error(fmt::format("line {}, column {}: {}", k.line, k.column, what));
    return Status::error(fmt::format("column {}: {}", k.column, what));
  }

  // The index of the token closing the bracket opened at `open` ('(' or '[' or '{'), or `end`.
  size_t match(size_t open, size_t end) const {
    const std::string_view o = t_[open].text;
    const std::string_view c = o == "(" ? ")" : o == "[" ? "]" : "}";
    int depth = 0;
    for (size_t i = open; i < end; ++i) {
      if (t_[i].kind != CppTokenKind::punct) continue;
      if (t_[i].text == o) ++depth;
      if (t_[i].text == c && --depth == 0) return i;
    }
    return end;
  }

  // Tokens [b, e): "[template <...>] specifiers void NAME ( PARAMS ) [noexcept]".
  Expected<ParsedSignature> head(size_t b, size_t e, size_t* open_out, size_t* close_out) const;

 private:
  Expected<size_t> template_header(size_t i, size_t e, ParsedSignature& sig) const;
  Status params(size_t b, size_t e, ParsedSignature& sig) const;
  Expected<SignatureParam> param(size_t b, size_t e, const std::string& tparam) const;
  Expected<std::string> type_words(const std::vector<size_t>& idx, SignatureParam& p, int* ptrs,
                                   bool* pointee_const) const;
  Status classify(size_t at, SignatureParam& p, int ptrs, bool pointee_const,
                  const std::string& tparam) const;

  const Tokens& t_;
  std::string_view src_;
  bool file_mode_;
};

Expected<size_t> HeadParser::template_header(size_t i, size_t e, ParsedSignature& sig) const {
  const std::string only = "kforge reads templates over one element type: template <typename T>";
  if (i + 1 >= e || !t_[i + 1].is("<")) return fail(i, "expected '<' after 'template'");
  size_t j = i + 2;
  if (j < e && (t_[j].is("typename") || t_[j].is("class")))
    ++j;
  else
    return fail(j, only);
  if (j >= e || !t_[j].is_identifier()) return fail(j, only);
  sig.template_param = std::string(t_[j].text);
  ++j;
  if (j < e && t_[j].is("=")) {  // a default: skip it up to the closing '>'
    int depth = 0;
    while (j < e && !(depth == 0 && (t_[j].is(">") || t_[j].is(">>") || t_[j].is(",")))) {
      if (t_[j].is("<") || t_[j].is("(")) ++depth;
      if (t_[j].is(">") || t_[j].is(")")) --depth;
      ++j;
    }
  }
  if (j >= e || !t_[j].is(">")) return fail(j, only);
  return j + 1;
}

Expected<ParsedSignature> HeadParser::head(size_t b, size_t e, size_t* open_out,
                                           size_t* close_out) const {
  ParsedSignature sig;
  size_t i = b;
  if (i < e && t_[i].is("template")) {
    auto next = template_header(i, e, sig);
    if (!next) return next.error();
    i = *next;
  }
  // Specifiers and the return type, up to the '(' after the function's name.
  std::vector<size_t> words;
  size_t open = e;
  for (size_t j = i; j < e; ++j) {
    const CppToken& k = t_[j];
    if (k.is("__attribute__") && j + 1 < e && t_[j + 1].is("(")) {
      j = match(j + 1, e);
      continue;
    }
    if (k.is("[") && j + 1 < e && t_[j + 1].is("[")) {
      j = match(j, e);
      continue;
    }
    if (k.is("extern") && j + 1 < e && t_[j + 1].kind == CppTokenKind::string) {
      ++j;
      continue;
    }
    if (k.is("(")) {
      open = j;
      break;
    }
    words.push_back(j);
  }
  if (open >= e) return fail(e, "expected a function declaration: void NAME(PARAMETERS)");
  if (words.empty() || !t_[words.back()].is_identifier())
    return fail(open, "expected the function's name before '('");
  const size_t name_at = words.back();
  words.pop_back();
  sig.function = std::string(t_[name_at].text);
  if (!words.empty() && t_[words.back()].is("::"))
    return fail(name_at, "'" + excerpt(sig.function) +
                             "' is qualified: the kernel is a free function at global scope");
  std::string ret;
  for (size_t w : words) {
    const std::string_view x = t_[w].text;
    if (x == "static" || x == "inline" || x == "constexpr") continue;
    ret += (ret.empty() ? "" : " ") + std::string(x);
  }
  if (ret != "void")
    return fail(name_at,
                fmt::format("'{}' returns {}: a kernel returns void and writes its "
                            "outputs through pointers",
                            excerpt(sig.function), ret.empty() ? "nothing" : excerpt(ret)));
  if (!is_plain_identifier(sig.function))
    return fail(name_at, "the function's name must be an ASCII C++ identifier");
  const size_t close = match(open, e);
  if (close >= e) return fail(open, "'(' without a matching ')'");
  size_t after = close + 1;
  if (after < e && t_[after].is("noexcept")) {
    ++after;
    if (after < e && t_[after].is("(")) after = match(after, e) + 1;
  }
  if (after < e)
    return fail(after, "unexpected '" + excerpt(t_[after].text) + "' after the parameter list");
  KF_RETURN_IF_ERROR(params(open + 1, close, sig));
  if (open_out) *open_out = open;
  if (close_out) *close_out = close;
  return sig;
}

Status HeadParser::params(size_t b, size_t e, ParsedSignature& sig) const {
  if (b == e || (e == b + 1 && t_[b].is("void"))) return ok_status();
  int depth = 0;
  size_t start = b;
  for (size_t i = b; i <= e; ++i) {
    if (i < e) {
      const std::string_view x = t_[i].text;
      if (t_[i].kind != CppTokenKind::punct) continue;
      if (x == "(" || x == "[" || x == "{" || x == "<") ++depth;
      if (x == ")" || x == "]" || x == "}" || x == ">") --depth;
      if (x == ">>") depth -= 2;
      if (x != "," || depth > 0) continue;
    }
    if (start == i) return fail(i, "empty parameter");
    // The loader allows 64 of each role; past that the name check below would be quadratic.
    if (sig.params.size() >= 4 * kMaxNames)
      return fail(start, fmt::format("more than {} parameters", 4 * kMaxNames));
    auto p = param(start, i, sig.template_param);
    if (!p) return p.error();
    for (const SignatureParam& q : sig.params)
      if (q.name == p->name) return fail(start, "two parameters named '" + p->name + "'");
    sig.params.push_back(*p);
    start = i + 1;
  }
  // A plain function's floating tensors fix the task's dtype: they must agree.
  if (!sig.is_template())
    for (const SignatureParam& p : sig.params) {
      const bool tensor = p.role == ParamRole::input || p.role == ParamRole::output;
      if (!tensor || !is_floating(p.dtype)) continue;
      if (sig.dtype && *sig.dtype != p.dtype)
        return Status::error(fmt::format(
            "tensor '{}' is {} where an earlier tensor is {}: the floating tensors of a task share "
            "one dtype",
            p.name, p.base, dtype_cpp(*sig.dtype)));
      sig.dtype = p.dtype;
    }
  for (SignatureParam& p : sig.params) {
    if (p.role != ParamRole::scalar || sig.is_template()) continue;
    const DType d = sig.dtype.value_or(DType::f32);
    p.element = p.dtype == (d == DType::bf16 ? DType::f32 : d);
  }
  return ok_status();
}

Expected<SignatureParam> HeadParser::param(size_t b, size_t e, const std::string& tparam) const {
  SignatureParam p;
  p.line = t_[b].line;
  p.column = t_[b].column;
  if (t_[b].is("...")) return fail(b, "variadic parameters have no place in a kernel");
  // A default argument: `float a = 0.5f` gives the scalar's default.
  size_t decl_end = e;
  int depth = 0;
  for (size_t i = b; i < e; ++i) {
    if (t_[i].is("(") || t_[i].is("<") || t_[i].is("[")) ++depth;
    if (t_[i].is(")") || t_[i].is(">") || t_[i].is("]")) --depth;
    if (depth == 0 && t_[i].is("=")) {
      decl_end = i;
      p.default_value = parse_default_number(t_, i + 1, e);
      break;
    }
  }
  // The declaration's tokens without attributes.
  std::vector<size_t> idx;
  for (size_t i = b; i < decl_end; ++i) {
    if (t_[i].is("__attribute__") && i + 1 < decl_end && t_[i + 1].is("(")) {
      i = match(i + 1, decl_end);
      continue;
    }
    if (t_[i].is("[") && i + 1 < decl_end && t_[i + 1].is("[")) {
      i = match(i, decl_end);
      continue;
    }
    idx.push_back(i);
  }
  int arrays = 0;
  // An array parameter (`float y[]`, `const float x[N]`) is a pointer.
  if (!idx.empty() && t_[idx.back()].is("]")) {
    size_t open = idx.size();
    while (open > 0 && !t_[idx[open - 1]].is("[")) --open;
    if (open == 0) return fail(idx.back(), "']' without '['");
    if (idx.size() - open > 2) return fail(idx[open - 1], "expected '[]' or '[SIZE]'");
    idx.resize(open - 1);
    ++arrays;
    if (!idx.empty() && t_[idx.back()].is("]"))
      return fail(idx.back(),
                  "a multi-dimensional array parameter: pass a pointer (const float* x) "
                  "and its sizes as dims");
  }
  if (idx.empty()) return fail(b, "expected a parameter");
  const CppToken& name = t_[idx.back()];
  if (!name.is_identifier() || is_type_word(name.text) || name.is(tparam))
    return fail(idx.back(),
                "a parameter without a name: kforge names the task's tensors, dims and scalars "
                "after the parameters");
  if (!is_plain_identifier(name.text))
    return fail(idx.back(),
                "parameter name '" + excerpt(name.text) + "' is not an ASCII C++ identifier");
  p.name = std::string(name.text);
  idx.pop_back();
  if (idx.empty()) return fail(b, "parameter '" + p.name + "' has no type");
  p.declared = std::string(
      src_.substr(t_[idx.front()].offset, t_[idx.back()].end() - t_[idx.front()].offset));
  bool pointee_const = false;
  int ptrs = 0;
  auto base = type_words(idx, p, &ptrs, &pointee_const);
  if (!base) return base.error();
  p.base = *base;
  ptrs += arrays;
  if (ptrs > 0) p.value_const = false;  // the const was the pointee's
  KF_RETURN_IF_ERROR(classify(idx.front(), p, ptrs, pointee_const, tparam));
  if (p.role != ParamRole::scalar) p.default_value.reset();
  return p;
}

// The base type's words ("unsigned long", "std::int64_t", "kf::acc_t<T>"), with the pointer
// count and the qualifiers noted in `p`.
Expected<std::string> HeadParser::type_words(const std::vector<size_t>& idx, SignatureParam& p,
                                             int* ptrs, bool* pointee_const) const {
  std::string base;
  bool glue = false;  // the next word attaches without a space (after "::" or inside <>)
  int angle = 0;
  for (size_t n = 0; n < idx.size(); ++n) {
    const CppToken& k = t_[idx[n]];
    const std::string_view x = k.text;
    if (angle > 0) {
      if (x == "<") ++angle;
      if (x == ">") --angle;
      if (x == ">>") angle -= 2;
      base += std::string(x);
      if (angle < 0) return fail(idx[n], "unbalanced '>' in a parameter's type");
      continue;
    }
    if (x == "const" || x == "volatile") {
      if (*ptrs == 0) *pointee_const = true;
      if (*ptrs == 0 && x == "const") p.value_const = true;
      continue;
    }
    if (x == "__restrict__" || x == "__restrict" || x == "restrict") {
      p.restrict_ptr = *ptrs > 0;
      continue;
    }
    if (x == "typename" || x == "register") continue;
    if (x == "*") {
      ++*ptrs;
      continue;
    }
    if (x == "&" || x == "&&")
      return fail(idx[n], "'" + p.name +
                              "' is a reference: the kernel ABI passes tensors as pointers "
                              "(const float* x for an input, float* y for an output) and sizes "
                              "and scalars by value");
    if (x == "<") {
      if (*ptrs > 0) return fail(idx[n], "unexpected '<' after '*'");
      angle = 1;
      base += "<";
      continue;
    }
    if (x == "::") {
      base += "::";
      glue = true;
      continue;
    }
    if (!k.is_identifier())
      return fail(idx[n], "unexpected '" + excerpt(x) + "' in the type of '" + p.name + "'");
    if (*ptrs > 0)
      return fail(idx[n],
                  "unexpected '" + excerpt(x) + "' after '*' (a ',' missing between parameters?)");
    if (!base.empty() && !glue) base += " ";
    base += std::string(x);
    glue = false;
  }
  if (angle != 0) return fail(idx.back(), "unbalanced '<' in a parameter's type");
  return normalize_type(base);
}

Status HeadParser::classify(size_t at, SignatureParam& p, int ptrs, bool pointee_const,
                            const std::string& tparam) const {
  const std::string& b = p.base;
  const std::string q = "'" + p.name + "'";
  if (b.empty()) return fail(at, "parameter " + q + " has no type");
  if (ptrs >= 2)
    return fail(at, q + " is a pointer to a pointer: a tensor is one dense row-major buffer "
                        "(const float* x), its sizes are dims");
  const std::optional<DType> elem = element_dtype(b);
  const bool is_t = !tparam.empty() && b == tparam;
  if (ptrs == 1) {
    p.role = pointee_const ? ParamRole::input : ParamRole::output;
    if (is_t) {
      p.element = true;
      p.dtype = DType::f32;  // the task's dtype, chosen with the task
      return ok_status();
    }
    if (elem) {
      if (!tparam.empty())
        return fail(at, fmt::format("tensor {} is {} in a template over {}: make it {} (the "
                                    "oracle instantiates {} = double)",
                                    q, b, tparam, tparam, tparam));
      p.element = true;
      p.dtype = *elem;
      return ok_status();
    }
    if (auto it = integer_tensor_dtype(b)) {
      p.dtype = *it;
      return ok_status();
    }
    if (b == "void")
      return fail(at, q + " is void*: give the element type (const float* x, float* y)");
    return fail(at, fmt::format("tensor {} has elements of type '{}': tensors are float, double, "
                                "kf::bf16, int32_t or int64_t",
                                q, excerpt(b)));
  }
  if (is_integer_type(b)) {
    p.role = ParamRole::dim;
    p.dtype = DType::i64;
    return ok_status();
  }
  if (is_t || b == "kf::acc_t<" + tparam + ">") {
    p.role = ParamRole::scalar;
    p.element = true;
    p.dtype = DType::f32;
    return ok_status();
  }
  if (b == "float" || b == "double") {
    p.role = ParamRole::scalar;
    p.dtype = b == "float" ? DType::f32 : DType::f64;
    return ok_status();
  }
  if (b == "kf::bf16") return fail(at, "scalar " + q + " is kf::bf16: pass scalars as float");
  if (b == "bool")
    return fail(at, q + " is a bool: the kernel ABI has none; make it an integer (a dim) or a "
                        "float (a scalar)");
  return fail(at, fmt::format("{} has type '{}', which kforge cannot map: tensors are pointers to "
                              "float, double, kf::bf16, int32_t or int64_t; sizes are integers; "
                              "scalars are float or double",
                              q, excerpt(b)));
}

}  // namespace

bool is_plain_identifier(std::string_view s) {
  if (s.empty() || (s[0] >= '0' && s[0] <= '9')) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
  });
}

std::vector<SignatureParam> ParsedSignature::abi_order() const {
  std::vector<SignatureParam> out;
  for (ParamRole r : {ParamRole::input, ParamRole::output, ParamRole::dim, ParamRole::scalar})
    for (const SignatureParam& p : params)
      if (p.role == r) out.push_back(p);
  return out;
}

bool ParsedSignature::in_abi_order() const {
  const std::vector<SignatureParam> o = abi_order();
  for (size_t i = 0; i < o.size(); ++i)
    if (o[i].name != params[i].name) return false;
  return true;
}

size_t ParsedSignature::count(ParamRole r) const {
  return std::count_if(params.begin(), params.end(),
                       [r](const SignatureParam& p) { return p.role == r; });
}

Expected<ParsedSignature> parse_signature(std::string_view text) {
  auto toks = lex_cpp(text);
  if (!toks) return toks.error();
  if (toks->empty()) return Status::error("empty signature: expected void NAME(PARAMETERS)");
  size_t e = toks->size();
  // A trailing ';' or an empty body '{}'.
  if ((*toks)[e - 1].is(";"))
    --e;
  else if (e >= 2 && (*toks)[e - 2].is("{") && (*toks)[e - 1].is("}"))
    e -= 2;
  for (size_t i = 0; i < e; ++i)
    if ((*toks)[i].kind == CppTokenKind::directive)
      return HeadParser(*toks, text, false).fail(i, "a preprocessor line in a signature");
  return HeadParser(*toks, text, false).head(0, e, nullptr, nullptr);
}

Expected<ParsedSignature> parse_function_head(const std::vector<CppToken>& t,
                                              std::string_view source, size_t b, size_t e,
                                              size_t* open, size_t* close) {
  return HeadParser(t, source, true).head(b, e, open, close);
}

Status check_kernel_signature(const ParsedSignature& sig) {
  if (sig.count(ParamRole::input) == 0)
    return Status::error("'" + sig.function +
                         "' has no input tensor: an input is a pointer to const (const float* x)");
  if (sig.count(ParamRole::output) == 0)
    return Status::error("'" + sig.function +
                         "' has no output tensor: an output is a pointer to non-const (float* y)");
  for (auto [role, limit, what] : {std::tuple{ParamRole::input, kMaxTensors, "inputs"},
                                   std::tuple{ParamRole::output, kMaxTensors, "outputs"},
                                   std::tuple{ParamRole::dim, kMaxNames, "dims"},
                                   std::tuple{ParamRole::scalar, kMaxNames, "scalars"}})
    if (sig.count(role) > limit)
      return Status::error(fmt::format("'{}' has {} {}: a task has at most {}", sig.function,
                                       sig.count(role), what, limit));
  for (const SignatureParam& p : sig.params) {
    if (p.name.size() > kMaxIdentifier)
      return Status::error(fmt::format("parameter '{}' is longer than {} characters",
                                       excerpt(p.name), kMaxIdentifier));
    if (p.name == sig.function)
      return Status::error("parameter '" + p.name +
                           "' has the function's name: a task's names must differ");
  }
  if (sig.function.size() > kMaxIdentifier)
    return Status::error(
        fmt::format("the function's name is longer than {} characters", kMaxIdentifier));
  return ok_status();
}

}  // namespace kf
