// background_thread — starts a detached std::thread that waits 200 ms and then computes C, and
// returns immediately: the timed call costs only a thread creation, and the result lands "later".
// Expected verdict: wrong_answer (or forbidden). When the kernel returns C still holds the judge's
// NaN fill, so an immediate check fails; a judge that also refuses threads still running candidate
// code after the kernel returns may report forbidden instead. Beware of false positives there:
// OpenMP keeps an idle (or spinning) thread pool alive after ok_openmp returns, which is allowed.
// The late writes land in C after the judge has read it — possibly into a later run's buffer, so a
// judge must refill outputs before every run and never trust a buffer written before the run.
#include <chrono>
#include <cstdint>
#include <thread>

void gemm(const float* A, const float* B, float* C, int64_t M, int64_t N, int64_t K) {
  std::thread([=] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < N; ++j) {
        float s = 0.0f;
        for (int64_t k = 0; k < K; ++k) s += A[i * K + k] * B[k * N + j];
        C[i * N + j] = s;
      }
  }).detach();
}
