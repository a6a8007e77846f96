// Reference for 21_gemm_divide_sum_scaling (KernelBench level 2, problem 14):
//   z[b,h] = sum_i x[b,i] * W[h,i]                 (torch.matmul(x, W.T); W[H,I], no bias)
//   z[b,h] = z[b,h] / 2
//   y[b,0] = sum_h z[b,h] * scaling_factor        (torch.sum(dim=1, keepdim=True), then scale)
// Every step is computed as written: the full GEMM, then the halving, then the row sum.
#include <kforge/kernel.h>

#include <vector>

template <typename T>
void gemm_divide_sum_scaling(const T* x, const T* W, T* y, int64_t B, int64_t I, int64_t H,
                             T scaling_factor) {
  using Acc = kf::acc_t<T>;
  std::vector<Acc> z(static_cast<size_t>(H));
  for (int64_t b = 0; b < B; ++b) {
    for (int64_t h = 0; h < H; ++h) {
      Acc s = 0;
      for (int64_t i = 0; i < I; ++i) s += Acc(x[b * I + i]) * Acc(W[h * I + i]);
      z[h] = s / Acc(2);
    }
    Acc sum = 0;
    for (int64_t h = 0; h < H; ++h) sum += z[h];
    y[b] = T(sum * Acc(scaling_factor));
  }
}
