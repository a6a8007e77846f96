// Direct convolution + conv bias + ReLU + bias for AVX-512, NCHW f32 (valid, stride 1).
//
// The weights are packed once per call into groups of KR output channels,
// wp[group][c][r][s][KR] (zero past K), so the KR weights of one tap are adjacent broadcasts.
// One register tile is KR output channels x 16 NV output columns of one output row: for each
// input channel and tap (c, r, s), NV unaligned loads of the input row (shifted by s) feed
// KR x NV FMAs. KR = 8 x 32 columns (16 accumulators) when K is a multiple of 8, else 6 x 64
// (24 accumulators), so few FMAs land on padding channels. All channel groups of one column
// block run back to back (its input rows stay in L1). A row's last tile is shifted left to end
// at the row's end (recomputing a few columns) so its loads need no mask; only a row narrower
// than a tile is masked. The epilogue adds conv_bias, applies the ReLU, adds bias and stores
// once; channels past K are not stored.
#include <immintrin.h>
#include <kforge/kernel.h>
#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <vector>

namespace {

inline __mmask16 first(int64_t n) {
  return n <= 0 ? 0 : n >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << n) - 1);
}

struct Shape {
  int64_t C, H, W, K, R, S, P, Q;
};

// Output row p of image xn, channels g*KR .. g*KR + KR, columns q0 .. q0 + 16 NV.
template <int KR, int NV, bool TAIL>
void tile(const float* xn, const float* wg, const float* conv_bias, const float* bias, float* yn,
          const Shape& s, int64_t g, int64_t p, int64_t q0) {
  __mmask16 mk[NV];
  for (int v = 0; v < NV; ++v) mk[v] = first(s.Q - q0 - 16 * v);
  __m512 acc[KR][NV];
  for (int k = 0; k < KR; ++k)
    for (int v = 0; v < NV; ++v) acc[k][v] = _mm512_setzero_ps();
  for (int64_t c = 0; c < s.C; ++c)
    for (int64_t r = 0; r < s.R; ++r) {
      const float* xr = xn + (c * s.H + p + r) * s.W + q0;
      const float* wr = wg + (c * s.R + r) * s.S * KR;
      for (int64_t t = 0; t < s.S; ++t) {
        __m512 xv[NV];
        for (int v = 0; v < NV; ++v)
          xv[v] = v + 1 < NV || !TAIL ? _mm512_loadu_ps(xr + t + 16 * v)
                                      : _mm512_maskz_loadu_ps(mk[v], xr + t + 16 * v);
        for (int k = 0; k < KR; ++k) {
          const __m512 w = _mm512_set1_ps(wr[t * KR + k]);
          for (int v = 0; v < NV; ++v) acc[k][v] = _mm512_fmadd_ps(w, xv[v], acc[k][v]);
        }
      }
    }
  const __m512 zero = _mm512_setzero_ps();
  for (int k = 0; k < KR && g * KR + k < s.K; ++k) {
    const int64_t ko = g * KR + k;
    const __m512 cb = _mm512_set1_ps(conv_bias[ko]), b = _mm512_set1_ps(bias[ko]);
    float* yr = yn + (ko * s.P + p) * s.Q + q0;
    for (int v = 0; v < NV; ++v) {
      const __m512 z = _mm512_max_ps(_mm512_add_ps(acc[k][v], cb), zero);
      _mm512_mask_storeu_ps(yr + 16 * v, mk[v], _mm512_add_ps(z, b));
    }
  }
}

// A tile whose columns all lie inside the row loads its input without masks.
template <int KR, int NV>
void run(const float* xn, const float* wg, const float* conv_bias, const float* bias, float* yn,
         const Shape& s, int64_t g, int64_t p, int64_t q0) {
  if (q0 + 16 * NV <= s.Q)
    tile<KR, NV, false>(xn, wg, conv_bias, bias, yn, s, g, p, q0);
  else
    tile<KR, NV, true>(xn, wg, conv_bias, bias, yn, s, g, p, q0);
}

// The convolution with KR-channel tiles of up to 16 NVMAX columns.
template <int KR, int NVMAX>
void conv(const float* x, const float* weight, const float* conv_bias, const float* bias, float* y,
          int64_t N, const Shape& s) {
  const int64_t groups = (s.K + KR - 1) / KR, per_group = s.C * s.R * s.S * KR;
  static std::vector<float> wp;  // reused across calls
  wp.assign(static_cast<size_t>(groups * per_group), 0.0f);
  for (int64_t k = 0; k < s.K; ++k)
    for (int64_t i = 0; i < s.C * s.R * s.S; ++i)
      wp[(k / KR) * per_group + i * KR + k % KR] = weight[k * s.C * s.R * s.S + i];
  constexpr int64_t cols = 16 * NVMAX;
#pragma omp parallel for collapse(2) schedule(static)
  for (int64_t n = 0; n < N; ++n)
    for (int64_t p = 0; p < s.P; ++p) {
      const float* xn = x + n * s.C * s.H * s.W;
      float* yn = y + n * s.K * s.P * s.Q;
      for (int64_t q0 = 0; q0 < s.Q; q0 += cols) {
        // A row at least one tile wide ends with a full tile shifted left over columns already
        // written (they are computed the same way again): masked loads are slow.
        const int64_t qt = s.Q >= cols ? std::min(q0, s.Q - cols) : q0;
        const int64_t nv = std::min<int64_t>(NVMAX, (s.Q - qt + 15) / 16);
        // Every channel group reads the same C x R input rows of this column block: from L1.
        for (int64_t g = 0; g < groups; ++g) {
          const float* wg = wp.data() + g * per_group;
          if (nv == 1)
            run<KR, 1>(xn, wg, conv_bias, bias, yn, s, g, p, qt);
          else if (nv == 2)
            run<KR, 2>(xn, wg, conv_bias, bias, yn, s, g, p, qt);
          else if constexpr (NVMAX == 4) {
            if (nv == 3)
              run<KR, 3>(xn, wg, conv_bias, bias, yn, s, g, p, qt);
            else
              run<KR, 4>(xn, wg, conv_bias, bias, yn, s, g, p, qt);
          }
        }
      }
    }
}

}  // namespace

void conv2d_relu_biasadd(const float* x, const float* weight, const float* conv_bias,
                         const float* bias, float* y, int64_t N, int64_t C, int64_t H, int64_t W,
                         int64_t K, int64_t R, int64_t S) {
  const Shape s{C, H, W, K, R, S, H - R + 1, W - S + 1};
  if (N <= 0 || K <= 0 || s.P <= 0 || s.Q <= 0) return;
  if (K % 8 == 0)
    conv<8, 2>(x, weight, conv_bias, bias, y, N, s);
  else
    conv<6, 4>(x, weight, conv_bias, bias, y, N, s);
}
