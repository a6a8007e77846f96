// Library baseline for 16_mamba2_ssd: the chunked SSD algorithm of the Mamba-2 reference
// (ssd_minimal_discrete, chunks of 64 steps) with its matrix products on oneDNN's dnnl_sgemm and
// the elementwise parts (in-chunk cumulative decay, masks, scalings, the state passing between
// chunks, the D skip) as plain loops. Per batch and chunk: CB^T once (shared by all heads, one
// B/C group); per head: the intra-chunk output (L o CB^T o dt) @ X, the inter-chunk output
// (C o exp(cumsum)) @ state, and the new state exp(total) * state + (B o decay o dt)^T @ X.
#include <oneapi/dnnl/dnnl.h>

#include <cmath>
#include <cstdint>
#include <vector>

void mamba2_ssd(const float* x, const float* dt, const float* A_log, const float* Bm,
                const float* Cm, const float* Dskip, float* y, int64_t NB, int64_t L, int64_t H,
                int64_t P, int64_t N) {
  if (NB * L * H * P == 0) return;
  const int64_t Q = 64;
  const auto n_ = [](int64_t v) { return static_cast<size_t>(v); };
  // Intermediates live in static buffers reused across calls, as a framework's caching allocator
  // reuses them: on this machine the page faults of fresh multi-MiB buffers on every call cost
  // more than the arithmetic.
  static std::vector<float> S, CB, M, Cs, Bs, cs;
  S.resize(n_(H * N * P)), CB.resize(n_(Q * Q)), M.resize(n_(Q * Q));
  Cs.resize(n_(Q * N)), Bs.resize(n_(Q * N)), cs.resize(n_(Q));
  const int64_t xs = H * P;  // row stride of x and y for a fixed head
  for (int64_t b = 0; b < NB; ++b) {
    for (auto& v : S) v = 0;
    for (int64_t t0 = 0; t0 < L; t0 += Q) {
      const int64_t Qc = L - t0 < Q ? L - t0 : Q;
      const float* Bc = Bm + (b * L + t0) * N;
      const float* Cc = Cm + (b * L + t0) * N;
      if (N > 0)
        dnnl_sgemm('N', 'T', Qc, Qc, N, 1.0f, Cc, N, Bc, N, 0.0f, CB.data(), Qc);
      else
        for (auto& v : CB) v = 0;
      for (int64_t h = 0; h < H; ++h) {
        const float A = -std::exp(A_log[h]);
        const float* dth = dt + (b * L + t0) * H + h;  // stride H
        float acc = 0;
        for (int64_t i = 0; i < Qc; ++i) cs[i] = acc += dth[i * H] * A;
        for (int64_t i = 0; i < Qc; ++i)
          for (int64_t s = 0; s < Qc; ++s)
            M[i * Qc + s] = s <= i ? CB[i * Qc + s] * std::exp(cs[i] - cs[s]) * dth[s * H] : 0.0f;
        const float* X = x + (b * L + t0) * xs + h * P;
        float* Y = y + (b * L + t0) * xs + h * P;
        float* Sh = S.data() + h * N * P;
        // Intra-chunk (diagonal block) output.
        dnnl_sgemm('N', 'N', Qc, P, Qc, 1.0f, M.data(), Qc, X, xs, 0.0f, Y, xs);
        if (N > 0) {
          // Contribution of the state carried in from earlier chunks.
          for (int64_t i = 0; i < Qc; ++i)
            for (int64_t n = 0; n < N; ++n) Cs[i * N + n] = Cc[i * N + n] * std::exp(cs[i]);
          dnnl_sgemm('N', 'N', Qc, P, N, 1.0f, Cs.data(), N, Sh, P, 1.0f, Y, xs);
          // State at the end of the chunk.
          const float last = cs[Qc - 1];
          for (int64_t s = 0; s < Qc; ++s)
            for (int64_t n = 0; n < N; ++n)
              Bs[s * N + n] = Bc[s * N + n] * std::exp(last - cs[s]) * dth[s * H];
          const float decay = std::exp(last);
          for (int64_t i = 0; i < N * P; ++i) Sh[i] *= decay;
          dnnl_sgemm('T', 'N', N, P, Qc, 1.0f, Bs.data(), N, X, xs, 1.0f, Sh, P);
        }
        for (int64_t i = 0; i < Qc; ++i)
          for (int64_t p = 0; p < P; ++p) Y[i * xs + p] += Dskip[h] * X[i * xs + p];
      }
    }
  }
}
