// throws_exception — throws std::runtime_error out of the kernel (after writing part of C).
// Expected verdict: crash ("exception"). The exception propagates through the judge's extern "C"
// entry shim into the worker. Either the worker catches it around the call and reports
// "uncaught exception: <what()>", or nothing catches it and std::terminate raises SIGABRT; both
// are a crash, and the diagnostics should say "exception" (the worker, not the candidate's text,
// should supply that word: what() is candidate-controlled). The worker must stay usable or be
// restarted — it must not answer later runs with this run's state.
#include <cstdint>
#include <stdexcept>

void gemm(const float* A, const float* B, float* C, int64_t M, int64_t N, int64_t K) {
  (void)A;
  (void)B;
  (void)K;
  if (M * N > 0) C[0] = 0.0f;
  throw std::runtime_error("kernel gave up (verdict: ok)");
}
