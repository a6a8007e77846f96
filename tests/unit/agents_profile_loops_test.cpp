#include <gtest/gtest.h>

#include "agents/profile_loops.h"

namespace kf::agents {
namespace {

const char* kNest = R"(// for (comment) while
#pragma omp parallel for
void f(float* a, const float* b, long n) {
  const char* s = "for (;;) {";
  for (long i = 0; i < n; ++i) {
    for (long j = 0; j < n; ++j)
      a[i * n + j] += b[j];
    long k = 0;
    while (k < n) { a[k] *= 2; ++k; }
  }
  do {
    --n;
  } while (n > 0);
  for (long i = 0; i < n; ++i) for (long j = 0; j < n; ++j) { a[j] = 0; }
}
)";

TEST(ProfileLoops, FindsLoopsAndTheirExtents) {
  std::vector<SourceLoop> loops = find_loops(kNest);
  // Comments, strings and the pragma hide their "for"s; the do-while's tail is not a loop.
  ASSERT_EQ(loops.size(), 6u);
  EXPECT_EQ(loops[0].line, 5);
  EXPECT_EQ(loops[0].column, 3);
  EXPECT_EQ(loops[0].end_line, 10);
  EXPECT_EQ(loops[0].header, "for (long i = 0; i < n; ++i)");
  EXPECT_EQ(loops[1].line, 6);
  EXPECT_EQ(loops[1].end_line, 7);  // a body without braces ends at its ';'
  EXPECT_EQ(loops[2].line, 9);
  EXPECT_EQ(loops[2].header, "while (k < n)");
  EXPECT_EQ(loops[3].header, "do");
  EXPECT_EQ(loops[3].line, 11);
  EXPECT_EQ(loops[3].end_line, 13);
  EXPECT_TRUE(loop_contains(loops[0], loops[1]));
  EXPECT_TRUE(loop_contains(loops[0], loops[2]));
  EXPECT_FALSE(loop_contains(loops[1], loops[2]));
  EXPECT_TRUE(loop_contains(loops[4], loops[5]));  // nested on one line, no outer braces
  EXPECT_EQ(loops[4].end_line, 14);
}

TEST(ProfileLoops, InnermostLoopAtALocation) {
  std::vector<SourceLoop> loops = find_loops(kNest);
  EXPECT_EQ(innermost_loop_at(loops, 7, 20), 1);  // the j loop's statement
  EXPECT_EQ(innermost_loop_at(loops, 6, 25), 1);  // the j loop's condition
  EXPECT_EQ(innermost_loop_at(loops, 8, 5), 0);   // after the j loop, inside the i loop
  EXPECT_EQ(innermost_loop_at(loops, 9, 22), 2);
  EXPECT_EQ(innermost_loop_at(loops, 4, 10), -1);  // outside every loop
  EXPECT_EQ(innermost_loop_at(loops, 14, 60), 5);
}

TEST(ProfileLoops, VectorTypesAndIntrinsics) {
  const char* src = R"(typedef float f32x16 __attribute__((vector_size(64)));
typedef double __attribute__((vector_size(32))) f64x4;
using i32x8 = int __attribute__((vector_size(32)));
typedef float plain;
#include <immintrin.h>
__m512 z;
)";
  std::set<std::string> names = vector_type_names(src);
  EXPECT_EQ(names, (std::set<std::string>{"f32x16", "f64x4", "i32x8", "__m512"}));
  EXPECT_TRUE(uses_explicit_simd("acc = fma(a, b, acc); f32x16 t;", names));
  EXPECT_TRUE(uses_explicit_simd("kf_store_f32x16(p, x);", names));
  EXPECT_FALSE(uses_explicit_simd("f32x16x t; myf32x16 u; f32x160 w;", names));
  EXPECT_TRUE(uses_explicit_simd("c = _mm512_fmadd_ps(a, b, c);", {}));
  EXPECT_TRUE(uses_explicit_simd("c = _mm_add_ps(a, b);", {}));
  EXPECT_FALSE(uses_explicit_simd("my_mm512_thing(); _mm;", {}));
}

TEST(ProfileLoops, SourceLine) {
  EXPECT_EQ(source_line("a\n  for (x) {  \nc", 2), "for (x) {");
  EXPECT_EQ(source_line("a\nb", 3), "");
}

}  // namespace
}  // namespace kf::agents
