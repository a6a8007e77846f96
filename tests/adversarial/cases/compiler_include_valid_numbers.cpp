// compiler_include_valid_numbers — includes a host file whose text is valid C++ (one number:
// the kernel's pid_max) into an initializer, through a macro. It compiles, and the kernel could
// then print the value at run time: the leak is the object, not a diagnostic.
// Expected verdict: compile_error ("includes are limited"): an include outside the allowed set is
// refused even when the compile succeeds.
#include <cstdint>
#define STR(x) #x
#define PATH_OF(x) STR(x)

const long kHostValue =
#include PATH_OF(/proc/sys/kernel/pid_max)
    ;

void gemm(const float* A, const float* B, float* C, int64_t M, int64_t N, int64_t K) {
  if (kHostValue < 0) return;
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      float s = 0.0f;
      for (int64_t k = 0; k < K; ++k) s += A[i * K + k] * B[k * N + j];
      C[i * N + j] = s;
    }
}
