#include "harness/machine_probe_source.h"

namespace kf {

// The probe. It pins one OpenMP thread per usable CPU and times between spinning barriers (on
// this VM a thread started on its parent's CPU can cost a whole time slice, ~8 ms), and reports
// the fastest repetition of each figure.
extern const char* const kMachineProbeSource = R"probe(
// kforge machine probe, written by kforge (harness/machine_probe_source.cpp). Measures the fp32
// FMA peak and triad bandwidth (DRAM and L2) on 1 and all threads; prints one JSON object.
// Usage: probe [seconds]
#include <omp.h>
#include <sched.h>
#include <sys/mman.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#if defined(__AVX512F__)
typedef float vf __attribute__((vector_size(64)));
#else
typedef float vf __attribute__((vector_size(32)));
#endif
constexpr int kLanes = sizeof(vf) / sizeof(float);
constexpr int kAcc = 12;       // independent FMA chains, more than latency x issue width
constexpr long kChunk = 1024;  // FMA loop iterations per work unit
#if defined(__x86_64__) || defined(__i386__)
#define PROBE_PAUSE() __builtin_ia32_pause()
#else
#define PROBE_PAUSE() ((void)0)
#endif
volatile float g_mul = 0.999999f, g_add = 1e-7f;
double g_sink = 0;

double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// kAcc chains of acc = acc * m + a; their sum is returned so none of the work is dead.
__attribute__((noinline)) float fma_chains(long iters, float seed) {
  vf acc[kAcc], m, a;
  for (int i = 0; i < kLanes; ++i) m[i] = g_mul, a[i] = g_add;
  for (int k = 0; k < kAcc; ++k) acc[k] = m * (seed + 1e-3f * k);
  for (long i = 0; i < iters; ++i) {
#pragma GCC unroll 16
    for (int k = 0; k < kAcc; ++k) acc[k] = acc[k] * m + a;
  }
  float r = 0;
  for (int k = 0; k < kAcc; ++k)
    for (int i = 0; i < kLanes; ++i) r += acc[k][i];
  return r;
}

__attribute__((noinline)) void triad(float* __restrict a, const float* __restrict b,
                                     const float* __restrict c, long n, float s) {
  for (long i = 0; i < n; ++i) a[i] = b[i] + s * c[i];
}

// Releases all threads within microseconds (a sleeping barrier can take a time slice).
struct SpinBarrier {
  int n;
  std::atomic<int> count{0}, phase{0};
  void wait() {
    int p = phase.load();
    if (count.fetch_add(1) + 1 == n) {
      count.store(0);
      phase.fetch_add(1);
      return;
    }
    while (phase.load() == p) PROBE_PAUSE();
  }
};

// The CPUs this process may use, and a mask of one of them.
cpu_set_t g_allowed;
std::vector<int> g_cpus;
cpu_set_t one_cpu(int i) {
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(g_cpus[i % g_cpus.size()], &one);
  return one;
}

// Pins OpenMP thread i to the i-th usable CPU. Unpinned, Linux may start a thread on its
// parent's CPU, where a spinning parent costs it whole time slices. The main thread is pinned
// only while a team runs (timed_parallel), so alone it can move away from a busy CPU.
void pin_threads(int threads) {
  sched_getaffinity(0, sizeof g_allowed, &g_allowed);
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &g_allowed)) g_cpus.push_back(c);
  if (g_cpus.empty()) g_cpus.push_back(0);
#pragma omp parallel num_threads(threads)
  {
    cpu_set_t one = one_cpu(omp_get_thread_num());
    if (omp_get_thread_num() > 0) sched_setaffinity(0, sizeof one, &one);
  }
}

// Runs work(thread, units) on `threads` threads released together; returns the seconds from
// the common start until the last thread finished (thread start-up is not timed).
template <typename W>
double timed_parallel(int threads, long units, W work) {
  if (threads == 1) {
    double t0 = now();
    work(0, units);
    return now() - t0;
  }
  SpinBarrier barrier{threads};
  double t0 = 0, t1 = 0;
  cpu_set_t first = one_cpu(0);
  sched_setaffinity(0, sizeof first, &first);
#pragma omp parallel num_threads(threads)
  {
    barrier.wait();
    if (omp_get_thread_num() == 0) t0 = now();
    work(omp_get_thread_num(), units);
    barrier.wait();
    if (omp_get_thread_num() == 0) t1 = now();
  }
  sched_setaffinity(0, sizeof g_allowed, &g_allowed);
  return t1 - t0;
}

// Thread t's share [begin, end) of n elements, in whole cache lines.
void share(long n, int t, int threads, long& begin, long& end) {
  long lines = (n + 15) / 16;
  begin = std::min(n, lines * t / threads * 16);
  end = std::min(n, lines * (t + 1) / threads * 16);
}

