#include "task/reference_convert.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <set>
#include <utility>

#include "support/check.h"
#include "task/cpp_lexer.h"
#include "task/signature_internal.h"

namespace kf {
namespace {

using Tokens = std::vector<CppToken>;

struct Edit {
  size_t offset = 0, length = 0;
  std::string text;
};

bool starts_with(std::string_view s, std::string_view p) {
  return s.substr(0, p.size()) == p;
}

// C's float functions and the std:: overload set that does the same at float and at double.
constexpr std::array<std::string_view, 38> kFloatMath = {
    "expf",   "exp2f", "expm1f", "logf",   "log2f",     "log10f",    "log1pf", "sqrtf",
    "cbrtf",  "powf",  "fabsf",  "fmaxf",  "fminf",     "fmaf",      "fmodf",  "hypotf",
    "sinf",   "cosf",  "tanf",   "asinf",  "acosf",     "atanf",     "atan2f", "sinhf",
    "coshf",  "tanhf", "asinhf", "acoshf", "atanhf",    "erff",      "erfcf",  "tgammaf",
    "floorf", "ceilf", "roundf", "truncf", "copysignf", "nearbyintf"};

constexpr std::array<std::pair<std::string_view, std::string_view>, 4> kFloatLimits = {{
    {"FLT_MAX", "max()"},
    {"FLT_MIN", "min()"},
    {"FLT_EPSILON", "epsilon()"},
    {"FLT_TRUE_MIN", "denorm_min()"},
}};

bool is_float_math(std::string_view w) {
  return std::find(kFloatMath.begin(), kFloatMath.end(), w) != kFloatMath.end();
}

// A floating literal with an f or F suffix ("0.5f", "1e-3F", "0x1p-2f"; not the integer 0x1f).
bool float_suffixed(std::string_view n) {
  if (n.empty() || (n.back() != 'f' && n.back() != 'F')) return false;
  const bool hex = starts_with(n, "0x") || starts_with(n, "0X");
  return hex ? n.find_first_of("pP") != std::string_view::npos
             : n.find_first_of(".eE") != std::string_view::npos;
}

// Constructs that depend on float's width or bits: a body using one is not converted.
bool width_dependent(std::string_view w) {
  if (starts_with(w, "_mm") || starts_with(w, "__builtin_") || starts_with(w, "float32x") ||
      starts_with(w, "float64x") || starts_with(w, "svfloat"))
    return true;
  if (starts_with(w, "__m") && w.size() > 3 && w[3] >= '0' && w[3] <= '9') return true;
  for (std::string_view k :
       {"reinterpret_cast", "union", "memcpy", "bit_cast", "asm", "__asm__", "__asm"})
    if (w == k) return true;
  return false;
}

// "line 3", "lines 3, 5 and 9" (at most six, then "and N more").
std::string lines_text(const std::vector<int>& lines) {
  std::vector<int> u = lines;
  u.erase(std::unique(u.begin(), u.end()), u.end());
  std::string s = u.size() == 1 ? "line " : "lines ";
  for (size_t i = 0; i < u.size() && i < 6; ++i)
    s += fmt::format("{}{}", i == 0 ? "" : (i + 1 == u.size() ? " and " : ", "), u[i]);
  if (u.size() > 6) s += fmt::format(" and {} more", u.size() - 6);
  return s;
}

// `text` as `//` comment lines of at most `width` characters (after `indent`), the first with
// `first` after the slashes, the rest with `rest`. Control characters become spaces and
// backslashes slashes: a name from the command line cannot end the comment or splice a line.
std::string comment(std::string_view raw, std::string_view first = "", std::string_view rest = "",
                    std::string_view indent = "", size_t width = 98) {
  std::string text(raw);
  for (char& c : text) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = ' ';
    if (c == '\\') c = '/';
  }
  const std::string lead = std::string(indent) + "// ";
  std::string out, line = lead + std::string(first);
  size_t i = 0;
  while (i < text.size()) {
    size_t j = text.find(' ', i);
    if (j == std::string::npos) j = text.size();
    const std::string word = text.substr(i, j - i);
    i = j + 1;
    if (word.empty()) continue;
    if (line.size() + word.size() + 1 > width && line.size() > lead.size() + rest.size()) {
      out += line + "\n";
      line = lead + std::string(rest);
    }
    if (line.back() != ' ') line += ' ';
    line += word;
  }
  return out + line + "\n";
}

// A name for the template parameter that no identifier of the source uses.
std::string template_name(const Tokens& t, const ParsedSignature& sig) {
  std::set<std::string_view> used;
  for (const CppToken& k : t)
    if (k.is_identifier()) used.insert(k.text);
  for (const SignatureParam& p : sig.params) used.insert(p.name);
  for (std::string name : {"T", "Elem", "ElemT", "Scalar"})
    if (!used.count(name)) return name;
  for (int i = 1;; ++i) {
    std::string name = fmt::format("T{}", i);
    if (!used.count(name)) return name;
  }
}

// Whether a parameter is received under another name and copied into a local of its own type:
// a size that is not int64_t, a scalar whose type is not what the ABI passes.
bool copied(const SignatureParam& p, const ParsedSignature& sig, DType dtype) {
  if (p.role == ParamRole::dim) return !is_int64_type(p.base);
  if (p.role != ParamRole::scalar) return false;
  if (!sig.is_template()) return !p.element;
  if (p.base == "kf::acc_t<" + sig.template_param + ">") return false;
  return p.base != sig.template_param || dtype == DType::bf16;
}

std::string param_text(const SignatureParam& p, const std::string& tp, const std::string& name) {
  switch (p.role) {
    case ParamRole::input:
    case ParamRole::output:
      return fmt::format("{}{}*{} {}", p.role == ParamRole::input ? "const " : "",
                         p.element ? tp : std::string(dtype_cpp(p.dtype)),
                         p.restrict_ptr ? " __restrict__" : "", name);
    case ParamRole::dim:
      return "int64_t " + name;
    case ParamRole::scalar:
      return fmt::format("kf::acc_t<{}> {}", tp, name);
  }
  return name;
}

// "void f(const T* x, T* y, int64_t n)", broken after commas when longer than a line.
std::string head_text(const ParsedSignature& sig, const std::string& tp,
                      const std::vector<std::string>& names) {
  std::vector<SignatureParam> ps = sig.abi_order();
  std::string one = "void " + sig.function + "(";
  std::string broken = one;
  const std::string indent(broken.size(), ' ');
  for (size_t i = 0; i < ps.size(); ++i) {
    const std::string p = param_text(ps[i], tp, names[i]);
    one += (i ? ", " : "") + p;
    broken += (i ? ",\n" + indent : "") + p;
  }
  return (one.size() + 1 <= 100 ? one : broken) + ")";
}

struct BodyEdits {
  std::vector<Edit> edits;
  int types = 0, literals = 0, math = 0, limits = 0;
};

// The rewrites of the body's tokens t[b, e) (see the header); tp is the template parameter.
BodyEdits convert_body(const Tokens& t, size_t b, size_t e, DType dtype, const std::string& tp) {
  BodyEdits r;
  const std::string acc = "kf::acc_t<" + tp + ">";
  const std::string number_type = dtype == DType::bf16 ? acc : tp;
  auto prev_is = [&](size_t i, std::string_view s) { return i > b && t[i - 1].is(s); };
  for (size_t i = b; i < e; ++i) {
    const CppToken& k = t[i];
    auto edit = [&](size_t from, size_t to, std::string text) {
      r.edits.push_back({t[from].offset, t[to].end() - t[from].offset, std::move(text)});
    };
    if (dtype == DType::f64 && k.is("double") && !prev_is(i, "long")) {
      edit(i, i, tp);
      ++r.types;
      continue;
    }
    if (dtype == DType::bf16 && k.is("bf16")) {
      const bool qualified = prev_is(i, "::") && i >= b + 2 && t[i - 2].is("kf");
      if (qualified || !prev_is(i, "::")) {
        edit(qualified ? i - 2 : i, i, tp);
        ++r.types;
      }
      continue;
    }
    if (dtype == DType::f64) continue;
    if (k.is("float")) {
      edit(i, i, dtype == DType::bf16 ? acc : tp);
      ++r.types;
    } else if (k.kind == CppTokenKind::number && float_suffixed(k.text)) {
      edit(i, i, fmt::format("{}({})", number_type, k.text));
      ++r.literals;
    } else if (k.is_identifier() && is_float_math(k.text) && i + 1 < e && t[i + 1].is("(") &&
               !prev_is(i, ".") && !prev_is(i, "->")) {
      const std::string plain(k.text.substr(0, k.text.size() - 1));
      const bool after_std = prev_is(i, "::") && i >= b + 2 && t[i - 2].is("std");
      const bool other_scope =
          prev_is(i, "::") && !after_std && i >= b + 2 && t[i - 2].is_identifier();
      if (other_scope) continue;
      edit(i, i, after_std ? plain : "std::" + plain);
      ++r.math;
    } else if (k.is_identifier()) {
      for (auto [name, member] : kFloatLimits)
        if (k.is(name)) {
          edit(i, i, fmt::format("std::numeric_limits<{}>::{}", number_type, member));
          ++r.limits;
        }
    }
  }
  return r;
}

std::string apply(std::string_view s, size_t b, size_t e, std::vector<Edit> edits) {
  std::sort(edits.begin(), edits.end(),
            [](const Edit& x, const Edit& y) { return x.offset < y.offset; });
  std::string out;
  size_t at = b;
  for (const Edit& d : edits) {
    if (d.offset < at || d.offset + d.length > e) continue;  // overlapping: keep the first
    out += s.substr(at, d.offset - at);
    out += d.text;
    at = d.offset + d.length;
  }
  out += s.substr(at, e - at);
  return out;
}

bool includes(const Tokens& t, std::string_view header) {
  return std::any_of(t.begin(), t.end(), [&](const CppToken& k) {
    return k.kind == CppTokenKind::directive && k.text.find("include") != std::string_view::npos &&
           k.text.find(header) != std::string_view::npos;
  });
}

// Lines outside the kernel (tokens before `head` or from `tail` on) that use the element type:
// the oracle would run that code in float.
std::vector<int> element_uses_outside(const Tokens& t, size_t head, size_t tail, DType dtype) {
  std::vector<int> lines;
  const std::string_view word = dtype == DType::f64 ? "double" : "float";
  for (const CppToken& k : t)
    if ((k.offset < head || k.offset >= tail) && k.is(word)) lines.push_back(k.line);
  return lines;
}

}  // namespace

