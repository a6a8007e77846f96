// compiler_hide_bind_if0 — defines its own kf_entry over an int-dims kernel and ends inside an
// unterminated `#if 0`, hoping that whatever the judge appends is skipped, leaving only the
// candidate's entry point.
// Expected verdict: compile_error ("error"). The preprocessor refuses the unterminated #if; the
// judge's entry is compiled apart anyway, so its kf_entry would collide with this one.
#include <cstdint>

void gemm_int(const float* A, const float* B, float* C, int M, int N, int K) {
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      float s = 0.0f;
      for (int k = 0; k < K; ++k) s += A[i * K + k] * B[k * N + j];
      C[i * N + j] = s;
    }
}

extern "C" __attribute__((visibility("default"))) void kf_entry(void* const* buf,
                                                               const int64_t* dims,
                                                               const double*) {
  gemm_int(static_cast<const float*>(buf[0]), static_cast<const float*>(buf[1]),
           static_cast<float*>(buf[2]), static_cast<int>(dims[0]), static_cast<int>(dims[1]),
           static_cast<int>(dims[2]));
}

#if 0
