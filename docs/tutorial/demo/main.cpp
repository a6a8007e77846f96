// Calls the exported kernel (fast::softmax_rows) and the original function (softmax_rows, from
// ../softmax_rows.cpp) on the same random inputs, and exits 0 only when every element agrees
// within the task's f32 tolerance (|a - b| <= 1e-5 + 1e-4 |b|). `--perturb` changes one element
// of the kernel's output first, to see the check fail. It also times both at the bench shape.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <utility>
#include <vector>

#include "softmax_rows.h"  // from the export: namespace fast, sizes as int64_t

void softmax_rows(const float* x, float* y, int rows, int cols);  // the original

namespace {

// True when the two softmaxes of a rows x cols input agree element by element.
bool agree(int rows, int cols, bool perturb, std::mt19937& rng) {
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> x(size_t(rows) * cols), fast_y(x.size(), NAN), plain_y(x.size(), NAN);
  for (float& v : x) v = 3.0f * normal(rng);
  fast::softmax_rows(x.data(), fast_y.data(), rows, cols);
  softmax_rows(x.data(), plain_y.data(), rows, cols);
  if (perturb) fast_y[x.size() / 2] += 1e-3f;
  size_t bad = 0;
  for (size_t i = 0; i < x.size(); ++i)
    if (!(std::fabs(fast_y[i] - plain_y[i]) <= 1e-5f + 1e-4f * std::fabs(plain_y[i]))) {
      if (bad++ == 0)
        std::printf("rows=%d cols=%d: y[%zu] = %g, the original gives %g\n", rows, cols, i,
                    fast_y[i], plain_y[i]);
    }
  return bad == 0;
}

// The fastest of 20 calls of f, in milliseconds.
template <typename F>
double best_ms(F f) {
  double best = 1e30;
  for (int i = 0; i < 20; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    f();
    const auto t1 = std::chrono::steady_clock::now();
    best = std::min(best, std::chrono::duration<double, std::milli>(t1 - t0).count());
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  const bool perturb = argc > 1 && std::strcmp(argv[1], "--perturb") == 0;
  std::mt19937 rng(2024);
  bool ok = true;
  for (const auto& [rows, cols] : {std::pair{1, 1}, {3, 17}, {200, 300}, {512, 1024}})
    ok = agree(rows, cols, perturb, rng) && ok;
  if (!ok) {
    std::printf("MISMATCH: the exported kernel and the original disagree\n");
    return 1;
  }
  std::vector<float> x(512 * 1024, 0.5f), y(x.size());
  const double fast_ms = best_ms([&] { fast::softmax_rows(x.data(), y.data(), 512, 1024); });
  const double plain_ms = best_ms([&] { softmax_rows(x.data(), y.data(), 512, 1024); });
  std::printf("OK: the exported kernel agrees with the original on 4 shapes\n");
  std::printf("512 x 1024: exported %.3f ms, original %.3f ms (%.1fx)\n", fast_ms, plain_ms,
              plain_ms / fast_ms);
  return 0;
}