ReferenceDraft convert_reference(std::string_view source, const FunctionSite& site, DType dtype,
                                 std::string_view from) {
  ReferenceDraft d;
  const ParsedSignature& sig = site.signature;
  auto lexed = lex_cpp(source);
  KF_CHECK(lexed.has_value()) << "convert_reference: the source find_kernel read must lex";
  const Tokens& t = *lexed;
  bool any_copied = false;
  for (const SignatureParam& p : sig.params) any_copied |= copied(p, sig, dtype);
  if (sig.is_template() && sig.in_abi_order() && !any_copied) {
    d.text = std::string(source);
    d.changes.push_back("a template in the kernel ABI's order: copied unchanged");
    return d;
  }
  const std::string tp = sig.is_template() ? sig.template_param : template_name(t, sig);

  // Parameters copied into locals get a name of their own: NAME_arg (unused in the source).
  std::set<std::string_view> used;
  for (const CppToken& k : t)
    if (k.is_identifier()) used.insert(k.text);
  std::vector<std::string> names;
  std::string copies;
  for (const SignatureParam& p : sig.abi_order()) {
    if (!copied(p, sig, dtype)) {
      names.push_back(p.name);
      continue;
    }
    std::string arg = p.name + "_arg";
    while (used.count(arg)) arg += "_";
    names.push_back(arg);
    copies +=
        fmt::format("\n  {} {}({});  // kforge new: the kernel ABI passes {}", p.declared, p.name,
                    arg, p.role == ParamRole::dim ? "sizes as int64_t" : "this scalar as " + tp);
  }

  // Body tokens: strictly inside the braces.
  size_t bb = 0, be = 0;
  for (size_t i = 0; i < t.size(); ++i) {
    if (t[i].offset <= site.body_begin) bb = i + 1;
    if (t[i].offset < site.body_end) be = i;  // the closing brace
  }
  std::vector<std::pair<std::string, int>> unsafe;
  for (size_t i = bb; i < be; ++i)
    if (t[i].is_identifier() && width_dependent(t[i].text) && unsafe.size() < 6)
      unsafe.emplace_back(std::string(t[i].text), t[i].line);
  BodyEdits body;
  if (!sig.is_template() && unsafe.empty()) body = convert_body(t, bb, be, dtype, tp);

  std::string todo_text;
  if (!unsafe.empty()) {
    std::string what;
    for (size_t i = 0; i < unsafe.size(); ++i)
      what += fmt::format("{}{} (line {})", i ? ", " : "", unsafe[i].first, unsafe[i].second);
    d.todos.push_back("the body uses " + what +
                      ", which depend on float's width or bits: kforge new kept the body as "
                      "written; rewrite it in plain C++ over " +
                      tp + " (the oracle instantiates " + tp + " = double)");
  }
  if (!sig.is_template()) {
    const std::vector<int> outside = element_uses_outside(t, site.head_begin, site.body_end, dtype);
    if (!outside.empty())
      d.todos.push_back(fmt::format(
          "{} uses {} outside {}: the oracle ({} = double) would run that code at that "
          "precision. Make those helpers templates over {}, or delete this line if it is meant",
          lines_text(outside), dtype == DType::f64 ? "double" : "float", sig.function, tp, tp));
  }

  auto places = [](int n) { return fmt::format("{} place{}", n, n == 1 ? "" : "s"); };
  if (body.types)
    d.changes.push_back(fmt::format("element type -> {}: {}", tp, places(body.types)));
  if (body.literals)
    d.changes.push_back("f-suffixed literals typed (" + tp + "(0.5f)): " + places(body.literals));
  if (body.math)
    d.changes.push_back("float math functions -> std:: overloads: " + places(body.math));
  if (body.limits)
    d.changes.push_back("FLT_ limits -> std::numeric_limits: " + places(body.limits));
  if (!sig.in_abi_order())
    d.changes.push_back("parameters in the kernel ABI's order: inputs, outputs, dims, scalars");
  if (any_copied)
    d.changes.push_back(
        "sizes of other types than int64_t (and scalars of another type) are "
        "received as the ABI passes them and copied into locals of their own type");

  std::string out = comment(fmt::format(
      "reference.cpp: `kforge new` wrote it from {} (function {}). A task's reference is a "
      "template over the element type {}: the judge compiles {}<{}> as the speed baseline and "
      "{}<double> as the oracle that judges every candidate, so the body computes in {}.",
      from, sig.function, tp, sig.function, dtype_cpp(dtype), sig.function, tp));
  for (const std::string& c : d.changes) out += comment(c, "- ", "  ");
  for (const std::string& todo : d.todos)
    out += comment(todo, std::string(kReferenceTodo) + ": ", "  ");
  out += "#include <kforge/kernel.h>\n";
  if (body.math && !includes(t, "<cmath>") && !includes(t, "<math.h>")) out += "#include <cmath>\n";
  if (body.limits && !includes(t, "<limits>")) out += "#include <limits>\n";
  out += "\n";
  out += source.substr(0, site.head_begin);
  out += fmt::format("template <typename {}>\n{} {{", tp, head_text(sig, tp, names));
  out += copies;
  out += apply(source, site.body_begin + 1, site.body_end, body.edits);
  out += source.substr(site.body_end);
  d.text = std::move(out);
  return d;
}

