// probe_check: an independent cross-check of kforge's machine probe (src/harness/machine.cpp).
// Written differently on purpose: the FMA peak comes from an inline-asm vfmadd213ps loop on 12
// registers, threads are std::threads pinned with pthread_setaffinity_np and started per
// repetition, the triad is a plain loop timed with clock_gettime over 3 x 256 MiB arrays, and
// every figure is the best of a few long repetitions (the probe takes many short ones). It also
// sweeps the triad's working set to show where each cache level ends. Not part of the build;
// see README.md.
#include <pthread.h>
#include <sched.h>
#include <sys/mman.h>
#include <time.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <thread>
#include <vector>

static double seconds_now() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

// Real data, not zeros: a loop of FMAs on zeros draws less power and can clock higher.
static const float kMul = 0.999999f, kAdd = 1e-7f, kOne = 1.0f;

#if defined(__AVX512F__)
static const int kLanes = 16;
// 12 independent chains: zmm_i = zmm_i * 0.999999 + 1e-7 (zmm0..zmm11), `iters` times.
static void fma_loop(long iters) {
  asm volatile(
      "vbroadcastss (%1), %%zmm12\n vbroadcastss (%2), %%zmm13\n vbroadcastss (%3), %%zmm14\n"
      "vmovaps %%zmm14, %%zmm0\n vmovaps %%zmm14, %%zmm1\n vmovaps %%zmm14, %%zmm2\n"
      "vmovaps %%zmm14, %%zmm3\n vmovaps %%zmm14, %%zmm4\n vmovaps %%zmm14, %%zmm5\n"
      "vmovaps %%zmm14, %%zmm6\n vmovaps %%zmm14, %%zmm7\n vmovaps %%zmm14, %%zmm8\n"
      "vmovaps %%zmm14, %%zmm9\n vmovaps %%zmm14, %%zmm10\n vmovaps %%zmm14, %%zmm11\n"
      "1:\n"
      "vfmadd213ps %%zmm13, %%zmm12, %%zmm0\n vfmadd213ps %%zmm13, %%zmm12, %%zmm1\n"
      "vfmadd213ps %%zmm13, %%zmm12, %%zmm2\n vfmadd213ps %%zmm13, %%zmm12, %%zmm3\n"
      "vfmadd213ps %%zmm13, %%zmm12, %%zmm4\n vfmadd213ps %%zmm13, %%zmm12, %%zmm5\n"
      "vfmadd213ps %%zmm13, %%zmm12, %%zmm6\n vfmadd213ps %%zmm13, %%zmm12, %%zmm7\n"
      "vfmadd213ps %%zmm13, %%zmm12, %%zmm8\n vfmadd213ps %%zmm13, %%zmm12, %%zmm9\n"
      "vfmadd213ps %%zmm13, %%zmm12, %%zmm10\n vfmadd213ps %%zmm13, %%zmm12, %%zmm11\n"
      "dec %0\n jnz 1b\n"
      : "+r"(iters)
      : "r"(&kMul), "r"(&kAdd), "r"(&kOne)
      : "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10",
        "xmm11", "xmm12", "xmm13", "xmm14", "cc", "memory");
}
#else
static const int kLanes = 8;
static void fma_loop(long iters) {
  asm volatile(
      "vbroadcastss (%1), %%ymm12\n vbroadcastss (%2), %%ymm13\n vbroadcastss (%3), %%ymm14\n"
      "vmovaps %%ymm14, %%ymm0\n vmovaps %%ymm14, %%ymm1\n vmovaps %%ymm14, %%ymm2\n"
      "vmovaps %%ymm14, %%ymm3\n vmovaps %%ymm14, %%ymm4\n vmovaps %%ymm14, %%ymm5\n"
      "vmovaps %%ymm14, %%ymm6\n vmovaps %%ymm14, %%ymm7\n vmovaps %%ymm14, %%ymm8\n"
      "vmovaps %%ymm14, %%ymm9\n vmovaps %%ymm14, %%ymm10\n vmovaps %%ymm14, %%ymm11\n"
      "1:\n"
      "vfmadd213ps %%ymm13, %%ymm12, %%ymm0\n vfmadd213ps %%ymm13, %%ymm12, %%ymm1\n"
      "vfmadd213ps %%ymm13, %%ymm12, %%ymm2\n vfmadd213ps %%ymm13, %%ymm12, %%ymm3\n"
      "vfmadd213ps %%ymm13, %%ymm12, %%ymm4\n vfmadd213ps %%ymm13, %%ymm12, %%ymm5\n"
      "vfmadd213ps %%ymm13, %%ymm12, %%ymm6\n vfmadd213ps %%ymm13, %%ymm12, %%ymm7\n"
      "vfmadd213ps %%ymm13, %%ymm12, %%ymm8\n vfmadd213ps %%ymm13, %%ymm12, %%ymm9\n"
      "vfmadd213ps %%ymm13, %%ymm12, %%ymm10\n vfmadd213ps %%ymm13, %%ymm12, %%ymm11\n"
      "dec %0\n jnz 1b\n"
      : "+r"(iters)
      : "r"(&kMul), "r"(&kAdd), "r"(&kOne)
      : "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10",
        "xmm11", "xmm12", "xmm13", "xmm14", "cc", "memory");
}
#endif

