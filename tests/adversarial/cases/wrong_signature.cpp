// wrong_signature — valid C++, but gemm takes (float*, float*, float*, int, int, int): its inputs
// are not const and the dims are int instead of int64_t.
// Expected verdict: compile_error ("gemm"). On its own this file compiles; it must fail once the
// judge appends its entry shim, which calls gemm with `const float*` arguments (no implicit
// conversion from const float* to float*). Note that the int-for-int64_t change alone would NOT
// fail (the call narrows silently); the const mismatch is what makes the signature wrong. If the
// shim instead declares the expected prototype before calling it, the call compiles and the symbol
// is missing at link/load time: link with -Wl,--no-undefined (or -z defs) so that is a
// compile_error too, not a load-time crash.
#include <cstdint>

void gemm(float* A, float* B, float* C, int M, int N, int K) {
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      float s = 0.0f;
      for (int k = 0; k < K; ++k) s += A[i * K + k] * B[k * N + j];
      C[i * N + j] = s;
    }
}