std::string reference_from_signature(const ParsedSignature& sig, std::string_view signature_text) {
  const std::string tp = sig.is_template() ? sig.template_param : "T";
  std::vector<std::string> names;
  std::string sizes, outs;
  for (const SignatureParam& p : sig.abi_order()) {
    names.push_back(p.name);
    if (p.role == ParamRole::dim) sizes += (sizes.empty() ? "" : ", ") + p.name;
    if (p.role == ParamRole::output) outs += (outs.empty() ? "" : ", ") + p.name;
  }
  std::string out = comment(fmt::format(
      "reference.cpp: `kforge new` wrote it from the signature `{}`. A task's reference is the "
      "plain, obviously-correct implementation, a template over the element type {}: the judge "
      "compiles {}<float> as the speed baseline and {}<double> as the oracle that judges every "
      "candidate, so compute in {} (kf::acc_t<{}> is the accumulator type: float for f32 and "
      "bf16, double in the oracle). Tensors are dense and row-major.",
      signature_text, tp, sig.function, sig.function, tp, tp));
  out += "#include <kforge/kernel.h>\n\n#include <cmath>\n#include <cstdint>\n\n";
  out += fmt::format("template <typename {}>\n{} {{\n", tp, head_text(sig, tp, names));
  out += comment(fmt::format("write the reference: every element of {} from the inputs{}.", outs,
                             sizes.empty() ? "" : " (sizes " + sizes + ")"),
                 std::string(kReferenceTodo) + ": ", "  ", "  ");
  out += "}\n";
  return out;
}

}  // namespace kf
