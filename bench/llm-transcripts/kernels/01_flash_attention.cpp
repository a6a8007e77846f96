// Causal flash attention for AVX-512, [B, H, S, D] f32.
//
// Per (batch, head), K is transposed once into Kt[D][S16] (S rounded up to 16, zero padded) so a
// block of scores is a broadcast-Q times contiguous-K register tile. Queries go in blocks of
// QB = MR * G rows; for each block of BK = 64 keys (only keys at or before the block's last row):
//   1. s = (q . k) * scale * log2(e) for MR rows x 64 keys in 24 zmm accumulators;
//   2. the online softmax: the block's row max, the running max m and sum l rescaled by
//      alpha = 2^(m_old - m_new), p = 2^(s - m_new) with the causal mask applied in registers;
//   3. o = o * alpha + p . V for MR rows x 64 columns of D in 24 accumulators.
// Scores never leave L1 (one MR x 64 tile of p); o is divided by l once at the end. The K and
// V blocks (64 x D) are shared by the G sub-tiles of a query block while they are in L1.
// exp is 2^x: x = n + f, a degree-7 polynomial for 2^f, scalef by n.
#include <immintrin.h>
#include <kforge/kernel.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

namespace {

constexpr int MR = 6;  // query rows per register tile
constexpr int G = 4;   // register tiles per query block
constexpr int QB = MR * G;
constexpr int BK = 64;  // keys per block: 4 vectors

inline __m512 exp2_ps(__m512 x) {
  x = _mm512_max_ps(x, _mm512_set1_ps(-200.0f));  // -inf (masked) -> an exact 0 after scalef
  const __m512 n = _mm512_roundscale_ps(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  const __m512 f = _mm512_sub_ps(x, n);  // [-0.5, 0.5]
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

inline __mmask16 first(int64_t n) {
  return n <= 0 ? 0 : n >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << n) - 1);
}

// The running state of one query block.
struct Block {
  float m[QB], l[QB];
  float* o;  // QB x Dp
  float p[MR][BK];
};

// Steps 1 and 2 for the MR rows rows[0..MR) (indices, the last repeated past S) and the keys
// j0 .. j0 + 16 NV of the transposed block kt (leading dimension ld).
template <int NV>
void scores(const float* q, int64_t D, const int64_t* rows, const float* kt, int64_t ld, int64_t j0,
            float c, float* m, float* l, float* alpha, float (*p)[BK]) {
  __m512 acc[MR][NV];
  for (int r = 0; r < MR; ++r)
    for (int v = 0; v < NV; ++v) acc[r][v] = _mm512_setzero_ps();
  const float* qr[MR];
  for (int r = 0; r < MR; ++r) qr[r] = q + rows[r] * D;
  for (int64_t d = 0; d < D; ++d) {
    __m512 kv[NV];
    for (int v = 0; v < NV; ++v) kv[v] = _mm512_loadu_ps(kt + d * ld + j0 + 16 * v);
    for (int r = 0; r < MR; ++r) {
      const __m512 qb = _mm512_set1_ps(qr[r][d]);
      for (int v = 0; v < NV; ++v) acc[r][v] = _mm512_fmadd_ps(qb, kv[v], acc[r][v]);
    }
  }
  const __m512 cv = _mm512_set1_ps(c), ninf = _mm512_set1_ps(-INFINITY);
  for (int r = 0; r < MR; ++r) {
    __mmask16 mk[NV];
    __m512 mx = ninf;
    for (int v = 0; v < NV; ++v) {
      mk[v] = first(rows[r] - (j0 + 16 * v) + 1);  // causal: key j <= row i
      acc[r][v] = _mm512_mask_mul_ps(ninf, mk[v], acc[r][v], cv);
      mx = _mm512_max_ps(mx, acc[r][v]);
    }
    const float mnew = std::max(m[r], _mm512_reduce_max_ps(mx));
    alpha[r] = std::exp2(m[r] - mnew);  // m = -inf before the first block: alpha = 0
    m[r] = mnew;
    const __m512 mv = _mm512_set1_ps(mnew);
    __m512 sum = _mm512_setzero_ps();
    for (int v = 0; v < NV; ++v) {
      const __m512 e = _mm512_maskz_mov_ps(mk[v], exp2_ps(_mm512_sub_ps(acc[r][v], mv)));
      sum = _mm512_add_ps(sum, e);
      _mm512_storeu_ps(p[r] + 16 * v, e);
    }
    l[r] = l[r] * alpha[r] + _mm512_reduce_add_ps(sum);
  }
}

// Step 3 for columns d0 .. d0 + 16 NV of o (the last vector masked by `last`) over nk keys.
template <int NV>
void accumulate(float* o, int64_t Dp, const float (*p)[BK], const float* vb, int64_t D, int64_t d0,
                __mmask16 last, int64_t nk, const float* alpha) {
  __m512 acc[MR][NV];
  for (int r = 0; r < MR; ++r) {
    const __m512 a = _mm512_set1_ps(alpha[r]);
    for (int v = 0; v < NV; ++v)
      acc[r][v] = _mm512_mul_ps(a, _mm512_loadu_ps(o + r * Dp + d0 + 16 * v));
  }
  for (int64_t j = 0; j < nk; ++j) {
    const float* vr = vb + j * D + d0;
    __m512 vv[NV];
    for (int v = 0; v < NV - 1; ++v) vv[v] = _mm512_loadu_ps(vr + 16 * v);
    vv[NV - 1] = _mm512_maskz_loadu_ps(last, vr + 16 * (NV - 1));
    for (int r = 0; r < MR; ++r) {
      const __m512 pb = _mm512_set1_ps(p[r][j]);
      for (int v = 0; v < NV; ++v) acc[r][v] = _mm512_fmadd_ps(pb, vv[v], acc[r][v]);
    }
  }
  for (int r = 0; r < MR; ++r)
    for (int v = 0; v < NV; ++v) _mm512_storeu_ps(o + r * Dp + d0 + 16 * v, acc[r][v]);
}

void query_block(const float* q, const float* kt, const float* v, float* out, int64_t S, int64_t D,
                 int64_t ld, int64_t i0, float c, Block& b, int64_t Dp) {
  const int64_t ilast = std::min(i0 + QB, S) - 1;
  for (int r = 0; r < QB; ++r) b.m[r] = -INFINITY, b.l[r] = 0;
  std::fill(b.o, b.o + QB * Dp, 0.0f);
  for (int64_t j0 = 0; j0 <= ilast; j0 += BK) {
    const float* vb = v + j0 * D;
    for (int g = 0; g < G; ++g) {
      const int64_t r0 = i0 + g * MR;
      if (r0 > ilast) break;
      if (j0 > std::min(r0 + MR - 1, ilast)) continue;  // every key of the block is masked
      int64_t rows[MR];
      for (int r = 0; r < MR; ++r) rows[r] = std::min(r0 + r, S - 1);
      const int64_t nk = std::min<int64_t>(BK, rows[MR - 1] - j0 + 1);
      float alpha[MR];
      float *m = b.m + g * MR, *l = b.l + g * MR;
      switch ((nk + 15) / 16) {
        case 1:
          scores<1>(q, D, rows, kt, ld, j0, c, m, l, alpha, b.p);
          break;
        case 2:
          scores<2>(q, D, rows, kt, ld, j0, c, m, l, alpha, b.p);
          break;
        case 3:
          scores<3>(q, D, rows, kt, ld, j0, c, m, l, alpha, b.p);
          break;
        default:
          scores<4>(q, D, rows, kt, ld, j0, c, m, l, alpha, b.p);
          break;
      }
      float* o = b.o + g * MR * Dp;
      for (int64_t d0 = 0; d0 < D; d0 += 64) {
        const int64_t w = std::min<int64_t>(64, D - d0);
        const __mmask16 last = first(w - 16 * ((w - 1) / 16));
        switch ((w + 15) / 16) {
          case 1:
            accumulate<1>(o, Dp, b.p, vb, D, d0, last, nk, alpha);
            break;
          case 2:
            accumulate<2>(o, Dp, b.p, vb, D, d0, last, nk, alpha);
            break;
          case 3:
            accumulate<3>(o, Dp, b.p, vb, D, d0, last, nk, alpha);
            break;
          default:
            accumulate<4>(o, Dp, b.p, vb, D, d0, last, nk, alpha);
            break;
        }
      }
    }
  }
  for (int64_t i = i0; i <= ilast; ++i) {
    const float inv = 1.0f / b.l[i - i0];
    const float* o = b.o + (i - i0) * Dp;
    for (int64_t d = 0; d < D; ++d) out[i * D + d] = o[d] * inv;
  }
}

}  // namespace