struct Arrays {
  float *a, *b, *c;
  long n;
};

// Three arrays of n floats, first touched by `threads` threads in the timed loops' layout.
Arrays allocate(long n, int threads) {
  size_t huge = 2 << 20, bytes = (n * sizeof(float) + huge - 1) / huge * huge;
  Arrays x{nullptr, nullptr, nullptr, n};
  for (float** p : {&x.a, &x.b, &x.c}) {
    *p = static_cast<float*>(std::aligned_alloc(huge, bytes));
    if (!*p) std::fprintf(stderr, "probe: out of memory\n"), std::exit(2);
    madvise(*p, bytes, MADV_HUGEPAGE);
  }
  timed_parallel(threads, 1, [&](int t, long) {
    long begin, end;
    share(n, t, threads, begin, end);
    for (long i = begin; i < end; ++i) x.a[i] = 0, x.b[i] = 1, x.c[i] = 2;
  });
  return x;
}

double run_triad(const Arrays& x, int threads, long passes) {
  return timed_parallel(threads, passes, [&](int t, long p) {
    long begin, end;
    share(x.n, t, threads, begin, end);
    for (; p > 0; --p) {
      triad(x.a + begin, x.b + begin, x.c + begin, end - begin, 0.5f);
      asm volatile("" ::: "memory");
    }
  });
}

double run_fma(int threads, long units) {
  std::vector<double> sums(threads);
  double t = timed_parallel(threads, units, [&](int i, long u) {
    sums[i] = fma_chains(u * kChunk, 1.0f + i);
  });
  for (double s : sums) g_sink += s;
  return t;
}

// Picks a unit count so one repetition takes about rep_s (each calibration step keeps the
// faster of two runs, so one stall cannot skew it), then returns the fastest repetition's
// seconds per unit: a ceiling, as a roofline needs (on a shared VM a median measures the
// neighbours too; many short repetitions find the quiet moments). body(units) returns the
// seconds it measured.
template <typename F>
double seconds_per_unit(F body, double rep_s, int reps) {
  rep_s = std::max(rep_s, 0.004);
  body(1);  // warm-up
  long units = 1;
  double t = 0;
  while ((t = std::min(body(units), body(units))) < rep_s / 8 && units < (1L << 40)) units *= 2;
  units = std::max(1L, static_cast<long>(units * rep_s / std::max(t, 1e-9)));
  double best = body(units);
  for (int r = 1; r < reps; ++r) best = std::min(best, body(units));
  return best / units;
}

int main(int argc, char** argv) {
  double budget = std::min(std::max(argc > 1 ? std::atof(argv[1]) : 2.0, 0.05), 60.0);
  const int threads = std::max(1, omp_get_max_threads()), reps = 15;
  const double start = now();
  pin_threads(threads);
  auto rate = [&](double work, double share_of_budget, auto body) {
    return work / seconds_per_unit(body, budget * share_of_budget / reps, reps) * 1e-9;
  };
  const double flops = 2.0 * kLanes * kAcc * kChunk;
  double peak_1t = rate(flops, 0.12, [](long u) { return run_fma(1, u); });
  double peak_all = rate(threads * flops, 0.12, [&](long u) { return run_fma(threads, u); });

  long dram_n = (budget < 1.0 ? 64L << 20 : 128L << 20) / sizeof(float);
  Arrays big = allocate(dram_n, threads);
  double dram_1t = rate(12.0 * dram_n, 0.2, [&](long u) { return run_triad(big, 1, u); });
  double dram_all = rate(12.0 * dram_n, 0.15, [&](long u) { return run_triad(big, threads, u); });
  g_sink += big.a[dram_n / 2];
  std::free(big.a), std::free(big.b), std::free(big.c);

  long cache_n = (256L << 10) / (3 * sizeof(float)) / 16 * 16;
  Arrays small = allocate(cache_n, 1);
  double cache_1t = rate(12.0 * cache_n, 0.1, [&](long u) { return run_triad(small, 1, u); });
  g_sink += small.a[cache_n / 2];

  std::printf(
      "{\"peak_gflops_1t\": %.3f, \"peak_gflops_all\": %.3f, \"dram_gbps_1t\": %.3f, "
      "\"dram_gbps_all\": %.3f, \"cache_gbps_1t\": %.3f, \"threads\": %d, \"lanes\": %d, "
      "\"dram_array_mib\": %ld, \"cache_set_kib\": %ld, \"seconds\": %.3f, \"sink\": %.6g}\n",
      peak_1t, peak_all, dram_1t, dram_all, cache_1t, threads, kLanes, dram_n * 4 >> 20,
      cache_n * 12 >> 10, now() - start, std::isfinite(g_sink) ? g_sink : 0.0);
  return 0;
}
)probe";

}  // namespace kf
