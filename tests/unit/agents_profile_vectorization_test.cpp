#include <gtest/gtest.h>

#include "agents/profile_vectorization.h"

namespace kf::agents {
namespace {

// bench/jaxbench/08_gemm/reference.cpp and what g++ 12 -O3 -march=native says about it.
const char* kGemm = R"(// Reference for 08_gemm: C = A @ B, row-major, A[M,K], B[K,N], C[M,N].
// Loop order i-k-j with a per-row accumulator: every C[i,j] is still summed over k in ascending
// order, exactly as the textbook i-j-k triple loop, but B is walked along its rows.
#include <kforge/kernel.h>

#include <vector>

template <typename T>
void gemm(const T* A, const T* B, T* C, int64_t M, int64_t N, int64_t K) {
  using Acc = kf::acc_t<T>;
  std::vector<Acc> row(static_cast<size_t>(N));
  for (int64_t i = 0; i < M; ++i) {
    for (int64_t j = 0; j < N; ++j) row[j] = 0;
    for (int64_t k = 0; k < K; ++k) {
      const Acc a = Acc(A[i * K + k]);
      for (int64_t j = 0; j < N; ++j) row[j] += a * Acc(B[k * N + j]);
    }
    for (int64_t j = 0; j < N; ++j) C[i * N + j] = T(row[j]);
  }
}
)";

const char* kGemmReport =
    R"(candidate.cpp:12:25: missed: couldn't vectorize loop
candidate.cpp:12:25: missed: not vectorized: loop nest containing two or more consecutive inner loops cannot be vectorized
candidate.cpp:14:27: missed: couldn't vectorize loop
candidate.cpp:16:53: missed: not vectorized: complicated access pattern.
candidate.cpp:16:29: optimized: loop vectorized using 64 byte vectors
candidate.cpp:16:29: optimized: loop vectorized using 32 byte vectors
candidate.cpp:15:33: missed: couldn't vectorize loop
candidate.cpp:15:17: missed: not vectorized: complicated access pattern.
candidate.cpp:16:29: optimized: loop vectorized using 64 byte vectors
candidate.cpp:16:29: optimized: loop vectorized using 32 byte vectors
candidate.cpp:13:44: missed: statement clobbers memory: __builtin_memset (iftmp.5_125, 0, _71);
/usr/include/c++/12/bits/stl_vector.h:1234:5: missed: couldn't vectorize loop
kforge_entry.cpp:4:7: missed: couldn't vectorize loop
)";

TEST(ProfileVectorization, OuterLoopsAreNotHotLoops) {
  VectorizationReport r = parse_vectorization_report(kGemmReport, kGemm);
  EXPECT_TRUE(r.available);
  EXPECT_EQ(r.hot_loops, 1);  // the j loop of line 16; the others became memset/memcpy
  EXPECT_EQ(r.vectorized, 1);
  EXPECT_EQ(r.missed, 0);
  EXPECT_EQ(r.outer_missed, 2);  // i (line 12) and k (lines 14-15, reported twice)
  EXPECT_EQ(r.widest_bytes, 64);
  EXPECT_EQ(r.vectorized_lines, std::vector<int>{16});
  EXPECT_TRUE(r.missed_loops.empty());
}

const char* kScan = R"(#include <kforge/kernel.h>
void scan(const float* x, float* y, int64_t n) {
  float acc = 0;
  for (int64_t i = 0; i < n; ++i) {
    acc = acc * 0.5f + x[i];
    y[i] = acc;
  }
  for (int64_t i = 1; i < n; ++i)
    y[i] = y[i - 1] * x[i] + y[i];
}
)";

TEST(ProfileVectorization, MissedLoopsKeepLineSourceAndReason) {
  const char* report = R"(candidate.cpp:8:25: missed: couldn't vectorize loop
candidate.cpp:9:12: missed: not vectorized: no vectype for stmt: _21 = *_20;
 scalar_type: const float
candidate.cpp:4:25: missed: couldn't vectorize loop
candidate.cpp:5:15: missed: not vectorized: unsupported use in stmt.
candidate.cpp:4:25: missed: couldn't vectorize loop
candidate.cpp:5:15: missed: not vectorized: a later reason is not kept.
)";
  VectorizationReport r = parse_vectorization_report(report, kScan);
  EXPECT_EQ(r.hot_loops, 2);
  EXPECT_EQ(r.missed, 2);
  ASSERT_EQ(r.missed_loops.size(), 2u);
  EXPECT_EQ(r.missed_loops[0].line, 4);  // by line
  EXPECT_EQ(r.missed_loops[0].source, "for (int64_t i = 0; i < n; ++i) {");
  EXPECT_EQ(r.missed_loops[0].reason, "not vectorized: unsupported use in stmt");
  EXPECT_EQ(r.missed_loops[0].reason_line, 5);
  EXPECT_EQ(r.missed_loops[1].line, 8);
  EXPECT_EQ(r.missed_loops[1].reason,
            "not vectorized: no vectype for stmt: _21 = *_20; scalar_type: const float");
}