static std::vector<int> usable_cpus() {
  cpu_set_t set;
  std::vector<int> cpus;
  if (sched_getaffinity(0, sizeof set, &set) == 0)
    for (int c = 0; c < CPU_SETSIZE; ++c)
      if (CPU_ISSET(c, &set)) cpus.push_back(c);
  if (cpus.empty()) cpus.push_back(0);
  return cpus;
}

// Runs job(t) on threads 0..n-1, each pinned to its own CPU, released together by a spinning
// start flag; returns the wall seconds from release to the last thread's end.
static double run_threads(int n, const std::function<void(int)>& job) {
  static const std::vector<int> cpus = usable_cpus();
  std::atomic<int> ready{0};
  std::atomic<bool> go{false};
  std::atomic<double> end{0};
  std::vector<std::thread> pool;
  for (int t = 0; t < n; ++t) {
    pool.emplace_back([&, t] {
      cpu_set_t one;
      CPU_ZERO(&one);
      CPU_SET(cpus[t % cpus.size()], &one);
      pthread_setaffinity_np(pthread_self(), sizeof one, &one);
      ready.fetch_add(1);
      while (!go.load()) {
      }
      job(t);
      double now = seconds_now(), seen = end.load();
      while (now > seen && !end.compare_exchange_weak(seen, now)) {
      }
    });
  }
  while (ready.load() < n) {
  }
  double start = seconds_now();
  go.store(true);
  for (auto& th : pool) th.join();
  return end.load() - start;
}

// Best of `reps` runs of job on n threads, in seconds.
static double best_of(int reps, int n, const std::function<void(int)>& job) {
  double best = 1e30;
  for (int r = 0; r < reps; ++r) best = std::min(best, run_threads(n, job));
  return best;
}

static double peak_gflops(int n) {
  const long iters = 20000000;  // ~0.07 s per thread at 2 FMA/cycle and 3.5 GHz
  fma_loop(iters / 10);         // warm up the clock
  double t = best_of(5, n, [&](int) { fma_loop(iters); });
  return 2.0 * kLanes * 12 * iters * n / t * 1e-9;
}

struct Triad {
  float *a, *b, *c;
  long n;
};

static Triad make_triad(long n, int threads) {
  Triad x;
  x.n = n;
  size_t bytes = ((n * sizeof(float)) | ((2 << 20) - 1)) + 1;
  for (float** p : {&x.a, &x.b, &x.c}) {
    *p = static_cast<float*>(aligned_alloc(2 << 20, bytes));
    if (!*p) std::fprintf(stderr, "out of memory\n"), std::exit(1);
    madvise(*p, bytes, MADV_HUGEPAGE);
  }
  run_threads(threads, [&](int t) {  // first touch by the thread that will use each part
    long lo = n * t / threads, hi = n * (t + 1) / threads;
    for (long i = lo; i < hi; ++i) x.a[i] = 0, x.b[i] = 1, x.c[i] = 2;
  });
  return x;
}

static void free_triad(Triad& x) {
  free(x.a), free(x.b), free(x.c);
}

// GB/s of a[i] = b[i] + 3 * c[i], counting 12 bytes per element, best of `reps`.
static double triad_gbps(Triad& x, int threads, int passes, int reps) {
  double t = best_of(reps, threads, [&](int th) {
    long lo = x.n * th / threads, hi = x.n * (th + 1) / threads;
    float *a = x.a, *b = x.b, *c = x.c;
    for (int p = 0; p < passes; ++p) {
      for (long i = lo; i < hi; ++i) a[i] = b[i] + 3.0f * c[i];
      asm volatile("" : : "r"(a) : "memory");
    }
  });
  return 12.0 * x.n * passes / t * 1e-9;
}

int main() {
  const int n = static_cast<int>(usable_cpus().size());
  std::printf("probe_check: %d CPUs, %d-lane asm FMA, best-of-N\n", n, kLanes);
  std::printf("peak_gflops_1t   %8.1f\n", peak_gflops(1));
  std::printf("peak_gflops_all  %8.1f   (%d threads)\n", peak_gflops(n), n);

  Triad dram = make_triad(64L << 20, n);  // 3 x 256 MiB
  triad_gbps(dram, n, 1, 1);              // warm-up
  std::printf("dram_gbps_1t     %8.1f\n", triad_gbps(dram, 1, 1, 5));
  std::printf("dram_gbps_all    %8.1f   (%d threads)\n", triad_gbps(dram, n, 1, 5), n);
  free_triad(dram);

  Triad l2 = make_triad((256 << 10) / 12, 1);  // 256 KiB working set
  std::printf("cache_gbps_1t    %8.1f   (256 KiB working set)\n", triad_gbps(l2, 1, 2000, 7));
  free_triad(l2);

  std::printf("triad sweep, 1 thread (working set: GB/s):");
  for (long kib : {24L, 96L, 384L, 768L, 4096L, 16384L, 32768L, 65536L, 262144L}) {
    Triad x = make_triad(kib * 1024 / 12, 1);
    int passes = static_cast<int>(std::max(1L, (64L << 20) / (kib * 1024)));
    triad_gbps(x, 1, passes, 1);
    double gbps = triad_gbps(x, 1, passes, 5);
    std::printf(" %ld%s: %.0f", kib >= 1024 ? kib / 1024 : kib, kib >= 1024 ? "M" : "K", gbps);
    std::fflush(stdout);
    free_triad(x);
  }
  std::printf("\n");
  return 0;
}
