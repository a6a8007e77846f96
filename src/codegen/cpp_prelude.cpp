#include "codegen/cpp_prelude.h"

#include <fmt/format.h>

#include "codegen/cpp_prelude_internal.h"
#include "support/check.h"

namespace kf {

using ir::MathFn;
using ir::ScalarKind;
using ir::Type;
using prelude_detail::float_suffix;
using prelude_detail::suffix;
using prelude_detail::value_kind;

namespace {

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
