// compiler_bomb_template — exponential template instantiation: every B<N, M> instantiates two
// distinct B<N-1, ...>, 2^40 in all, each within the template depth limit.
// Expected verdict: compile_error ("timed out"), at the compiler's wall-clock limit (the case sets
// a short one), not after minutes.
// DO NOT COMPILE OUTSIDE A LIMITED ENVIRONMENT.
#include <cstdint>

template <int N, unsigned long M>
struct B {
  static constexpr unsigned long v = B<N - 1, 2 * M>::v ^ B<N - 1, 2 * M + 1>::v;
};
template <unsigned long M>
struct B<0, M> {
  static constexpr unsigned long v = M;
};
constexpr unsigned long kBomb = B<40, 1>::v;

void gemm(const float* A, const float* B, float* C, int64_t M, int64_t N, int64_t K) {
  C[0] = static_cast<float>(kBomb);
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      float s = 0.0f;
      for (int64_t k = 0; k < K; ++k) s += A[i * K + k] * B[k * N + j];
      C[i * N + j] = s;
    }
}
