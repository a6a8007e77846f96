// write_past_output — computes a correct C, then keeps writing 4096 more floats past C's end (one
// page and more: into alignment slack, a guard or canary area, or the next buffer the judge placed
// there — another output, an input, a control block). A cheater could use this to overwrite
// whatever the judge stores after C; a buggy kernel does it by accident with a bad tail loop.
// Expected verdict: forbidden (or crash). The judge must detect writes outside the outputs: a
// canary region after every output that is checked after each run (-> forbidden, "outside the
// outputs"), and/or a PROT_NONE guard page after each buffer (-> SIGSEGV; reported as forbidden
// when the fault address is outside the outputs, or at least as a crash). At M = N = 1 the stray
// writes start 4 bytes after C's end, well inside the same page, so page guards alone miss the
// first 4 KiB — a canary check is needed. Never ok.
#include <cstdint>

void gemm(const float* A, const float* B, float* C, int64_t M, int64_t N, int64_t K) {
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      float s = 0.0f;
      for (int64_t k = 0; k < K; ++k) s += A[i * K + k] * B[k * N + j];
      C[i * N + j] = s;
    }
  volatile float* tail = C + M * N;
  for (int64_t t = 0; t < 4096; ++t) tail[t] = 1.0f;
}
