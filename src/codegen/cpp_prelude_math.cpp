// The prelude's math helpers: libm calls, and the vector exp/erf/tanh/log forms (exact and fast).
#include <fmt/format.h>

#include "codegen/cpp_prelude.h"
#include "codegen/cpp_prelude_internal.h"
#include "support/check.h"

namespace kf {

using ir::MathFn;
using ir::ScalarKind;
using ir::Type;
using prelude_detail::float_suffix;
using prelude_detail::suffix;
using prelude_detail::value_kind;

std::string CppPrelude::round_bf16(Type t) {
  if (t.is_scalar()) {
    return define("kf_round_bf16",
                  "static inline float kf_round_bf16(float x) {\n"
                  "  return kf::bf16::to_float(kf::bf16::from_float(x));\n}");
  }
  std::string vt = value_type(t), w = u32_type(t.lanes());
  std::string name = fmt::format("kf_round_bf16x{}", t.lanes());
  return define(name, fmt::format("static inline {0} {1}({0} v) {{\n"
                                  "  {2} u = ({2})v;\n"
                                  "  {2} r = ((u + 0x7fffu + ((u >> 16) & 1u)) >> 16) << 16;\n"
                                  "  r = (u & 0x7fffffffu) > 0x7f800000u ? u | 0x400000u : r;\n"
                                  "  return ({0})r;\n}}",
                                  vt, name, w));
}

std::string CppPrelude::math_builtin(MathFn fn, Type scalar, const std::vector<std::string>& a) {
  std::string f = float_suffix(scalar);
  std::string one = scalar.kind() == ScalarKind::f64 ? "1.0" : "1.0f";
  auto call = [&](const std::string& base) {
    std::string s = "__builtin_" + base + f + "(";
    for (size_t i = 0; i < a.size(); ++i) s += (i ? ", " : "") + a[i];
    return s + ")";
  };
  switch (fn) {
    case MathFn::exp:
      return call("exp");
    case MathFn::log:
      return call("log");
    case MathFn::sqrt:
      return call("sqrt");
    case MathFn::rsqrt:
      return "(" + one + " / " + call("sqrt") + ")";
    case MathFn::tanh:
      return call("tanh");
    case MathFn::erf:
      return call("erf");
    case MathFn::sigmoid:
      return "(" + one + " / (" + one + " + __builtin_exp" + f + "(-(" + a[0] + "))))";
    case MathFn::abs:
      if (scalar.kind() == ScalarKind::i32) return "__builtin_abs(" + a[0] + ")";
      if (scalar.kind() == ScalarKind::i64) return "__builtin_labs(" + a[0] + ")";
      return call("fabs");
    case MathFn::floor:
      return call("floor");
    case MathFn::ceil:
      return call("ceil");
    case MathFn::pow:
      return call("pow");
    case MathFn::fma:
      return call("fma");
  }
  return "?";
}

bool CppPrelude::has_fast_form(MathFn fn, Type t) {
  return value_kind(t).scalar().kind() == ScalarKind::f32 &&
         (fn == MathFn::exp || fn == MathFn::log || fn == MathFn::tanh || fn == MathFn::erf ||
          fn == MathFn::sigmoid);
}

std::string CppPrelude::math(MathFn fn, Type t, bool approx) {
  const bool f32 = value_kind(t).scalar().kind() == ScalarKind::f32;
  approx = approx && has_fast_form(fn, t);
  if (approx && t.lanes() == 1) {
    // Scalar code evaluates the 4-lane polynomial on a broadcast: no libm call.
    const std::string v4 = math(fn, t.with_lanes(4), true), x4 = value_type(t.with_lanes(4));
    const std::string name = v4.substr(0, v4.rfind('_')) + "_f32";
    return define(name, fmt::format("static inline float {0}(float x) {{\n"
                                    "  return {1}({2}{{}} + x)[0];\n}}",
                                    name, v4, x4));
  }
  std::string vt = value_type(t);
  std::string name = "kf_" + ir::to_string(fn) + "_" + suffix(t);
  static const char* const kParams[] = {"x", "y", "z"};
  int arity = ir::math_fn_arity(fn);
  std::string params;
  std::vector<std::string> lane_args;
  for (int i = 0; i < arity; ++i) {
    params += fmt::format("{}{} {}", i ? ", " : "", vt, kParams[i]);
    lane_args.push_back(std::string(kParams[i]) + "[l]");
  }
  if (fn == MathFn::fma) {
    // Fused in every lane, as the scalar path's fmaf is (x * y + z would be contracted only
    // where the compiler chooses to); the lane loop compiles to one vector FMA.
    return define(name, fmt::format("static inline {0} {1}({2}) {{\n"
                                    "  {0} r;\n"
                                    "  for (int l = 0; l < {3}; ++l) r[l] = {4};\n"
                                    "  return r;\n}}",
                                    vt, name, params, t.lanes(),
                                    math_builtin(fn, value_kind(t).scalar(), lane_args)));
  }
  if (t.lanes() > 1 && f32) {
    if (fn == MathFn::exp || fn == MathFn::sigmoid) return vector_exp_f32(fn, t, approx);
    if (fn == MathFn::erf || fn == MathFn::tanh) return vector_erf_tanh_f32(fn, t, approx);
    if (fn == MathFn::log) return vector_log_f32(t);
  }
  return define(name, fmt::format("static inline {0} {1}({2}) {{\n"
                                  "  {0} r;\n"
                                  "  for (int l = 0; l < {3}; ++l) r[l] = {4};\n"
                                  "  return r;\n}}",
                                  vt, name, params, t.lanes(),
                                  math_builtin(fn, value_kind(t).scalar(), lane_args)));
}

namespace {

// The lines computing P = exp(R) on the reduced range |R| <= ln2 / 2 (Horner form, into a new
// variable P of vector type VT): degree 5 with 1 + r fixed (1.05e-7 relative, ~1 ulp), or for
// `approximate` degree 4 (2.8e-6 relative: one FMA less), both fitted for the least maximum
// relative error.
std::string exp_poly(const std::string& vt, const std::string& p, const std::string& r,
                     bool approx) {
  if (approx)
    return fmt::format(
        "  {0} {1} = zero + 4.151392612e-2f;\n"
        "  {1} = {1} * {2} + 1.678749632e-1f;\n"
        "  {1} = {1} * {2} + 5.000301395e-1f;\n"
        "  {1} = {1} * {2} + 9.999668241e-1f;\n"
        "  {1} = {1} * {2} + 1.0f;\n",
        vt, p, r);
  return fmt::format(
      "  {0} {1} = zero + 8.31252696909e-3f;\n"
      "  {1} = {1} * {2} + 4.18901162526e-2f;\n"
      "  {1} = {1} * {2} + 1.6667114452e-1f;\n"
      "  {1} = {1} * {2} + 4.99992317621e-1f;\n"
      "  {1} = {1} * {2} + 1.0f;\n"
      "  {1} = {1} * {2} + 1.0f;\n",
      vt, p, r);
}

// "kf_NAME_fast" for approximate's forms, "kf_NAME" otherwise.
std::string fn_base(const char* name, bool approx) {
  return std::string("kf_") + name + (approx ? "_fast" : "");
}

}  // namespace

// exp on f32 vectors without a libm call per lane: 2^k * p(r) with k = round(x / ln 2) (to
// nearest even, by the 1.5 * 2^23 shifter, which also gives k as a float exactly), r = x - k ln 2
// in two parts (Cody-Waite), p a degree-5 polynomial 1 + r + c2 r^2 + ... + c5 r^5 fitted for the
// least maximum relative error on |r| <= ln2 / 2 (1.05e-7, about 1 ulp; five FMAs in Horner
// form). 2^k is applied as 2^(k-1) * 2 so k = 128 (x up to ln FLT_MAX = 88.72) stays finite.
// x is clamped to [-87.34, 88.72]: at the bottom k = -126, whose 2^(k-1) has exponent bits 0,
// so results below about 2^-125.5 (x < -87) are 0, -inf included; above 88.72 the result is
// inf; NaN stays NaN through the clamps (kf_max(lo, NaN) and kf_min(hi, NaN) are NaN).
std::string CppPrelude::vector_exp_f32(MathFn fn, Type t, bool approx) {
  const std::string vt = value_type(t), it = mask_type(t.lanes());
  const std::string exp_name = fn_base("exp", approx) + "_" + suffix(t);
  const std::string max = min_max(ir::BinOp::max, t), min = min_max(ir::BinOp::min, t);
  define(exp_name,
         fmt::format("static inline {0} {1}({0} x) {{\n"
                     "  const {0} zero = {{}}, lo = zero - 87.336544f, hi = zero + 88.72284f;\n"
                     "  {0} xc = {3}(hi, {4}(lo, x));\n"
                     "  const {0} magic = zero + 12582912.0f;\n"
                     "  {0} t = xc * 1.44269504088896341f + magic;\n"
                     "  {0} kf = t - magic;\n"
                     "  {2} k = ({2})t - ({2})magic;\n"
                     "  {0} r = xc - kf * 0.693359375f;\n"
                     "  r = r - kf * -2.12194440e-4f;\n"
                     "{5}"
                     "  {0} y = p * ({0})((k + 126) << 23) * 2.0f;\n"
                     "  return x > hi ? zero + __builtin_inff() : y;\n}}",
                     vt, exp_name, it, min, max, exp_poly(vt, "p", "r", approx)));
  if (fn == MathFn::exp) return exp_name;
  const std::string name = fn_base("sigmoid", approx) + "_" + suffix(t);
  return define(name, fmt::format("static inline {0} {1}({0} x) {{\n"
                                  "  return 1.0f / (1.0f + {2}(-x));\n}}",
                                  vt, name, exp_name));
}

// erf and tanh on f32 vectors, from polynomials fitted for the least maximum relative error (no
// libm call per lane):
//   erf:  |x| < 1:  x * P(x^2), P of degree 5 (4e-8);  1 <= |x| < 4:  1 - exp(-x^2) * R(1/|x|),
//         R of degree 7 approximating erfc(x) exp(x^2) (1.4e-7 relative, so under 3e-8
//         absolute in erf);  |x| >= 4:  +-1 (|x| is clamped to 4 there: erfc(4) is below half
//         an ulp of 1, so the formula rounds to 1). exp(-x^2) is the vector exp's polynomial
//         inlined without its clamps (-x^2 lies in [-16, -1]).
//   tanh: |x| < 0.625:  x * P(x^2), P of degree 5 (4e-9);  beyond, 1 - 2 / (exp(2|x|) + 1)
//         (inf for large |x| gives exactly 1).
// Both are odd: |x| is x with the sign bit cleared and the saturating branch gets x's sign bit
// back with an or (one instruction each, where a conditional negation is three). NaN stays NaN
// (kf_max(1, NaN) is NaN and every comparison with NaN is false).
std::string CppPrelude::vector_erf_tanh_f32(MathFn fn, Type t, bool approx) {
  const std::string vt = value_type(t), it = mask_type(t.lanes());
  if (fn == MathFn::erf) {
    const std::string max = min_max(ir::BinOp::max, t), min = min_max(ir::BinOp::min, t);
    const std::string name = fn_base("erf", approx) + "_" + suffix(t);
    return define(name, fmt::format("static inline {0} {1}({0} x) {{\n"
                                    "  const {0} zero = {{}}, one = zero + 1.0f;\n"
                                    "  const {2} sign = ({2})x & (int32_t)0x80000000;\n"
                                    "  {0} a = ({0})(({2})x & 0x7fffffff);\n"
                                    "  {0} u = x * x;\n"
                                    "  {0} p = zero - 5.63142043834e-4f;\n"
                                    "  p = p * u + 4.91755097804e-3f;\n"
                                    "  p = p * u - 2.67113109135e-2f;\n"
                                    "  p = p * u + 1.12801800974e-1f;\n"
                                    "  p = p * u - 3.76123261847e-1f;\n"
                                    "  p = p * u + 1.12837912249f;\n"
                                    "  {0} small = x * p;\n"
                                    "  {0} ac = {3}(zero + 4.0f, {4}(one, a));\n"
                                    "  {0} s = one / ac;\n"
                                    "  {0} r = zero - 1.66785954601e-2f;\n"
                                    "  r = r * s + 1.15802751195e-1f;\n"
                                    "  r = r * s - 3.45742351773e-1f;\n"
                                    "  r = r * s + 5.67828982429e-1f;\n"
                                    "  r = r * s - 5.01551852e-1f;\n"
                                    "  r = r * s + 4.96125067318e-2f;\n"
                                    "  r = r * s + 5.57979267049e-1f;\n"
                                    "  r = r * s + 3.32929457826e-4f;\n"
                                    "  {0} q = ac * ac;\n"
                                    "  const {0} magic = zero + 12582912.0f;\n"
                                    "  {0} t = q * -1.44269504088896341f + magic;\n"
                                    "  {0} kf = t - magic;\n"
                                    "  {2} k = ({2})t - ({2})magic;\n"
                                    "  {0} w = kf * -0.693359375f - q;\n"
                                    "  w = w - kf * -2.12194440e-4f;\n"
                                    "{5}"
                                    "  e = e * ({0})((k + 127) << 23);\n"
                                    "  {0} big = ({0})(({2})(one - e * r) | sign);\n"
                                    "  return a < one ? small : big;\n}}",
                                    vt, name, it, min, max, exp_poly(vt, "e", "w", approx)));
  }
  const std::string exp_name = vector_exp_f32(MathFn::exp, t, approx);
  const std::string name = fn_base("tanh", approx) + "_" + suffix(t);
  return define(name, fmt::format("static inline {0} {1}({0} x) {{\n"
                                  "  const {0} zero = {{}}, one = zero + 1.0f;\n"
                                  "  {0} a = ({0})(({3})x & 0x7fffffff);\n"
                                  "  {0} u = x * x;\n"
                                  "  {0} p = zero - 5.65998662194e-3f;\n"
                                  "  p = p * u + 2.05909859918e-2f;\n"
                                  "  p = p * u - 5.372106722e-2f;\n"
                                  "  p = p * u + 1.33311275252e-1f;\n"
                                  "  p = p * u - 3.33332605264e-1f;\n"
                                  "  p = p * u + 9.99999996075e-1f;\n"
                                  "  {0} small = x * p;\n"
                                  "  {0} big = one - 2.0f / ({2}(a + a) + one);\n"
                                  "  big = ({0})(({3})big | (({3})x & (int32_t)0x80000000));\n"
                                  "  return a < 0.625f ? small : big;\n}}",
                                  vt, name, exp_name, it));
}

// log on f32 vectors without a libm call per lane: x = m * 2^e with m in [sqrt(1/2), sqrt(2)),
// log x = e ln 2 + log m, log m = f - f^2 / 2 + f^3 P(f) for f = m - 1, P of degree 8 (the
// coefficients of Moshier's Cephes logf, ~1 ulp), e ln 2 in two parts. Subnormal x is scaled by
// 2^23 first; 0 gives -inf, x < 0 and NaN give NaN, inf gives inf. `approximate` uses it as is:
// a lower degree saves little against the division-free form, and log's error adds directly to
// softplus and log-sum-exp outputs.
std::string CppPrelude::vector_log_f32(Type t) {
  const std::string vt = value_type(t), it = mask_type(t.lanes());
  const std::string name = "kf_log_" + suffix(t);
  return define(name, fmt::format("static inline {0} {1}({0} x) {{\n"
                                  "  const {0} zero = {{}}, one = zero + 1.0f;\n"
                                  "  const {2} tiny = x < 1.17549435e-38f;\n"
                                  "  {0} xs = tiny ? x * 8388608.0f : x;\n"
                                  "  {2} i = ({2})xs;\n"
                                  "  {2} ei = ((i >> 23) & 0xff) - 127 + (tiny & -23);\n"
                                  "  {0} m = ({0})((i & 0x007fffff) | 0x3f800000);\n"
                                  "  const {2} big = m > 1.41421356f;\n"
                                  "  m = big ? m * 0.5f : m;\n"
                                  "  {0} e = __builtin_convertvector(ei - big, {0});\n"
                                  "  {0} f = m - one;\n"
                                  "  {0} z = f * f;\n"
                                  "  {0} y = zero + 7.0376836292e-2f;\n"
                                  "  y = y * f - 1.1514610310e-1f;\n"
                                  "  y = y * f + 1.1676998740e-1f;\n"
                                  "  y = y * f - 1.2420140846e-1f;\n"
                                  "  y = y * f + 1.4249322787e-1f;\n"
                                  "  y = y * f - 1.6668057665e-1f;\n"
                                  "  y = y * f + 2.0000714765e-1f;\n"
                                  "  y = y * f - 2.4999993993e-1f;\n"
                                  "  y = y * f + 3.3333331174e-1f;\n"
                                  "  y = y * f * z;\n"
                                  "  y = y - 2.12194440e-4f * e;\n"
                                  "  y = y - 0.5f * z;\n"
                                  "  {0} r = f + y + 0.693359375f * e;\n"
                                  "  r = x > zero ? r : (x == zero ? zero - __builtin_inff() : "
                                  "zero + __builtin_nanf(\"\"));\n"
                                  "  return x == zero + __builtin_inff() ? x : r;\n}}",
                                  vt, name, it));
}

}  // namespace kf
