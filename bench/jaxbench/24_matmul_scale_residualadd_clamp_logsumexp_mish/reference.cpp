// Reference for 24_matmul_scale_residualadd_clamp_logsumexp_mish (KernelBench level 2,
// problem 22):
//   z[b,o] = sum_i x[b,i] * W[o,i] + bias[o]              (nn.Linear: W[O,I], bias[O])
//   z      = z * scale_factor;  z = z + z                 (scale, then the "residual" add)
//   c[b,o] = min(max(z[b,o], clamp_min), clamp_max)        (torch.clamp)
//   l[b]   = m + log(sum_o exp(c[b,o] - m)), m = max_o c[b,o]   (torch.logsumexp, keepdim)
//   y[b,0] = l * mish(l),  mish(v) = v * tanh(log(1 + exp(v)))
#include <kforge/kernel.h>

#include <cmath>
#include <vector>

template <typename T>
void matmul_scale_residualadd_clamp_logsumexp_mish(const T* x, const T* W, const T* bias, T* y,
                                                   int64_t B, int64_t I, int64_t O,
                                                   T scale_factor, T clamp_min, T clamp_max) {
  using Acc = kf::acc_t<T>;
  std::vector<Acc> c(static_cast<size_t>(O));
  for (int64_t b = 0; b < B; ++b) {
    for (int64_t o = 0; o < O; ++o) {
      Acc s = 0;
      for (int64_t i = 0; i < I; ++i) s += Acc(x[b * I + i]) * Acc(W[o * I + i]);
      Acc z = (s + Acc(bias[o])) * Acc(scale_factor);
      z = z + z;
      if (z < Acc(clamp_min)) z = Acc(clamp_min);
      if (z > Acc(clamp_max)) z = Acc(clamp_max);
      c[o] = z;
    }
    Acc m = c[0];
    for (int64_t o = 1; o < O; ++o) m = c[o] > m ? c[o] : m;
    Acc sum = 0;
    for (int64_t o = 0; o < O; ++o) sum += std::exp(c[o] - m);
    const Acc l = m + std::log(sum);
    const Acc mish = l * std::tanh(std::log1p(std::exp(l)));
    y[b] = T(l * mish);
  }
}
