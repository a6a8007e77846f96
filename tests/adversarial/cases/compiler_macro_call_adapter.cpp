// compiler_macro_call_adapter — the kernel takes (float*, float*, float*, int, int, int), and a
// function-like macro named gemm adapts any call to it: casts away const, narrows the dims.
// With the entry shim appended to the candidate's text, the shim's `gemm(...)` call expanded into
// the adapter and the wrong signature was accepted.
// Expected verdict: compile_error ("gemm"). The shim is its own translation unit; the bind text
// takes gemm's address (no call, so the function-like macro does not expand) as a pointer of the
// exact type, and no function gemm exists at all.
#include <cstdint>

void gemm_int(float* A, float* B, float* C, int M, int N, int K) {
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      float s = 0.0f;
      for (int k = 0; k < K; ++k) s += A[i * K + k] * B[k * N + j];
      C[i * N + j] = s;
    }
}

#define gemm(a, b, c, m, n, k) \
  gemm_int(const_cast<float*>(a), const_cast<float*>(b), c, (int)(m), (int)(n), (int)(k))
