// compiler_hide_bind_namespace — ends inside an open namespace, so text appended by the judge lands
// in namespace hide:: and defines hide::kforge_bind, not the symbol the entry looks for; the
// candidate provides a wrong-signature gemm in that namespace.
// Expected verdict: compile_error ("gemm"). An unclosed namespace is a syntax error, and the
// separately compiled entry finds no kforge_bind of the exact type at link time either way.
#include <cstdint>

namespace hide {
void gemm(const float* A, const float* B, float* C, int M, int N, int K) {
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      float s = 0.0f;
      for (int k = 0; k < K; ++k) s += A[i * K + k] * B[k * N + j];
      C[i * N + j] = s;
    }
}
