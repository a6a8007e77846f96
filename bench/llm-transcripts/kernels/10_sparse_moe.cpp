// Sparse top-2 MoE (Mixtral SwiGLU experts) for AVX-512, f32.
//
// Route every token (top-2 logits, ties to the lowest index, softmax over the pair), then group
// the tokens by expert (a counting sort: each expert's list of tokens and mixing weights). Per
// expert, its tokens' rows are gathered into one contiguous matrix X_e [n_e, E], each GEMM's
// weight panel (64 columns) is packed contiguously (rows of the weights are a page or more
// apart), and:
//   1. H = silu(X_e W1) * (X_e W3): one register tile of 6 rows x (32 columns of W1 and the same
//      32 of W3), 24 zmm accumulators over E, the SwiGLU applied in registers, H written once;
//   2. Y_e = H W2: 6 rows x 64 columns, 24 accumulators over F; the epilogue scatter-adds each
//      row times its mixing weight into y[token] (each expert's rows are distinct tokens).
// Each expert's weights are read from memory once per call (the reference reads them once per
// token), and every weight loaded feeds 6 tokens' FMAs from registers. Column tails are masked
// loads and stores; a row tail repeats the last row and stores nothing for it. Threads split
// the column panels of each GEMM, so no two write the same element of H or y.
#include <immintrin.h>
#include <kforge/kernel.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

namespace {

constexpr int MR = 6;

inline __mmask16 first(int64_t n) {
  return n <= 0 ? 0 : n >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << n) - 1);
}

// 2^x: x = n + f, a degree-7 polynomial for 2^f on [-0.5, 0.5], scalef by n.
inline __m512 exp2_ps(__m512 x) {
  const __m512 n = _mm512_roundscale_ps(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  const __m512 f = _mm512_sub_ps(x, n);
  __m512 p = _mm512_set1_ps(1.525273e-5f);
  p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(1.540353e-4f));
  p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(1.333355e-3f));
  p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(9.618129e-3f));
  p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(5.550411e-2f));
  p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(2.402265e-1f));
  p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(6.931472e-1f));
  p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(1.0f));
  return _mm512_scalef_ps(p, n);
}

// silu(g) * u = g * u / (1 + e^-g)
inline __m512 swiglu(__m512 g, __m512 u) {
  const __m512 e = exp2_ps(_mm512_mul_ps(g, _mm512_set1_ps(-1.4426950408889634f)));
  return _mm512_div_ps(_mm512_mul_ps(g, u), _mm512_add_ps(_mm512_set1_ps(1.0f), e));
}

// Packs columns c0 .. c0 + w of the rows of `src` (row length n, `rows` rows) into `dst` at
// column offset `at` of rows of width ld, zero past the matrix: a panel read contiguously by the
// register tiles (the weights' own rows are F or E floats apart, a page or more).
void pack(const float* src, int64_t rows, int64_t n, int64_t c0, int64_t w, float* dst, int64_t ld,
          int64_t at) {
  const int64_t valid = std::min(w, n - c0);
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t v = 0; v * 16 < w; ++v) {
      const __mmask16 m = first(valid - 16 * v);
      _mm512_storeu_ps(dst + i * ld + at + 16 * v,
                       _mm512_maskz_loadu_ps(m, src + i * n + c0 + 16 * v));
    }
}

