// Reference for 23_matmul_sum_max_avgpool_logsumexp_logsumexp (KernelBench level 2, problem 18):
//   z[b,o]  = sum_i x[b,i] * W[o,i] + bias[o]     (nn.Linear: W[O,I], bias[O])
//   s[b,0]  = sum_o z[b,o]                         torch.sum(dim=1, keepdim=True)
//   m[b,0]  = max over the size-1 dim of s         torch.max(dim=1, keepdim=True)[0]
//   a[b,0]  = mean over the size-1 dim of m        torch.mean(dim=1, keepdim=True)
//   l1[b,0] = logsumexp over the size-1 dim of a   torch.logsumexp(dim=1, keepdim=True)
//   y[b,0]  = logsumexp over the size-1 dim of l1
// After the sum every reduction runs over a dim of extent 1; each is still computed as written
// (a logsumexp of one value v is v + log(exp(v - v)) = v).
#include <kforge/kernel.h>

#include <cmath>

template <typename T>
void matmul_sum_max_avgpool_logsumexp_logsumexp(const T* x, const T* W, const T* bias, T* y,
                                                int64_t B, int64_t I, int64_t O) {
  using Acc = kf::acc_t<T>;
  const int64_t J = 1;  // the extent of dim 1 after the keepdim sum
  for (int64_t b = 0; b < B; ++b) {
    Acc s = 0;
    for (int64_t o = 0; o < O; ++o) {
      Acc z = 0;
      for (int64_t i = 0; i < I; ++i) z += Acc(x[b * I + i]) * Acc(W[o * I + i]);
      s += z + Acc(bias[o]);
    }
    Acc m = s;  // max over J = 1 value
    Acc a = 0;  // mean over J = 1 value
    for (int64_t j = 0; j < J; ++j) a += m;
    a /= Acc(J);
    Acc l1 = 0;  // logsumexp over J = 1 value, max subtracted
    for (int64_t j = 0; j < J; ++j) l1 += std::exp(a - a);
    l1 = a + std::log(l1);
    Acc l2 = 0;
    for (int64_t j = 0; j < J; ++j) l2 += std::exp(l1 - l1);
    l2 = l1 + std::log(l2);
    y[b] = T(l2);
  }
}
