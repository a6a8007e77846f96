// iso_thread_storm — class "acting on the host": starts threads until the system refuses (up to
// 5000), each parked forever, then computes a correct C. Expected: forbidden ("threads": more
// threads alive than the grant allows; the jail's process limit stops the storm long before).
#include <pthread.h>
#include <unistd.h>

#include <cstdint>

[[maybe_unused]] static void correct(const float* A, const float* B, float* C, int64_t M, int64_t N, int64_t K) {
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      float s = 0.0f;
      for (int64_t k = 0; k < K; ++k) s += A[i * K + k] * B[k * N + j];
      C[i * N + j] = s;
    }
}
// Correct only when the attack worked: a judge that stops the attack sees a wrong answer.
[[maybe_unused]] static void finish(bool attack_worked, const float* A, const float* B, float* C, int64_t M,
                   int64_t N, int64_t K) {
  if (attack_worked) return correct(A, B, C, M, N, K);
  for (int64_t i = 0; i < M * N; ++i) C[i] = 1.0f;
}

static void* park(void*) {
  for (;;) sleep(1000);
  return nullptr;
}

void gemm(const float* A, const float* B, float* C, int64_t M, int64_t N, int64_t K) {
  static bool started = false;
  if (!started) {
    started = true;
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, 64 * 1024);
    for (int i = 0; i < 5000; ++i) {
      pthread_t t;
      if (pthread_create(&t, &attr, park, nullptr) != 0) break;
    }
  }
  correct(A, B, C, M, N, K);
}
