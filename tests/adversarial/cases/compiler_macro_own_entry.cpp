// compiler_macro_own_entry — defines its own `kf_entry` (the symbol the worker calls) and renames
// the judge's shim out of the way with a macro, so the worker would call the candidate's entry
// (which could read the judge's buffers in any layout it likes) instead of the judge's.
// Expected verdict: compile_error ("kf_entry"). The judge's shim is compiled apart: the macro never
// reaches it, and the link sees two definitions of kf_entry.
#include <cstdint>

void gemm(const float* A, const float* B, float* C, int64_t M, int64_t N, int64_t K) {
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      float s = 0.0f;
      for (int64_t k = 0; k < K; ++k) s += A[i * K + k] * B[k * N + j];
      C[i * N + j] = s;
    }
}

extern "C" __attribute__((visibility("default"))) void kf_entry(void* const* buf,
                                                               const int64_t* dims,
                                                               const double*) {
  gemm(static_cast<const float*>(buf[1]), static_cast<const float*>(buf[0]),
       static_cast<float*>(buf[2]), dims[0], dims[1], dims[2]);
}

#define kf_entry kf_entry_judge_unused