// Step 1 for rows r0 .. r0 + MR (nr of them real) and columns f0 .. f0 + 32 of H, from the panel
// bp[d][64]: columns of W1 in 0..32, the same columns of W3 in 32..64.
void gate_up(const float* xg, int64_t E, const float* bp, int64_t F, float* h, int64_t r0,
             int64_t nr, int64_t f0) {
  const float* a[MR];
  for (int r = 0; r < MR; ++r) a[r] = xg + (r0 + std::min<int64_t>(r, nr - 1)) * E;
  __m512 g[MR][2], u[MR][2];
  for (int r = 0; r < MR; ++r)
    for (int v = 0; v < 2; ++v) g[r][v] = u[r][v] = _mm512_setzero_ps();
  for (int64_t d = 0; d < E; ++d) {
    const float* b = bp + d * 64;
    const __m512 b10 = _mm512_loadu_ps(b), b11 = _mm512_loadu_ps(b + 16);
    const __m512 b30 = _mm512_loadu_ps(b + 32), b31 = _mm512_loadu_ps(b + 48);
    for (int r = 0; r < MR; ++r) {
      const __m512 xb = _mm512_set1_ps(a[r][d]);
      g[r][0] = _mm512_fmadd_ps(xb, b10, g[r][0]);
      g[r][1] = _mm512_fmadd_ps(xb, b11, g[r][1]);
      u[r][0] = _mm512_fmadd_ps(xb, b30, u[r][0]);
      u[r][1] = _mm512_fmadd_ps(xb, b31, u[r][1]);
    }
  }
  const __mmask16 mk[2] = {first(F - f0), first(F - f0 - 16)};
  for (int r = 0; r < nr; ++r)
    for (int v = 0; v < 2; ++v)
      _mm512_mask_storeu_ps(h + (r0 + r) * F + f0 + 16 * v, mk[v], swiglu(g[r][v], u[r][v]));
}

// Step 2 for rows r0 .. r0 + MR of H and columns e0 .. e0 + 16 NV, from the panel bp[f][16 NV],
// scatter-added into y.
template <int NV>
void down(const float* h, int64_t F, const float* bp, int64_t E, const int64_t* tok,
          const float* wt, float* y, int64_t r0, int64_t nr, int64_t e0) {
  const float* a[MR];
  for (int r = 0; r < MR; ++r) a[r] = h + (r0 + std::min<int64_t>(r, nr - 1)) * F;
  __m512 acc[MR][NV];
  for (int r = 0; r < MR; ++r)
    for (int v = 0; v < NV; ++v) acc[r][v] = _mm512_setzero_ps();
  for (int64_t f = 0; f < F; ++f) {
    __m512 b[NV];
    for (int v = 0; v < NV; ++v) b[v] = _mm512_loadu_ps(bp + f * 16 * NV + 16 * v);
    for (int r = 0; r < MR; ++r) {
      const __m512 hb = _mm512_set1_ps(a[r][f]);
      for (int v = 0; v < NV; ++v) acc[r][v] = _mm512_fmadd_ps(hb, b[v], acc[r][v]);
    }
  }
  __mmask16 mk[NV];
  for (int v = 0; v < NV; ++v) mk[v] = first(E - e0 - 16 * v);
  for (int r = 0; r < nr; ++r) {
    float* yr = y + tok[r0 + r] * E + e0;
    const __m512 w = _mm512_set1_ps(wt[r0 + r]);
    for (int v = 0; v < NV; ++v) {
      const __m512 old = _mm512_maskz_loadu_ps(mk[v], yr + 16 * v);
      _mm512_mask_storeu_ps(yr + 16 * v, mk[v], _mm512_fmadd_ps(w, acc[r][v], old));
    }
  }
}

template <int NV>
void down_panel(const float* h, int64_t n, int64_t F, const float* W2, int64_t E,
                const int64_t* tok, const float* wt, float* y, int64_t e0, float* bp) {
  pack(W2, F, E, e0, 16 * NV, bp, 16 * NV, 0);
  for (int64_t r0 = 0; r0 < n; r0 += MR)
    down<NV>(h, F, bp, E, tok, wt, y, r0, std::min<int64_t>(MR, n - r0), e0);
}

