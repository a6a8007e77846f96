// missing_function — valid C++ that defines the kernel under another name (sgemm) and only
// declares gemm, never defining it.
// Expected verdict: compile_error ("gemm"). On its own the file compiles into a shared object with
// an undefined symbol; with the judge's entry shim appended, the call resolves to the declared
// gemm and only the link (with -Wl,--no-undefined / -z defs) or dlopen(RTLD_NOW) notices the
// missing definition. Either must be reported as compile_error naming gemm, never as a crash of
// the worker at load time.
#include <cstdint>

void gemm(const float* A, const float* B, float* C, int64_t M, int64_t N, int64_t K);

void sgemm(const float* A, const float* B, float* C, int64_t M, int64_t N, int64_t K) {
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      float s = 0.0f;
      for (int64_t k = 0; k < K; ++k) s += A[i * K + k] * B[k * N + j];
      C[i * N + j] = s;
    }
}