TEST(ProfileVectorization, VectorCodeIsNotAMiss) {
  const char* src = R"(typedef float v16 __attribute__((vector_size(64)));
void f(const float* x, float* y, long n) {
  for (long b = 0; b < n / 16; ++b) {
    v16 a;
    __builtin_memcpy(&a, x + 16 * b, 64);
    __builtin_memcpy(y + 16 * b, &a, 64);
  }
}
)";
  const char* report = R"(candidate.cpp:5:28: missed: couldn't vectorize loop
candidate.cpp:5:21: missed: not vectorized: no vectype for stmt: _25 = MEM <uint512_t> [(char * {ref-all})_24];
 scalar_type: uint512_t
)";
  VectorizationReport r = parse_vectorization_report(report, src);
  EXPECT_EQ(r.hot_loops, 1);
  EXPECT_EQ(r.explicit_simd, 1);
  EXPECT_EQ(r.missed, 0);
}

TEST(ProfileVectorization, MessagesOutsideLoopsAndCaps) {
  std::string src, report;
  for (int i = 1; i <= 12; ++i) {
    src += "for (int i = 0; i < n; ++i) a[i] = g(a[i]);\n";
    report += "candidate.cpp:" + std::to_string(i) + ":21: missed: couldn't vectorize loop\n";
  }
  // Outside every source loop: a reason for the loop before it (from an inlined function), a
  // loop placed at a statement outside loops (dropped with its reasons).
  report += "candidate.cpp:40:1: missed: not vectorized: in an inlined helper\n";
  report += "candidate.cpp:41:1: missed: couldn't vectorize loop\n";
  report += "candidate.cpp:42:1: missed: not vectorized: dropped with its loop\n";
  VectorizationReport r = parse_vectorization_report(report, src);
  EXPECT_EQ(r.missed, 12);
  EXPECT_EQ(r.hot_loops, 12);
  ASSERT_EQ(r.missed_loops.size(), VectorizationReport::kMaxMissedLoops);
  EXPECT_EQ(r.missed_loops[0].reason, "couldn't vectorize loop");
  EXPECT_EQ(
      parse_vectorization_report(report + "candidate.cpp:12:21: optimized: loop vectorized\n", src)
          .vectorized,
      1);
  EXPECT_TRUE(parse_vectorization_report("", src).available);
  EXPECT_EQ(parse_vectorization_report("", src).hot_loops, 0);
}

// kforge's naive schedule of 08_gemm: the k loop strides through B by N.
const char* kNaiveGemm = R"(// kforge: schedule-hash d5a1eb4cb7a274ab74e3498b50393e48
// Generated by kforge from the TE spec of task 08_gemm (target avx512)
// gemm: generated by kforge codegen_cpp (target avx512) from the loop-nest IR.
#include <cstdint>

void gemm(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C, int64_t M, int64_t N, int64_t K) {
  // produce C
  for (int64_t C_i = 0; C_i < M; ++C_i) {
    for (int64_t C_j = 0; C_j < N; ++C_j) {
      C[C_i * N + C_j] = 0.0f;
      for (int64_t C_k = 0; C_k < K; ++C_k) {
        C[C_i * N + C_j] = C[C_i * N + C_j] + A[C_i * K + C_k] * B[C_k * N + C_j];
      }
    }
  }
}
)";

TEST(ProfileVectorization, EightByteVectorsAreNarrow) {
  const char* report = R"(candidate.cpp:8:29: missed: couldn't vectorize loop
candidate.cpp:8:29: missed: not vectorized: multiple nested loops.
candidate.cpp:9:31: missed: couldn't vectorize loop
candidate.cpp:9:31: missed: not vectorized: control flow in loop.
candidate.cpp:11:33: optimized: loop vectorized using 8 byte vectors
candidate.cpp:10:24: missed: statement clobbers memory: __builtin_memset (_95, 0, _100);
)";
  VectorizationReport r = parse_vectorization_report(report, kNaiveGemm);
  EXPECT_EQ(r.hot_loops, 1);
  EXPECT_EQ(r.vectorized, 1);
  EXPECT_EQ(r.outer_missed, 2);
  EXPECT_EQ(r.widest_bytes, 8);
  ASSERT_EQ(r.narrow_loops.size(), 1u);
  EXPECT_EQ(r.narrow_loops[0].line, 11);
  EXPECT_EQ(r.narrow_loops[0].source, "for (int64_t C_k = 0; C_k < K; ++C_k) {");
  EXPECT_EQ(r.narrow_loops[0].reason, "8-byte vectors");
}

}  // namespace
}  // namespace kf::agents
