#include "codegen/cpp_prelude.h"

#include <fmt/format.h>

#include "support/check.h"

namespace kf {

using ir::MathFn;
using ir::ScalarKind;
using ir::Type;

namespace {

// Helpers on bf16 values are the f32 ones (bf16 values are carried as float).
Type value_kind(Type t) {
  return t.kind() == ScalarKind::bf16 ? Type::f32(t.lanes()) : t;
}

std::string suffix(Type t) {
  return ir::to_string(value_kind(t));
}

std::string float_suffix(Type scalar) {
  return scalar.kind() == ScalarKind::f64 ? "" : "f";
}

// Masked loads and stores of whole f32/f64 vectors with the instruction the compiling machine
// has (AVX-512 masked moves, AVX vmaskmov), the lane loop elsewhere. Masked-off lanes are not
// touched, so a tail vector may straddle the end of a buffer. A lane loop compiles to 16
// conditional scalar moves, which made every masked tail of a register tile several times slower
// than its steady state.
struct MaskedIsa {
  std::string include, load_open, store_open, close;
};

MaskedIsa masked_isa(Type t, ScalarKind k) {
  MaskedIsa m;
  std::string guard, load, store;
  if (k == ScalarKind::f32 && t.lanes() == 16) {
    guard = "defined(__AVX512F__)";
    const std::string bits = "_mm512_cmpneq_epi32_mask((__m512i)m, _mm512_setzero_si512())";
    load = "  return (f32x16)_mm512_maskz_loadu_ps(" + bits + ", p);\n";
    store = "  _mm512_mask_storeu_ps(p, " + bits + ", (__m512)v);\n";
  } else if (k == ScalarKind::f32 && t.lanes() == 8) {
    guard = "defined(__AVX__)";
    load = "  return (f32x8)_mm256_maskload_ps(p, (__m256i)m);\n";
    store = "  _mm256_maskstore_ps(p, (__m256i)m, (__m256)v);\n";
  } else if (k == ScalarKind::f64 && t.lanes() == 8) {
    guard = "defined(__AVX512F__)";
    const std::string bits = "(__mmask8)_mm256_movemask_ps((__m256)m)";
    load = "  return (f64x8)_mm512_maskz_loadu_pd(" + bits + ", p);\n";
    store = "  _mm512_mask_storeu_pd(p, " + bits + ", (__m512d)v);\n";
  } else {
    return m;
  }
  m.include = "#if " + guard + "\n#include <immintrin.h>\n#endif\n";
  m.load_open = "#if " + guard + "\n" + load + "#else\n";
  m.store_open = "#if " + guard + "\n" + store + "#else\n";
  m.close = "#endif\n";
  return m;
}

}  // namespace

std::string CppPrelude::vector_typedef(const std::string& elem, const std::string& name,
                                       int bytes) {
  if (typedef_names_.insert(name).second) {
    typedefs_.push_back(
        fmt::format("typedef {} {} __attribute__((vector_size({})));", elem, name, bytes));
  }
  return name;
}

std::string CppPrelude::mask_type(int lanes) {
  return vector_typedef("int32_t", fmt::format("i32x{}", lanes), 4 * lanes);
}
std::string CppPrelude::u16_type(int lanes) {
  return vector_typedef("uint16_t", fmt::format("u16x{}", lanes), 2 * lanes);
}
std::string CppPrelude::u32_type(int lanes) {
  return vector_typedef("uint32_t", fmt::format("u32x{}", lanes), 4 * lanes);
}

std::string CppPrelude::value_type(Type t) {
  if (t.is_scalar()) {
    switch (t.kind()) {
      case ScalarKind::f32:
      case ScalarKind::bf16:
        return "float";
      case ScalarKind::f64:
        return "double";
      case ScalarKind::i32:
        return "int32_t";
      case ScalarKind::i64:
        return "int64_t";
      case ScalarKind::boolean:
        return "bool";
    }
  }
  int n = t.lanes();
  switch (t.kind()) {
    case ScalarKind::f32:
    case ScalarKind::bf16:
      return vector_typedef("float", fmt::format("f32x{}", n), 4 * n);
    case ScalarKind::f64:
      return vector_typedef("double", fmt::format("f64x{}", n), 8 * n);
    case ScalarKind::i32:
      return mask_type(n);
    case ScalarKind::i64:
      return vector_typedef("int64_t", fmt::format("i64x{}", n), 8 * n);
    case ScalarKind::boolean:
      return mask_type(n);
  }
  return "?";
}

std::string CppPrelude::storage_type(ScalarKind k) {
  switch (k) {
    case ScalarKind::f32:
      return "float";
    case ScalarKind::f64:
      return "double";
    case ScalarKind::bf16:
      return "kf::bf16";
    case ScalarKind::i32:
      return "int32_t";
    case ScalarKind::i64:
      return "int64_t";
    case ScalarKind::boolean:
      return "bool";
  }
  return "?";
}

std::string CppPrelude::define(const std::string& name, const std::string& text) {
  if (helper_names_.insert(name).second) helpers_.push_back(text);
  return name;
}

std::string CppPrelude::load(Type t, ScalarKind k, bool masked) {
  KF_CHECK(t.is_vector() && k != ScalarKind::boolean) << "vector load of " << ir::to_string(t);
  std::string vt = value_type(t), st = storage_type(k);
  std::string name =
      fmt::format("kf_load_{}x{}{}", ir::to_string(k), t.lanes(), masked ? "_masked" : "");
  std::string elem = k == ScalarKind::bf16 ? "static_cast<float>(p[l])" : "p[l]";
  if (masked) {
    std::string mt = mask_type(t.lanes());
    const MaskedIsa isa = masked_isa(t, k);
    return define(name, fmt::format("{6}static inline {0} {1}(const {2}* p, {3} m) {{\n"
                                    "{7}"
                                    "  {0} v = {{}};\n"
                                    "  for (int l = 0; l < {4}; ++l)\n"
                                    "    if (m[l]) v[l] = {5};\n"
                                    "  return v;\n{8}}}",
                                    vt, name, st, mt, t.lanes(), elem, isa.include, isa.load_open,
                                    isa.close));
  }
  if (k == ScalarKind::bf16) {
    std::string h = u16_type(t.lanes()), w = u32_type(t.lanes());
    return define(name, fmt::format("static inline {0} {1}(const kf::bf16* p) {{\n"
                                    "  {2} h;\n"
                                    "  __builtin_memcpy(&h, p, sizeof h);\n"
                                    "  return ({0})(__builtin_convertvector(h, {3}) << 16);\n}}",
                                    vt, name, h, w));
  }
  return define(name, fmt::format("static inline {0} {1}(const {2}* p) {{\n"
                                  "  {0} v;\n"
                                  "  __builtin_memcpy(&v, p, sizeof v);\n"
                                  "  return v;\n}}",
                                  vt, name, st));
}

std::string CppPrelude::store(Type t, ScalarKind k, bool masked) {
  KF_CHECK(t.is_vector() && k != ScalarKind::boolean) << "vector store of " << ir::to_string(t);
  std::string vt = value_type(t), st = storage_type(k);
  std::string name =
      fmt::format("kf_store_{}x{}{}", ir::to_string(k), t.lanes(), masked ? "_masked" : "");
  std::string elem = k == ScalarKind::bf16 ? "kf::bf16(v[l])" : "v[l]";
  if (masked) {
    std::string mt = mask_type(t.lanes());
    const MaskedIsa isa = masked_isa(t, k);
    return define(name, fmt::format("{6}static inline void {1}({2}* p, {0} v, {3} m) {{\n"
                                    "{7}"
                                    "  for (int l = 0; l < {4}; ++l)\n"
                                    "    if (m[l]) p[l] = {5};\n{8}}}",
                                    vt, name, st, mt, t.lanes(), elem, isa.include, isa.store_open,
                                    isa.close));
  }
  if (k == ScalarKind::bf16) {
    std::string h = u16_type(t.lanes()), w = u32_type(t.lanes());
    return define(name,
                  fmt::format("static inline void {1}(kf::bf16* p, {0} v) {{\n"
                              "  {3} u = ({3})v;\n"
                              "  {3} r = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;\n"
                              "  r = (u & 0x7fffffffu) > 0x7f800000u ? (u >> 16) | 0x40u : r;\n"
                              "  {2} h = __builtin_convertvector(r, {2});\n"
                              "  __builtin_memcpy(p, &h, sizeof h);\n}}",
                              vt, name, h, w));
  }
  return define(name, fmt::format("static inline void {1}({2}* p, {0} v) {{\n"
                                  "  __builtin_memcpy(p, &v, sizeof v);\n}}",
                                  vt, name, st));
}

std::string CppPrelude::gather(Type t, ScalarKind k, bool masked) {
  KF_CHECK(t.is_vector() && k != ScalarKind::boolean) << "gather of " << ir::to_string(t);
  std::string vt = value_type(t), st = storage_type(k), it = value_type(Type::i64(t.lanes()));
  std::string name =
      fmt::format("kf_gather_{}x{}{}", ir::to_string(k), t.lanes(), masked ? "_masked" : "");
  std::string elem = k == ScalarKind::bf16 ? "static_cast<float>(p[i[l]])" : "p[i[l]]";
  std::string mask_param = masked ? ", " + mask_type(t.lanes()) + " m" : "";
  return define(
      name, fmt::format("static inline {0} {1}(const {2}* p, {3} i{4}) {{\n"
                        "  {0} v = {{}};\n"
                        "  for (int l = 0; l < {5}; ++l)\n"
                        "    {6}v[l] = {7};\n"
                        "  return v;\n}}",
                        vt, name, st, it, mask_param, t.lanes(), masked ? "if (m[l]) " : "", elem));
}

std::string CppPrelude::scatter(Type t, ScalarKind k, bool masked) {
  KF_CHECK(t.is_vector() && k != ScalarKind::boolean) << "scatter of " << ir::to_string(t);
  std::string vt = value_type(t), st = storage_type(k), it = value_type(Type::i64(t.lanes()));
  std::string name =
      fmt::format("kf_scatter_{}x{}{}", ir::to_string(k), t.lanes(), masked ? "_masked" : "");
  std::string elem = k == ScalarKind::bf16 ? "kf::bf16(v[l])" : "v[l]";
  std::string mask_param = masked ? ", " + mask_type(t.lanes()) + " m" : "";
  return define(
      name, fmt::format("static inline void {1}({2}* p, {3} i, {0} v{4}) {{\n"
                        "  for (int l = 0; l < {5}; ++l)\n"
                        "    {6}p[i[l]] = {7};\n}}",
                        vt, name, st, it, mask_param, t.lanes(), masked ? "if (m[l]) " : "", elem));
}

std::string CppPrelude::transpose_f32(int lanes) {
  KF_CHECK(lanes >= 2) << "transpose of " << lanes << " lanes";
  const std::string name = fmt::format("kf_transpose_f32x{}", lanes);
  // The register transpose, where the target has one. Both widths start alike: the rows loaded,
  // then 32-bit and 64-bit interleaves transpose each 128-bit lane's 4 x 4 blocks (u[4k + j]'s
  // 128-bit lane l holds column 4l + j of rows 4k..4k+3); the last step puts the blocks in place.
  std::string guard, place;
  int bits = 0;
  if (lanes == 16) {
    guard = "defined(__AVX512F__)";
    bits = 512;
    place =
        "  for (int j = 0; j < 4; ++j) {\n"
        "    __m512 v0 = _mm512_shuffle_f32x4(u[j], u[4 + j], 0x44);\n"
        "    __m512 v1 = _mm512_shuffle_f32x4(u[j], u[4 + j], 0xee);\n"
        "    __m512 w0 = _mm512_shuffle_f32x4(u[8 + j], u[12 + j], 0x44);\n"
        "    __m512 w1 = _mm512_shuffle_f32x4(u[8 + j], u[12 + j], 0xee);\n"
        "    _mm512_storeu_ps(d + j * ds, _mm512_shuffle_f32x4(v0, w0, 0x88));\n"
        "    _mm512_storeu_ps(d + (4 + j) * ds, _mm512_shuffle_f32x4(v0, w0, 0xdd));\n"
        "    _mm512_storeu_ps(d + (8 + j) * ds, _mm512_shuffle_f32x4(v1, w1, 0x88));\n"
        "    _mm512_storeu_ps(d + (12 + j) * ds, _mm512_shuffle_f32x4(v1, w1, 0xdd));\n"
        "  }\n";
  } else if (lanes == 8) {
    guard = "defined(__AVX__)";
    bits = 256;
    place =
        "  for (int j = 0; j < 4; ++j) {\n"
        "    _mm256_storeu_ps(d + j * ds, _mm256_permute2f128_ps(u[j], u[4 + j], 0x20));\n"
        "    _mm256_storeu_ps(d + (4 + j) * ds, _mm256_permute2f128_ps(u[j], u[4 + j], 0x31));\n"
        "  }\n";
  }
  std::string include, isa, close;
  if (bits) {
    include = "#if " + guard + "\n#include <immintrin.h>\n#endif\n";
    isa = fmt::format(
        "#if {0}\n"
        "  __m{1} r[{2}], t[{2}], u[{2}];\n"
        "  for (int i = 0; i < {2}; ++i) r[i] = _mm{1}_loadu_ps(s + i * ss);\n"
        "  for (int i = 0; i < {2}; i += 2) {{\n"
        "    t[i] = _mm{1}_unpacklo_ps(r[i], r[i + 1]);\n"
        "    t[i + 1] = _mm{1}_unpackhi_ps(r[i], r[i + 1]);\n"
        "  }}\n"
        "  for (int k = 0; k < {2}; k += 4)\n"
        "    for (int j = 0; j < 2; ++j) {{\n"
        "      __m{1}d x = _mm{1}_castps_pd(t[k + j]), y = _mm{1}_castps_pd(t[k + j + 2]);\n"
        "      u[k + 2 * j] = _mm{1}_castpd_ps(_mm{1}_unpacklo_pd(x, y));\n"
        "      u[k + 2 * j + 1] = _mm{1}_castpd_ps(_mm{1}_unpackhi_pd(x, y));\n"
        "    }}\n"
        "{3}"
        "#else\n",
        guard, bits, lanes, place);
    close = "#endif\n";
  }
  return define(name,
                fmt::format("{0}static inline void {1}(float* d, int64_t ds, const float* s, "
                            "int64_t ss) {{\n"
                            "{2}"
                            "  for (int r = 0; r < {3}; ++r)\n"
                            "    for (int c = 0; c < {3}; ++c) d[r * ds + c] = s[c * ss + r];\n"
                            "{4}}}",
                            include, name, isa, lanes, close));
}

std::string CppPrelude::splat(Type t) {
  std::string vt = value_type(t), st = value_type(value_kind(t).scalar());
  std::string name = "kf_splat_" + suffix(t);
  if (t.is_bool()) {
    return define(name, fmt::format("static inline {0} {1}(bool b) {{\n"
                                    "  return (b ? -1 : 0) - {0}{{}};\n}}",
                                    vt, name));
  }
  // x - 0 is x for every x (also -0 and NaN), so this is a plain broadcast.
  return define(name, fmt::format("static inline {0} {1}({2} x) {{\n"
                                  "  return x - {0}{{}};\n}}",
                                  vt, name, st));
}

std::string CppPrelude::ramp(Type t) {
  KF_CHECK(t.is_int() && t.is_vector()) << "ramp of " << ir::to_string(t);
  std::string vt = value_type(t), st = value_type(t.scalar());
  std::string name = "kf_ramp_" + suffix(t);
  return define(name, fmt::format("static inline {0} {1}({2} base, {2} stride) {{\n"
                                  "  {0} v;\n"
                                  "  for (int l = 0; l < {3}; ++l) v[l] = base + stride * l;\n"
                                  "  return v;\n}}",
                                  vt, name, st, t.lanes()));
}

std::string CppPrelude::first_lanes(int lanes) {
  std::string mt = mask_type(lanes);
  std::string name = fmt::format("kf_first_lanes_{}", lanes);
  std::string iota;
  for (int l = 0; l < lanes; ++l) iota += (l ? ", " : "") + std::to_string(l);
  return define(name, fmt::format("static inline {0} {1}(int64_t count) {{\n"
                                  "  const int32_t c = count < 0 ? 0 : count > {2} ? {2} : "
                                  "static_cast<int32_t>(count);\n"
                                  "  return {0}{{{3}}} < c;\n}}",
                                  mt, name, lanes, iota));
}

std::string CppPrelude::reduce(ir::ReduceOp op, Type t) {
  std::string vt = value_type(t), st = value_type(value_kind(t).scalar());
  std::string name = "kf_reduce_" + ir::to_string(op) + "_" + suffix(t);
  std::string combine;
  switch (op) {
    case ir::ReduceOp::add:
      combine = "v[l] + v[l + w]";
      break;
    case ir::ReduceOp::mul:
      combine = "v[l] * v[l + w]";
      break;
    case ir::ReduceOp::min:
      combine = "v[l + w] < v[l] ? v[l + w] : v[l]";
      break;
    case ir::ReduceOp::max:
      combine = "v[l + w] > v[l] ? v[l + w] : v[l]";
      break;
  }
  // A tree: lanes l and l + w are combined for w = lanes/2, ..., 1.
  return define(name, fmt::format("static inline {2} {1}({0} v) {{\n"
                                  "  for (int w = {3}; w >= 1; w /= 2)\n"
                                  "    for (int l = 0; l < w; ++l) v[l] = {4};\n"
                                  "  return v[0];\n}}",
                                  vt, name, st, t.lanes() / 2, combine));
}

// kf_max(a, b) is a > b ? a : b and kf_min(a, b) is a < b ? a : b, lane by lane: b where
// either is NaN. x86's maxps/minps compute exactly that, so float vectors of a width the target
// has use them: GCC compiles the conditional on vector types to a compare and a blend (two
// instructions on the ports that also run the FMAs).
std::string CppPrelude::min_max(ir::BinOp op, Type t) {
  bool is_min = op == ir::BinOp::min;
  KF_CHECK(is_min || op == ir::BinOp::max) << "min_max of another op";
  std::string vt = value_type(t);
  std::string name = fmt::format("kf_{}_{}", is_min ? "min" : "max", suffix(t));
  const Type v = value_kind(t);
  const bool f32 = v.kind() == ScalarKind::f32, f64 = v.kind() == ScalarKind::f64;
  const int bits = (f32 || f64) ? v.lanes() * (f32 ? 32 : 64) : 0;
  std::string guard, reg, prefix;
  if (v.is_vector() && bits == 512) {
    guard = "defined(__AVX512F__)", reg = "__m512", prefix = "_mm512";
  } else if (v.is_vector() && bits == 256) {
    guard = "defined(__AVX__)", reg = "__m256", prefix = "_mm256";
  } else if (v.is_vector() && bits == 128) {
    guard = "defined(__SSE2__)", reg = "__m128", prefix = "_mm";
  }
  const std::string plain = fmt::format("  return a {} b ? a : b;\n", is_min ? "<" : ">");
  if (guard.empty()) {
    return define(name,
                  fmt::format("static inline {0} {1}({0} a, {0} b) {{\n{2}}}", vt, name, plain));
  }
  if (f64) reg += "d";
  // The 512-bit form is the zero-masked one with every lane selected (the same instruction):
  // GCC 12's unmasked _mm512_max_ps passes an undefined source that -Wmaybe-uninitialized flags.
  const std::string insn = fmt::format("{}_{}{}_{}", prefix, bits == 512 ? "maskz_" : "",
                                       is_min ? "min" : "max", f32 ? "ps" : "pd");
  const std::string all = bits == 512 ? fmt::format("(__mmask{})-1, ", v.lanes()) : "";
  return define(name, fmt::format("#if {2}\n#include <immintrin.h>\n#endif\n"
                                  "static inline {0} {1}({0} a, {0} b) {{\n"
                                  "#if {2}\n"
                                  "  return ({0}){3}({4}({5})a, ({5})b);\n"
                                  "#else\n"
                                  "{6}"
                                  "#endif\n}}",
                                  vt, name, guard, insn, all, reg, plain));
}

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

std::string CppPrelude::heap_alloc() {
  uses_heap_ = true;
  return define("kf_alloc",
                "static inline void* kf_alloc(int64_t bytes) {\n"
                "  return std::aligned_alloc(64, static_cast<size_t>(bytes + 127) / "
                "64 * 64);\n}");
}

std::string CppPrelude::scratch_alloc() {
  uses_heap_ = true;
  return define(
      "kf_scratch",
      "// Buffers of whole intermediates persist across calls, one per allocation site\n"
      "// and thread, grown when a call needs more (a framework's caching allocator does\n"
      "// the same): a call pays no fresh page faults for its scratch memory.\n"
      "static inline void* kf_scratch(int slot, int64_t bytes) {\n"
      "  struct Buffer {\n"
      "    void* p = nullptr;\n"
      "    int64_t size = -1;\n"
      "    ~Buffer() { std::free(p); }\n"
      "  };\n"
      "  static thread_local Buffer buffers[" +
          std::to_string(kScratchSlots) +
          "];\n"
          "  Buffer& b = buffers[slot];\n"
          "  if (bytes > b.size) {\n"
          "    std::free(b.p);\n"
          "    b.p = std::aligned_alloc(64, static_cast<size_t>(bytes + 127) / 64 * 64);\n"
          "    b.size = bytes;\n"
          "  }\n"
          "  return b.p;\n}");
}

// A target without the vector width's non-temporal store (AVX2 for 16 lanes) stores normally.
std::string CppPrelude::stream_store(Type t) {
  KF_CHECK(t.is_vector() && t.kind() == ScalarKind::f32 && (t.lanes() == 8 || t.lanes() == 16))
      << "non-temporal store of " << ir::to_string(t);
  std::string vt = value_type(t);
  std::string name = fmt::format("kf_stream_f32x{}", t.lanes());
  std::string bits = t.lanes() == 16 ? "512" : "256";
  return define(name,
                fmt::format("static inline void {1}(float* p, {0} v) {{\n"
                            "  if ((reinterpret_cast<uintptr_t>(p) & (sizeof v - 1)) != 0) {{\n"
                            "    __builtin_memcpy(p, &v, sizeof v);\n"
                            "    return;\n"
                            "  }}\n"
                            "#if defined(__clang__)\n"
                            "  __builtin_nontemporal_store(v, reinterpret_cast<{0}*>(p));\n"
                            "#elif defined({3})\n"
                            "  __builtin_ia32_movntps{2}(p, v);\n"
                            "#else\n"
                            "  __builtin_memcpy(p, &v, sizeof v);\n"
                            "#endif\n}}",
                            vt, name, bits, t.lanes() == 16 ? "__AVX512F__" : "__AVX__"));
}

std::string CppPrelude::prefetch() {
  return define(
      "kf_prefetch",
      "template <typename T>\n"
      "static inline void kf_prefetch(const T* p, int64_t i) {\n"
      "  __builtin_prefetch(reinterpret_cast<const void*>(reinterpret_cast<uintptr_t>(p) +\n"
      "                                                   static_cast<uintptr_t>(i) * "
      "sizeof(T)));\n}");
}

std::string CppPrelude::num_threads() {
  return define("kf_num_threads",
                "extern \"C\" int omp_get_max_threads(void);\n"
                "static inline int64_t kf_num_threads() { return omp_get_max_threads(); }");
}

std::string CppPrelude::stream_fence() {
  return define("kf_stream_fence",
                "static inline void kf_stream_fence() { __builtin_ia32_sfence(); }");
}

std::string CppPrelude::render() const {
  std::string s;
  for (const std::string& t : typedefs_) s += t + "\n";
  if (!typedefs_.empty()) s += "\n";
  for (const std::string& h : helpers_) s += h + "\n\n";
  return s;
}

}  // namespace kf
