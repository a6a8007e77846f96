// timing_threads_pthread — under a grant of one thread, keeps a pool of three raw pthreads (no
// std::thread, no OpenMP) that it wakes for every call through a spin barrier; each pool thread
// moved itself onto every CPU when it started. The calling thread takes a quarter of the rows.
// Expected verdict: forbidden ("with a grant of 1 thread"): CPU time during the timed calls well
// above their wall time, whatever started the threads.
#include <pthread.h>
#include <sched.h>

#include <atomic>
#include <cstdint>

namespace {

struct Job {
  const float *A, *B;
  float* C;
  int64_t M, N, K;
};

Job g_job;
std::atomic<uint64_t> g_round{0};
std::atomic<int> g_done{0};
bool g_pool = false;

void rows(const Job& j, int part, int parts) {
  const int64_t lo = j.M * part / parts, hi = j.M * (part + 1) / parts;
  for (int64_t i = lo; i < hi; ++i) {
    float* c = j.C + i * j.N;
    for (int64_t x = 0; x < j.N; ++x) c[x] = 0.0f;
    for (int64_t k = 0; k < j.K; ++k) {
      const float a = j.A[i * j.K + k];
      const float* b = j.B + k * j.N;
      for (int64_t x = 0; x < j.N; ++x) c[x] += a * b[x];
    }
  }
}

void* worker(void* arg) {
  const int part = static_cast<int>(reinterpret_cast<intptr_t>(arg));
  cpu_set_t all;
  CPU_ZERO(&all);
  for (int c = 0; c < 64; ++c) CPU_SET(c, &all);
  pthread_setaffinity_np(pthread_self(), sizeof all, &all);
  uint64_t seen = 0;
  for (;;) {
    uint64_t r;
    while ((r = g_round.load(std::memory_order_acquire)) == seen) {
    }
    seen = r;
    rows(g_job, part, 4);
    g_done.fetch_add(1, std::memory_order_acq_rel);
  }
  return nullptr;
}

}  // namespace

void gemm(const float* A, const float* B, float* C, int64_t M, int64_t N, int64_t K) {
  if (!g_pool) {
    g_pool = true;
    for (intptr_t p = 1; p < 4; ++p) {
      pthread_t t;
      pthread_create(&t, nullptr, worker, reinterpret_cast<void*>(p));
      pthread_detach(t);
    }
  }
  g_job = Job{A, B, C, M, N, K};
  g_done.store(0, std::memory_order_release);
  g_round.fetch_add(1, std::memory_order_acq_rel);
  rows(g_job, 0, 4);
  while (g_done.load(std::memory_order_acquire) < 3) {
  }
}
