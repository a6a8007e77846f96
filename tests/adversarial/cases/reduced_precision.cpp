// reduced_precision — rounds A and B to bfloat16 by truncation (clears the low 16 bits of each
// float) before multiplying; accumulates in float. Cheap to vectorize and half the bandwidth in a
// real kernel, but the products carry up to ~2^-7 relative error.
// Expected verdict: wrong_answer. The f32 tolerance (rel_l2 1e-5, rtol 1e-3, atol 1e-4) is far
// tighter than bf16 inputs allow: at M = N = K = 1 a single product is already off by up to ~1.6%.
// Nothing may loosen the tolerance for it (DESIGN.md invariant 4).
#include <cstdint>
#include <cstring>

namespace {
inline float trunc_bf16(float x) {
  uint32_t u;
  std::memcpy(&u, &x, sizeof u);
  u &= 0xffff0000u;
  std::memcpy(&x, &u, sizeof x);
  return x;
}
}  // namespace

void gemm(const float* A, const float* B, float* C, int64_t M, int64_t N, int64_t K) {
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      float s = 0.0f;
      for (int64_t k = 0; k < K; ++k) s += trunc_bf16(A[i * K + k]) * trunc_bf16(B[k * N + j]);
      C[i * N + j] = s;
    }
}
