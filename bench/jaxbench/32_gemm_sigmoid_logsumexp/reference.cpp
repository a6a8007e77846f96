// Reference for 32_gemm_sigmoid_logsumexp (KernelBench level 2, problem 45):
//   h[b,j] = sigmoid(sum_i x[b,i] * W1[j,i] + b1[j])     (linear1: W1[H,I], b1[H])
//   z[b,o] = sum_j h[b,j] * W2[o,j] + b2[o]              (linear2: W2[O,H], b2[O])
//   y[b]   = m + log(sum_o exp(z[b,o] - m)), m = max_o z[b,o]   (torch.logsumexp(dim=1))
#include <kforge/kernel.h>

#include <cmath>
#include <vector>

template <typename T>
void gemm_sigmoid_logsumexp(const T* x, const T* W1, const T* b1, const T* W2, const T* b2, T* y,
                            int64_t B, int64_t I, int64_t H, int64_t O) {
  using Acc = kf::acc_t<T>;
  std::vector<Acc> h(static_cast<size_t>(H)), z(static_cast<size_t>(O));
  for (int64_t b = 0; b < B; ++b) {
    for (int64_t j = 0; j < H; ++j) {
      Acc s = 0;
      for (int64_t i = 0; i < I; ++i) s += Acc(x[b * I + i]) * Acc(W1[j * I + i]);
      h[j] = Acc(1) / (Acc(1) + std::exp(-(s + Acc(b1[j]))));
    }
    for (int64_t o = 0; o < O; ++o) {
      Acc s = 0;
      for (int64_t j = 0; j < H; ++j) s += h[j] * Acc(W2[o * H + j]);
      z[o] = s + Acc(b2[o]);
    }
    Acc m = z[0];
    for (int64_t o = 1; o < O; ++o) m = z[o] > m ? z[o] : m;
    Acc sum = 0;
    for (int64_t o = 0; o < O; ++o) sum += std::exp(z[o] - m);
    y[b] = T(m + std::log(sum));
  }
}