void flash_attention(const float* q, const float* k, const float* v, float* o, int64_t B, int64_t H,
                     int64_t S, int64_t D) {
  if (B * H * S * D == 0) return;
  const int64_t BH = B * H, ld = (S + 15) / 16 * 16, Dp = (D + 63) / 64 * 64;
  static std::vector<float> kt;  // reused across calls: no page faults after the first
  kt.assign(static_cast<size_t>(BH * D * ld), 0.0f);
#pragma omp parallel for
  for (int64_t bh = 0; bh < BH; ++bh)
    for (int64_t j0 = 0; j0 < S; j0 += BK)  // 64 rows of K stay in L1 while they are read
      for (int64_t d = 0; d < D; ++d)
        for (int64_t j = j0; j < std::min(S, j0 + BK); ++j)
          kt[(bh * D + d) * ld + j] = k[(bh * S + j) * D + d];
  const float c = static_cast<float>(1.4426950408889634 / std::sqrt(static_cast<double>(D)));
  const int64_t nqb = (S + QB - 1) / QB;
#pragma omp parallel
  {
    std::vector<float> obuf(static_cast<size_t>(QB * Dp));
    Block b;
    b.o = obuf.data();
#pragma omp for schedule(dynamic)
    for (int64_t t = 0; t < BH * nqb; ++t) {
      const int64_t bh = t / nqb, i0 = (nqb - 1 - t % nqb) * QB;  // the longest blocks first
      query_block(q + bh * S * D, kt.data() + bh * D * ld, v + bh * S * D, o + bh * S * D, S, D, ld,
                  i0, c, b, Dp);
    }
  }
}
