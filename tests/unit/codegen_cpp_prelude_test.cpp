// The vector helpers of the generated C++ (cpp_prelude.h), checked by running them: each kernel
// is compiled twice — vectorized, and with every loop left serial — and both must agree with
// each other and with a reference computed here, at sizes with tails (masked lanes).
#include <gtest/gtest.h>
#include <kforge/kernel.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <vector>

#include "codegen/cpp_prelude.h"
#include "ir/ir_printer.h"
#include "unit/codegen_test_util.h"
#include "unit/ir_test_kernels.h"
#include "unit/ir_test_util.h"

namespace kf {
namespace {

using namespace kf::ir;
using namespace kf::testing_ir;

// Both versions of f: [0] vectorized (the real pipeline), [1] all loops serial.
std::vector<LoadedKernel> build_both(const LoweredFunc& f) {
  std::vector<LoadedKernel> out;
  LoweredFunc vec = f, ser = f;
  vec.body = prepare(f.body);
  ser.body = simplify(f.body);
  for (const LoweredFunc* g : {&vec, &ser}) {
    std::string src = codegen_cpp(*g, CodegenTarget::avx512);
    out.push_back(compile_and_load(*g, src));
    EXPECT_TRUE(out.back().ok()) << out.back().log << "\n" << src;
  }
  return out;
}

// A loop over [0, n) in tiles of `lanes`, vectorized, with the tail masked by an `if`.
Stmt masked_loop(const char* tile, const char* lane, const Expr& n, int lanes,
                 const std::function<Stmt(Expr)>& body) {
  Expr t = ivar(tile), l = ivar(lane);
  Expr idx = t * lanes + l;
  return For::make(tile, i64(0), (n + (lanes - 1)) / lanes, ForKind::serial,
                   For::make(lane, i64(0), i64(lanes), ForKind::vectorized,
                             IfThenElse::make(lt(idx, n), body(idx))));
}

TEST(CodegenPrelude, F64SelectMinMax) {
  Expr n = ivar("n");
  auto x = [](Expr i) { return Load::make(Type::f64(), "x", i); };
  Stmt body = masked_loop("t", "l", n, 8, [&](Expr i) {
    return Store::make("y", i, select(gt(x(i), f64(0)), x(i) * 2.0 - 1.0, max(x(i), f64(-0.5))));
  });
  LoweredFunc f{"f64ops",
                {{"x", ParamKind::input, Type::f64()},
                 {"y", ParamKind::output, Type::f64()},
                 {"n", ParamKind::dim, Type::i64()}},
                body};
  auto k = build_both(f);
  ASSERT_TRUE(k[0].ok() && k[1].ok());
  for (int64_t size : {1, 7, 8, 13}) {
    std::vector<double> xs(size), y0(size + 1, 42), y1(size + 1, 42);
    for (int64_t i = 0; i < size; ++i) xs[i] = std::sin(1.7 * i) * 3;
    k[0].call({xs.data(), y0.data()}, {size}, {});
    k[1].call({xs.data(), y1.data()}, {size}, {});
    for (int64_t i = 0; i < size; ++i) {
      double want = xs[i] > 0 ? xs[i] * 2 - 1 : std::max(xs[i], -0.5);
      EXPECT_EQ(y0[i], want) << i;
      EXPECT_EQ(y1[i], want) << i;
    }
    EXPECT_EQ(y0[size], 42) << "a masked lane was stored";
  }
}

TEST(CodegenPrelude, Bf16RoundsEveryOperation) {
  Expr n = ivar("n");
  auto x = [](Expr i) { return Load::make(Type::bf16(), "x", i); };
  Stmt body = masked_loop("t", "l", n, 16, [&](Expr i) {
    return Block::make(
        {Store::make("y", i,
                     x(i) * FloatImm::make(Type::bf16(), 3.0) + FloatImm::make(Type::bf16(), 0.1)),
         Store::make("z", i, cast(Type::f32(), x(i)) + f32(0.5))});
  });
  LoweredFunc f{"bf16ops",
                {{"x", ParamKind::input, Type::bf16()},
                 {"y", ParamKind::output, Type::bf16()},
                 {"z", ParamKind::output, Type::f32()},
                 {"n", ParamKind::dim, Type::i64()}},
                body};
  auto k = build_both(f);
  ASSERT_TRUE(k[0].ok() && k[1].ok());
  auto r = [](float v) { return bf16::to_float(bf16::from_float(v)); };
  for (int64_t size : {1, 16, 21}) {
    std::vector<bf16> xs(size), y0(size), y1(size);
    std::vector<float> z0(size), z1(size);
    for (int64_t i = 0; i < size; ++i) xs[i] = bf16(static_cast<float>(std::cos(0.9 * i) * 5));
    k[0].call({xs.data(), y0.data(), z0.data()}, {size}, {});
    k[1].call({xs.data(), y1.data(), z1.data()}, {size}, {});
    for (int64_t i = 0; i < size; ++i) {
      float xf = static_cast<float>(xs[i]);
      float want = r(r(xf * r(3.0f)) + r(0.1f));
      EXPECT_EQ(static_cast<float>(y0[i]), want) << i;
      EXPECT_EQ(static_cast<float>(y1[i]), want) << i;
      EXPECT_EQ(z0[i], xf + 0.5f);
      EXPECT_EQ(z1[i], xf + 0.5f);
    }
  }
}

TEST(CodegenPrelude, GatherScatterAndIntegers) {
  Expr n = ivar("n");
  Stmt body = masked_loop("t", "l", n, 16, [&](Expr i) {
    Expr idx = Load::make(Type::i64(), "idx", i);
    Expr iv = cast(Type::i32(), i);
    return Block::make({Store::make("y", idx, fload("x", i * 2) + f32(1)),
                        Store::make("c", i,
                                    (iv * 3 + 7) % 5 - min(iv, i32(4)) +
                                        cast(Type::i32(), gt(fload("x", i), f32(0))))});
  });
  LoweredFunc f{"ints",
                {{"x", ParamKind::input, Type::f32()},
                 {"idx", ParamKind::input, Type::i64()},
                 {"y", ParamKind::output, Type::f32()},
                 {"c", ParamKind::output, Type::i32()},
                 {"n", ParamKind::dim, Type::i64()}},
                body};
  auto k = build_both(f);
  ASSERT_TRUE(k[0].ok() && k[1].ok());
  for (int64_t size : {1, 5, 16, 35}) {
    std::vector<float> xs(2 * size);
    std::vector<int64_t> idx(size);
    for (int64_t i = 0; i < 2 * size; ++i) xs[i] = static_cast<float>(std::sin(2.1 * i));
    for (int64_t i = 0; i < size; ++i) idx[i] = (i * 7 + 3) % size;  // a permutation when gcd = 1
    if (size % 7 == 0) continue;
    for (int v = 0; v < 2; ++v) {
      std::vector<float> y(size + 1, -9);
      std::vector<int32_t> c(size + 1, -9);
      k[v].call({xs.data(), idx.data(), y.data(), c.data()}, {size}, {});
      for (int64_t i = 0; i < size; ++i) {
        EXPECT_EQ(y[idx[i]], xs[2 * i] + 1) << v << " " << i;
        int32_t iv = static_cast<int32_t>(i);
        EXPECT_EQ(c[i], (iv * 3 + 7) % 5 - std::min(iv, 4) + (xs[i] > 0 ? 1 : 0)) << v << " " << i;
      }
      EXPECT_EQ(y[size], -9);
      EXPECT_EQ(c[size], -9);
    }
  }
}

TEST(CodegenPrelude, MathFunctions) {
  const std::vector<MathFn> unary = {MathFn::exp,   MathFn::log, MathFn::sqrt,    MathFn::rsqrt,
                                     MathFn::tanh,  MathFn::erf, MathFn::sigmoid, MathFn::abs,
                                     MathFn::floor, MathFn::ceil};
  Expr n = ivar("n");
  std::vector<Param> params = {{"x", ParamKind::input, Type::f32()}};
  std::vector<Stmt> stores;
  for (size_t j = 0; j < unary.size() + 2; ++j)
    params.push_back({"y" + std::to_string(j), ParamKind::output, Type::f32()});
  params.push_back({"n", ParamKind::dim, Type::i64()});
  Stmt body = masked_loop("t", "l", n, 16, [&](Expr i) {
    std::vector<Stmt> s;
    Expr x = fload("x", i);
    for (size_t j = 0; j < unary.size(); ++j)
      s.push_back(Store::make("y" + std::to_string(j), i, Call::make(unary[j], {x})));
    s.push_back(
        Store::make("y" + std::to_string(unary.size()), i, Call::make(MathFn::pow, {x, f32(1.5)})));
    s.push_back(Store::make("y" + std::to_string(unary.size() + 1), i,
                            Call::make(MathFn::fma, {x, x, f32(-1)})));
    return Block::make(s);
  });
  LoweredFunc f{"math", params, body};
  auto k = build_both(f);
  ASSERT_TRUE(k[0].ok() && k[1].ok());
  const int64_t size = 19;
  std::vector<float> xs(size);
  for (int64_t i = 0; i < size; ++i) xs[i] = 0.1f + 0.37f * static_cast<float>(i);
  std::vector<std::vector<float>> ys(2, std::vector<float>((unary.size() + 2) * size));
  for (int v = 0; v < 2; ++v) {
    std::vector<void*> bufs = {xs.data()};
    for (size_t j = 0; j < unary.size() + 2; ++j) bufs.push_back(ys[v].data() + j * size);
    k[v].call(bufs, {size}, {});
  }
  auto ref = [](size_t j, double x) {
    switch (j) {
      case 0:
        return std::exp(x);
      case 1:
        return std::log(x);
      case 2:
        return std::sqrt(x);
      case 3:
        return 1 / std::sqrt(x);
      case 4:
        return std::tanh(x);
      case 5:
        return std::erf(x);
      case 6:
        return 1 / (1 + std::exp(-x));
      case 7:
        return std::fabs(x);
      case 8:
        return std::floor(x);
      case 9:
        return std::ceil(x);
      case 10:
        return std::pow(x, 1.5);
      default:
        return x * x - 1;
    }
  };
  for (size_t j = 0; j < unary.size() + 2; ++j) {
    for (int64_t i = 0; i < size; ++i) {
      double want = ref(j, xs[i]);
      EXPECT_NEAR(ys[0][j * size + i], want, 1e-6 * std::max(1.0, std::fabs(want)))
          << j << " " << i;
      // exp, log, tanh, erf and sigmoid of f32 vectors are polynomials (1-2 ulp), the scalar
      // path calls libm: they agree to a few ulp; every other function is the same libm call
      // per lane.
      if (j == 0 || j == 1 || j == 4 || j == 5 || j == 6)
        EXPECT_NEAR(ys[0][j * size + i], ys[1][j * size + i], 5e-7 * std::fabs(want)) << j;
      else
        EXPECT_EQ(ys[0][j * size + i], ys[1][j * size + i]) << "vector and scalar differ: " << j;
    }
  }
}

// fn applied to each of xs by the vectorized kernel y[i] = fn(x[i]) (16 lanes, masked tail).
std::vector<float> vectorized(MathFn fn, const std::vector<float>& xs) {
  Expr n = ivar("n");
  std::vector<Param> params = {{"x", ParamKind::input, Type::f32()},
                               {"y", ParamKind::output, Type::f32()},
                               {"n", ParamKind::dim, Type::i64()}};
  Stmt body = masked_loop("t", "l", n, 16, [&](Expr i) {
    return Store::make("y", i, Call::make(fn, {fload("x", i)}));
  });
  auto k = build_both({"unary_" + to_string(fn), params, body});
  EXPECT_TRUE(k[0].ok());
  std::vector<float> ys(xs.size());
  if (!k[0].ok()) return ys;
  std::vector<float> in = xs;
  std::vector<void*> bufs = {in.data(), ys.data()};
  k[0].call(bufs, {static_cast<int64_t>(xs.size())}, {});
  return ys;
}

TEST(CodegenPrelude, VectorExpAtTheEdgesOfItsRange) {
  // The vector exp clamps instead of branching: 0 below about -87 (and at -inf), finite up to
  // ln FLT_MAX = 88.72 (k = 128 there), inf above, NaN through; within 2 ulp of libm between.
  const std::vector<float> xs = {-INFINITY, -1000.0f, -88.5f,  -87.5f,  -86.5f,   -50.0f,
                                 -1e-8f,    0.0f,     0.3465f, 0.3466f, 50.0f,    88.3f,
                                 88.5f,     88.72f,   88.73f,  1000.0f, INFINITY, NAN};
  const std::vector<float> ys = vectorized(MathFn::exp, xs);
  for (size_t i = 0; i < xs.size(); ++i) {
    const double want = std::exp(static_cast<double>(xs[i]));
    if (std::isnan(xs[i])) {
      EXPECT_TRUE(std::isnan(ys[i])) << "exp(NaN) = " << ys[i];
    } else if (xs[i] < -87.0f) {
      EXPECT_EQ(ys[i], 0.0f) << "exp(" << xs[i] << ")";
    } else if (want > 3.4028234663852886e38) {
      EXPECT_EQ(ys[i], INFINITY) << "exp(" << xs[i] << ")";
    } else {
      EXPECT_NEAR(ys[i], want, 2.5e-7 * want) << "exp(" << xs[i] << ")";
    }
  }
}

TEST(CodegenPrelude, VectorErfAndTanhFollowLibmAcrossTheirRange) {
  // Both branch between a polynomial near 0 and an exp-based form: check each side of the
  // switch points (erf at 1 and 4, tanh at 0.625), far out, the infinities and NaN.
  Expr n = ivar("n");
  std::vector<Param> params = {{"x", ParamKind::input, Type::f32()},
                               {"ye", ParamKind::output, Type::f32()},
                               {"yt", ParamKind::output, Type::f32()},
                               {"n", ParamKind::dim, Type::i64()}};
  Stmt body = masked_loop("t", "l", n, 16, [&](Expr i) {
    Expr x = fload("x", i);
    return Block::make({Store::make("ye", i, Call::make(MathFn::erf, {x})),
                        Store::make("yt", i, Call::make(MathFn::tanh, {x}))});
  });
  auto k = build_both({"erf_tanh", params, body});
  ASSERT_TRUE(k[0].ok());
  std::vector<float> xs;
  for (int i = -3000; i <= 3000; ++i) xs.push_back(static_cast<float>(i) * 0.003f);
  for (float x : {1e-30f, 1e-6f, 0.99999f, 1.0f, 3.9999f, 4.0f, 20.0f, 1e30f, INFINITY})
    for (float sign : {1.0f, -1.0f}) xs.push_back(sign * x);
  xs.push_back(NAN);
  std::vector<float> e(xs.size()), t(xs.size());
  std::vector<void*> bufs = {xs.data(), e.data(), t.data()};
  k[0].call(bufs, {static_cast<int64_t>(xs.size())}, {});
  for (size_t i = 0; i < xs.size(); ++i) {
    if (std::isnan(xs[i])) {
      EXPECT_TRUE(std::isnan(e[i]) && std::isnan(t[i]));
      continue;
    }
    const double we = std::erf(static_cast<double>(xs[i])),
                 wt = std::tanh(static_cast<double>(xs[i]));
    // Relative near 0 (both are ~x there), absolute at the saturated ends.
    EXPECT_NEAR(e[i], we, 2.5e-7 * std::max(std::fabs(we), 0.5 * std::fabs(we) + 1e-30) + 6e-8)
        << "erf(" << xs[i] << ")";
    EXPECT_NEAR(t[i], wt, 2.5e-7 * std::fabs(wt) + 6e-8) << "tanh(" << xs[i] << ")";
    if (std::fabs(xs[i]) < 1e-3f) {
      EXPECT_NEAR(e[i], we, 2.5e-7 * std::fabs(we)) << "erf(" << xs[i] << ") relative";
      EXPECT_NEAR(t[i], wt, 2.5e-7 * std::fabs(wt)) << "tanh(" << xs[i] << ") relative";
    }
  }
}

TEST(CodegenPrelude, VectorLogFollowsLibmAcrossItsRange) {
  // m * 2^e with m around 1: each side of the sqrt(2) switch, near 1 (log ~ x - 1), subnormals
  // (scaled first), the largest finite value, and the special values.
  std::vector<float> xs;
  for (int i = 1; i <= 4000; ++i) xs.push_back(static_cast<float>(i) * 0.001f);
  for (float x : {1e-45f, 1e-40f, 1.1754942e-38f, 1.17549435e-38f, 1e-20f, 0.70710677f, 0.7071068f,
                  0.99999994f, 1.0f, 1.0000001f, 1.4142135f, 1.4142137f, 1e10f, 3.4028235e38f})
    xs.push_back(x);
  const size_t finite = xs.size();
  for (float x : {0.0f, -0.0f, -1.0f, INFINITY, -INFINITY, NAN}) xs.push_back(x);
  const std::vector<float> ys = vectorized(MathFn::log, xs);
  for (size_t i = 0; i < finite; ++i) {
    const double want = std::log(static_cast<double>(xs[i]));
    EXPECT_NEAR(ys[i], want, 2.5e-7 * std::fabs(want) + 1e-7 * std::fabs(xs[i] - 1.0f) + 1e-45)
        << "log(" << xs[i] << ")";
  }
  EXPECT_EQ(ys[finite], -INFINITY);
  EXPECT_EQ(ys[finite + 1], -INFINITY);
  EXPECT_TRUE(std::isnan(ys[finite + 2]));
  EXPECT_EQ(ys[finite + 3], INFINITY);
  EXPECT_TRUE(std::isnan(ys[finite + 4]));
  EXPECT_TRUE(std::isnan(ys[finite + 5]));
}

TEST(CodegenPrelude, FastFormsStayWithinTheirBounds) {
  // `approximate`'s forms, vectorized and in scalar code (the 4-lane polynomial on a broadcast,
  // no libm call): the degree-4 exponential within 3e-6 relative; sigmoid, tanh and erf built on
  // it within a few times that; log as accurate as the default one.
  const std::vector<MathFn> fns = {MathFn::exp, MathFn::sigmoid, MathFn::tanh, MathFn::erf,
                                   MathFn::log};
  Expr n = ivar("n");
  std::vector<Param> params = {{"x", ParamKind::input, Type::f32()}};
  for (size_t j = 0; j < fns.size(); ++j)
    params.push_back({"y" + std::to_string(j), ParamKind::output, Type::f32()});
  params.push_back({"n", ParamKind::dim, Type::i64()});
  Stmt body = masked_loop("t", "l", n, 16, [&](Expr i) {
    std::vector<Stmt> s;
    for (size_t j = 0; j < fns.size(); ++j)
      s.push_back(Store::make("y" + std::to_string(j), i,
                              Call::make(fns[j], {fload("x", i)}, /*approx=*/true)));
    return Block::make(s);
  });
  auto k = build_both({"fast_forms", params, body});
  ASSERT_TRUE(k[0].ok() && k[1].ok());
  std::vector<float> xs;
  for (int i = -2000; i <= 2000; ++i) xs.push_back(static_cast<float>(i) * 0.01f);
  const int64_t size = static_cast<int64_t>(xs.size());
  for (int v = 0; v < 2; ++v) {
    std::vector<std::vector<float>> ys(fns.size(), std::vector<float>(xs.size()));
    std::vector<void*> bufs = {xs.data()};
    for (auto& y : ys) bufs.push_back(y.data());
    k[v].call(bufs, {size}, {});
    for (size_t i = 0; i < xs.size(); ++i) {
      const double x = xs[i];
      EXPECT_NEAR(ys[0][i], std::exp(x), 3e-6 * std::exp(x)) << "exp(" << x << ") " << v;
      const double sg = 1 / (1 + std::exp(-x));
      EXPECT_NEAR(ys[1][i], sg, 3.5e-6 * sg) << "sigmoid(" << x << ") " << v;
      EXPECT_NEAR(ys[2][i], std::tanh(x), 3e-6 * std::fabs(std::tanh(x)) + 1e-7)
          << "tanh(" << x << ") " << v;
      EXPECT_NEAR(ys[3][i], std::erf(x), 1e-6 * std::fabs(std::erf(x)) + 1e-7)
          << "erf(" << x << ") " << v;
      if (x > 0) {
        EXPECT_NEAR(ys[4][i], std::log(x),
                    2.5e-7 * std::fabs(std::log(x)) + 1e-7 * std::fabs(x - 1))
            << "log(" << x << ") " << v;
      }
    }
  }
}

TEST(CodegenPrelude, MaskedReductionsAndLets) {
  // Per row: mn = min, mx = max, sm = sum of x*x + x*x (through a Let), over a masked tail.
  Expr n = ivar("n"), r = ivar("r");
  Expr x2 = Let::make("v", fload("x", r * n + ivar("t") * 16 + ivar("l")),
                      Var::make(Type::f32(), "v") * Var::make(Type::f32(), "v") * 2.0);
  Stmt init = Block::make({Store::make("mn", r, f32(INFINITY)),
                           Store::make("mx", r, f32(-INFINITY)), Store::make("sm", r, f32(0))});
  Stmt tiles = masked_loop("t", "l", n, 16, [&](Expr i) {
    Expr x = fload("x", r * n + i);
    return Block::make({Store::make("mn", r, min(fload("mn", r), x)),
                        Store::make("mx", r, max(x, fload("mx", r))),
                        Store::make("sm", r, fload("sm", r) + x2)});
  });
  LoweredFunc f{
      "reduce",
      {{"x", ParamKind::input, Type::f32()},
       {"mn", ParamKind::output, Type::f32()},
       {"mx", ParamKind::output, Type::f32()},
       {"sm", ParamKind::output, Type::f32()},
       {"rows", ParamKind::dim, Type::i64()},
       {"n", ParamKind::dim, Type::i64()}},
      For::make("r", i64(0), ivar("rows"), ForKind::parallel, Block::make({init, tiles}))};
  LoweredFunc vec = f;
  vec.body = prepare(f.body);
  std::string printed = to_string(vec);
  expect_checks(printed, {"let l.mask0 = ramp(t*16, 1, 16) < x16(n)",
                          "mn[r] = min(mn[r], reduce_min(select(l.mask0,", "x16(inf)))"});
  auto k = build_both(f);
  ASSERT_TRUE(k[0].ok() && k[1].ok());
  const int64_t rows = 3;
  for (int64_t size : {1, 16, 37}) {
    std::vector<float> xs(rows * size);
    for (size_t i = 0; i < xs.size(); ++i) xs[i] = static_cast<float>(std::sin(0.3 * i + 1));
    for (int v = 0; v < 2; ++v) {
      std::vector<float> mn(rows), mx(rows), sm(rows);
      k[v].call({xs.data(), mn.data(), mx.data(), sm.data()}, {rows, size}, {});
      for (int64_t row = 0; row < rows; ++row) {
        float a = INFINITY, b = -INFINITY;
        double s = 0;
        for (int64_t i = 0; i < size; ++i) {
          float x = xs[row * size + i];
          a = std::min(a, x);
          b = std::max(b, x);
          s += 2.0 * x * x;
        }
        EXPECT_EQ(mn[row], a) << v;
        EXPECT_EQ(mx[row], b) << v;
        EXPECT_NEAR(sm[row], s, 1e-5 * s) << v;
      }
    }
  }
}

TEST(CodegenPrelude, HeapAndVectorElementBuffers) {
  // tmp (heap, f32[n]) = x + 1; acc (stack, two f32x8 elements) sums tmp in 8-lane pieces.
  Expr n = ivar("n"), i = ivar("i"), c = ivar("c");
  Type v8 = Type::f32(8);
  Stmt fill =
      For::make("i", i64(0), n, ForKind::serial, Store::make("tmp", i, fload("x", i) + 1.0));
  Stmt zero = Block::make(
      {Store::make("acc", i64(0), make_zero(v8)), Store::make("acc", i64(1), make_zero(v8))});
  Stmt sum = For::make("c", i64(0), n / 8, ForKind::serial,
                       Store::make("acc", c % 2,
                                   Load::make(v8, "acc", c % 2) +
                                       Load::make(v8, "tmp", Ramp::make(c * 8, i64(1), 8))));
  Stmt out = Store::make("y", i64(0),
                         VectorReduce::make(ReduceOp::add, Load::make(v8, "acc", i64(0)) +
                                                               Load::make(v8, "acc", i64(1))));
  Stmt body = Allocate::make(
      "tmp", Type::f32(), n, MemoryKind::heap,
      Allocate::make("acc", v8, i64(2), MemoryKind::stack, Block::make({fill, zero, sum, out})));
  LoweredFunc f{"bufs",
                {{"x", ParamKind::input, Type::f32()},
                 {"y", ParamKind::output, Type::f32()},
                 {"n", ParamKind::dim, Type::i64()}},
                body};
  std::string src = codegen_cpp(f, CodegenTarget::avx2);
  expect_checks(
      src,
      {"#include <cstdlib>", "typedef float f32x8",
       "float* tmp = static_cast<float*>(kf_scratch(0, n * int64_t(sizeof(float))));",
       "alignas(64) f32x8 acc[2] = {};", "acc[c % 2] = acc[c % 2] + kf_load_f32x8(tmp + c * 8);",
       "y[0] = kf_reduce_add_f32x8(acc[0] + acc[1]);"});
  // The whole-call buffer persists across calls (kf_scratch), so the kernel does not free it.
  EXPECT_EQ(src.find("std::free(tmp)"), std::string::npos);
  LoadedKernel k = compile_and_load(f, src);
  ASSERT_TRUE(k.ok()) << k.log << src;
  // Calls that need more scratch than the last (the buffer grows), then less.
  for (int64_t size : {24, 4096, 8, 100000}) {
    std::vector<float> xs(size), y(1);
    for (int64_t j = 0; j < size; ++j) xs[j] = static_cast<float>(j % 7);
    k.call({xs.data(), y.data()}, {size}, {});
    double want = 0;
    for (int64_t j = 0; j < size / 8 * 8; ++j) want += j % 7 + 1;
    EXPECT_EQ(y[0], static_cast<float>(want)) << size;
  }
}

TEST(CodegenPrelude, MaskedTailsTouchNothingPastTheEnd) {
  // x and y end exactly where an inaccessible page begins: the masked tail vector (f32x16,
  // f32x8, f64x8: the masked instructions where the compiler targets them) must neither read
  // nor write a lane past n, or the kernel faults.
  const int64_t page = sysconf(_SC_PAGESIZE);
  for (auto [kind, lanes] :
       {std::pair{ScalarKind::f32, 16}, {ScalarKind::f32, 8}, {ScalarKind::f64, 8}}) {
    const Type elem = kind == ScalarKind::f64 ? Type::f64() : Type::f32();
    const size_t bytes = kind == ScalarKind::f64 ? 8 : 4;
    Expr n = ivar("n");
    Stmt body = masked_loop("t", "l", n, lanes, [&](Expr i) {
      Expr v = Load::make(elem, "x", i);
      return Store::make("y", i, v * make_const(elem, 2.0) + make_const(elem, 1.0));
    });
    LoweredFunc f{"tails",
                  {{"x", ParamKind::input, elem},
                   {"y", ParamKind::output, elem},
                   {"n", ParamKind::dim, Type::i64()}},
                  body};
    const std::string src = codegen_cpp(
        f, lanes == 8 && kind == ScalarKind::f32 ? CodegenTarget::avx2 : CodegenTarget::avx512);
    LoadedKernel k = compile_and_load(f, src);
    ASSERT_TRUE(k.ok()) << k.log << src;
    for (int64_t size : {1, 5, lanes - 1, lanes + 3}) {
      auto guarded = [&]() {
        char* m = static_cast<char*>(
            mmap(nullptr, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
        EXPECT_NE(m, MAP_FAILED);
        EXPECT_EQ(mprotect(m + page, page, PROT_NONE), 0);
        return m;
      };
      char* xm = guarded();
      char* ym = guarded();
      char* xp = xm + page - size * bytes;
      char* yp = ym + page - size * bytes;
      for (int64_t i = 0; i < size; ++i) {
        if (kind == ScalarKind::f64)
          reinterpret_cast<double*>(xp)[i] = 0.5 * i;
        else
          reinterpret_cast<float*>(xp)[i] = 0.5f * i;
      }
      k.call({xp, yp}, {size}, {});
      for (int64_t i = 0; i < size; ++i) {
        const double got = kind == ScalarKind::f64 ? reinterpret_cast<double*>(yp)[i]
                                                   : reinterpret_cast<float*>(yp)[i];
        EXPECT_EQ(got, 1.0 * i + 1) << ir::to_string(elem) << " x" << lanes << " n=" << size;
      }
      munmap(xm, 2 * page);
      munmap(ym, 2 * page);
    }
  }
}

}  // namespace
}  // namespace kf
