// Reference for 16_mamba2_ssd: the Mamba-2 selective state-space scan (SSD layer core), written
// as its sequential recurrence. Per batch b and head h, with A_h = -exp(A_log[h]) and a state
// s[N, P] starting at 0:
//   s   <- exp(dt[b,t,h] * A_h) * s + dt[b,t,h] * Bm[b,t,:]^T x[b,t,h,:]     (outer product)
//   y[b,t,h,:] = Cm[b,t,:] @ s + Dskip[h] * x[b,t,h,:]
// Fast kernels compute the same y with the chunked state-space-duality algorithm; the result
// does not depend on the chunking. The sum over the state index n runs in ascending order.
#include <kforge/kernel.h>

#include <cmath>
#include <vector>

template <typename T>
void mamba2_ssd(const T* x, const T* dt, const T* A_log, const T* Bm, const T* Cm, const T* Dskip,
                T* y, int64_t NB, int64_t L, int64_t H, int64_t P, int64_t N) {
  using Acc = kf::acc_t<T>;
  std::vector<Acc> s(static_cast<size_t>(N * P)), acc(static_cast<size_t>(P));
  for (int64_t b = 0; b < NB; ++b)
    for (int64_t h = 0; h < H; ++h) {
      const Acc A = -std::exp(Acc(A_log[h]));
      for (auto& v : s) v = 0;
      for (int64_t t = 0; t < L; ++t) {
        const Acc d = Acc(dt[(b * L + t) * H + h]);
        const Acc a = std::exp(d * A);
        const T* xt = x + ((b * L + t) * H + h) * P;
        const T* Bt = Bm + (b * L + t) * N;
        const T* Ct = Cm + (b * L + t) * N;
        for (int64_t n = 0; n < N; ++n) {
          const Acc db = d * Acc(Bt[n]);
          Acc* sn = s.data() + n * P;
          for (int64_t p = 0; p < P; ++p) sn[p] = a * sn[p] + db * Acc(xt[p]);
        }
        for (int64_t p = 0; p < P; ++p) acc[p] = 0;
        for (int64_t n = 0; n < N; ++n) {
          const Acc c = Acc(Ct[n]);
          const Acc* sn = s.data() + n * P;
          for (int64_t p = 0; p < P; ++p) acc[p] += c * sn[p];
        }
        T* yt = y + ((b * L + t) * H + h) * P;
        for (int64_t p = 0; p < P; ++p) yt[p] = T(acc[p] + Acc(Dskip[h]) * Acc(xt[p]));
      }
    }
}