// One expert's two GEMMs; `bp` is this thread's panel buffer (max(E, F) * 64 floats).
void expert(const float* xg, int64_t n, const float* W1, const float* W3, const float* W2,
            const int64_t* tok, const float* wt, float* h, float* y, int64_t E, int64_t F,
            float* bp) {
  const int64_t nf = (F + 31) / 32, ne = (E + 63) / 64;
#pragma omp for schedule(static)
  for (int64_t pf = 0; pf < nf; ++pf) {
    const int64_t f0 = pf * 32;
    pack(W1, E, F, f0, 32, bp, 64, 0);
    pack(W3, E, F, f0, 32, bp, 64, 32);
    for (int64_t r0 = 0; r0 < n; r0 += MR)
      gate_up(xg, E, bp, F, h, r0, std::min<int64_t>(MR, n - r0), f0);
  }
#pragma omp for schedule(static)
  for (int64_t pe = 0; pe < ne; ++pe) {
    const int64_t e0 = pe * 64;
    switch (std::min<int64_t>(4, (E - e0 + 15) / 16)) {
      case 1:
        down_panel<1>(h, n, F, W2, E, tok, wt, y, e0, bp);
        break;
      case 2:
        down_panel<2>(h, n, F, W2, E, tok, wt, y, e0, bp);
        break;
      case 3:
        down_panel<3>(h, n, F, W2, E, tok, wt, y, e0, bp);
        break;
      default:
        down_panel<4>(h, n, F, W2, E, tok, wt, y, e0, bp);
        break;
    }
  }
}

}  // namespace

void sparse_moe(const float* x, const float* router_logits, const float* w1, const float* w3,
                const float* w2, float* y, int64_t Ntok, int64_t E, int64_t F, int64_t NE) {
  std::fill(y, y + Ntok * E, 0.0f);
  if (Ntok == 0 || E == 0) return;
  // Route and group: each expert's tokens in ascending order with their mixing weights.
  std::vector<int64_t> sel(static_cast<size_t>(2 * Ntok)), count(static_cast<size_t>(NE + 1));
  std::vector<float> wsel(static_cast<size_t>(2 * Ntok));
  for (int64_t t = 0; t < Ntok; ++t) {
    const float* lg = router_logits + t * NE;
    int64_t e1 = 0;
    for (int64_t e = 1; e < NE; ++e)
      if (lg[e] > lg[e1]) e1 = e;
    int64_t e2 = e1 == 0 ? 1 : 0;
    for (int64_t e = 0; e < NE; ++e)
      if (e != e1 && lg[e] > lg[e2]) e2 = e;
    const float z2 = std::exp(lg[e2] - lg[e1]);
    sel[2 * t] = e1, sel[2 * t + 1] = e2;
    wsel[2 * t] = 1.0f / (1.0f + z2), wsel[2 * t + 1] = z2 / (1.0f + z2);
    ++count[e1 + 1], ++count[e2 + 1];
  }
  for (int64_t e = 0; e < NE; ++e) count[e + 1] += count[e];
  std::vector<int64_t> tok(static_cast<size_t>(2 * Ntok)), fill(count.begin(), count.end() - 1);
  std::vector<float> wt(static_cast<size_t>(2 * Ntok));
  for (int64_t i = 0; i < 2 * Ntok; ++i) {
    const int64_t at = fill[sel[i]]++;
    tok[at] = i / 2, wt[at] = wsel[i];
  }
  static std::vector<float> xg, h;  // reused across calls: no page faults after the first
  xg.resize(static_cast<size_t>(Ntok * E));
  h.resize(static_cast<size_t>(Ntok * F));
#pragma omp parallel
  {
    static thread_local std::vector<float> bp;  // reused across calls, like xg and h
    bp.resize(static_cast<size_t>(std::max(E, F) * 64));
    for (int64_t e = 0; e < NE; ++e) {
      const int64_t b = count[e], n = count[e + 1] - b;
      if (n == 0) continue;
#pragma omp for schedule(static)
      for (int64_t r = 0; r < n; ++r)
        std::copy(x + tok[b + r] * E, x + tok[b + r] * E + E, xg.data() + r * E);
      expert(xg.data(), n, w1 + e * E * F, w3 + e * E * F, w2 + e * F * E, tok.data() + b,
             wt.data() + b, h.data(), y, E, F, bp.data());
    }
  }
}
