// compiler_bomb_constexpr — constant evaluation that never ends in practice: each kStep<I> is a
// separate constant expression of 10^6 loop steps, under GCC's per-loop limit (262144 iterations
// per loop) and its per-expression operation limit (2^25), several seconds each, and there are a
// thousand of them.
// Expected verdict: compile_error ("timed out").
// DO NOT COMPILE OUTSIDE A LIMITED ENVIRONMENT.
#include <cstdint>
#include <utility>

constexpr unsigned long spin(unsigned long seed) {
  unsigned long s = seed;
  for (unsigned long i = 0; i < 1000; ++i)
    for (unsigned long j = 0; j < 1000; ++j) s = s * 6364136223846793005UL + (i ^ j);
  return s;
}
template <unsigned long I>
inline constexpr unsigned long kStep = spin(I);
template <unsigned long... I>
constexpr unsigned long fold(std::integer_sequence<unsigned long, I...>) {
  return (kStep<I> ^ ...);
}
constexpr unsigned long kBomb = fold(std::make_integer_sequence<unsigned long, 1000>{});

void gemm(const float* A, const float* B, float* C, int64_t M, int64_t N, int64_t K) {
  C[0] = static_cast<float>(kBomb);
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      float s = 0.0f;
      for (int64_t k = 0; k < K; ++k) s += A[i * K + k] * B[k * N + j];
      C[i * N + j] = s;
    }
}
