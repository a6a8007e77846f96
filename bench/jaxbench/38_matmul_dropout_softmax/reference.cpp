// Reference for 38_matmul_dropout_softmax (KernelBench level 2, problem 66), dropout in training
// mode with a counter-based mask (see task.toml for the hash and why):
//   z[b,o]   = sum_i x[b,i] * W[o,i] + bias[o]            (nn.Linear: W[O,I], bias[O])
//   h        = dropout_hash(b * O + o, seed)              (32-bit, below)
//   keep     = (h >> 8) * 2^-24 >= p
//   d[b,o]   = keep ? z[b,o] * (1 / (1 - p)) : 0
//   y[b,:]   = softmax(d[b,:])                            (over O, the row max subtracted)
// Each dot product sums over i in ascending order.
#include <kforge/kernel.h>

#include <cmath>
#include <vector>

// The mask hash: a bijection of the 32-bit counter for each seed; every operation wraps mod 2^32.
inline uint32_t dropout_hash(uint64_t counter, uint64_t seed) {
  uint32_t h = static_cast<uint32_t>(counter) + static_cast<uint32_t>(seed) * 0x9E3779B9u;
  h *= 0x85EBCA6Bu;
  h += h >> 16;
  h *= 2u * h + 1u;
  h += h >> 16;
  h *= 0xC2B2AE35u;
  h += h >> 16;
  return h;
}

template <typename T>
void matmul_dropout_softmax(const T* x, const T* W, const T* bias, T* y, int64_t B, int64_t I,
                            int64_t O, kf::acc_t<T> p, int64_t seed) {
  using Acc = kf::acc_t<T>;
  const Acc keep_scale = Acc(1) / (Acc(1) - p);
  std::vector<Acc> d(static_cast<size_t>(O));
  for (int64_t b = 0; b < B; ++b) {
    for (int64_t o = 0; o < O; ++o) {
      Acc s = 0;
      for (int64_t i = 0; i < I; ++i) s += Acc(x[b * I + i]) * Acc(W[o * I + i]);
      const Acc z = s + Acc(bias[o]);
      const uint32_t h =
          dropout_hash(static_cast<uint64_t>(b * O + o), static_cast<uint64_t>(seed));
      const Acc u = Acc(h >> 8) * Acc(1.0 / 16777216.0);  // exact in f32: a 24-bit integer / 2^24
      d[o] = u >= p ? z * keep_scale : Acc(0);
    }
    Acc m = d[0];
    for (int64_t o = 1; o < O; ++o) m = d[o] > m ? d[o] : m;
    Acc sum = 0;
    for (int64_t o = 0; o < O; ++o) {
      d[o] = std::exp(d[o] - m);
      sum += d[o];
    }
    for (int64_t o = 0; o < O; ++o) y[b * O + o] = T(d[o] / sum);
  }
}
