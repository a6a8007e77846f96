// Library baseline for 15_retnet_retention: torchscale's parallel retention as a framework runs
// it eagerly, one library op per line — the decay mask [H, S, S] built and row-normalized by a
// plain loop (exp, row sums, sqrt), qk = q k^T / sqrt(D) with oneDNN's dnnl_sgemm per (b, h),
// qk *= mask with oneDNN's binary-mul primitive (mask broadcast over the batch), the row L1
// norm, the clamp to [1, 5e4] and qk /= norm as plain loops (see below), then o = qk v with
// dnnl_sgemm.
#include <oneapi/dnnl/dnnl.h>

#include <oneapi/dnnl/dnnl.hpp>

#include <cmath>
#include <cstdint>
#include <vector>

void retnet_retention(const float* q, const float* k, const float* v, float* o, int64_t B,
                      int64_t H, int64_t S, int64_t D) {
  using namespace dnnl;
  if (B * H * S * D == 0) return;
  static engine eng(engine::kind::cpu, 0);
  static stream strm(eng);
  const auto n = [](int64_t x) { return static_cast<size_t>(x); };
  // Intermediates live in static buffers reused across calls, as a framework's caching allocator
  // reuses them: on this machine the page faults of fresh multi-MiB buffers on every call cost
  // more than the arithmetic.
  static std::vector<float> mask, qk, l1;
  // Decay mask, normalized per row.
  mask.resize(n(H * S * S));
  for (int64_t h = 0; h < H; ++h) {
    const float ld = std::log(1.0f - std::pow(2.0f, static_cast<float>(-5 - h)));
    for (int64_t i = 0; i < S; ++i) {
      float* m = mask.data() + (h * S + i) * S;
      float sum = 0;
      for (int64_t j = 0; j < S; ++j) {
        m[j] = j <= i ? std::exp(ld * static_cast<float>(i - j)) : 0.0f;
        sum += m[j];
      }
      const float inv = 1.0f / std::sqrt(sum);
      for (int64_t j = 0; j < S; ++j) m[j] *= inv;
    }
  }
  qk.resize(n(B * H * S * S));
  l1.resize(n(B * H * S));
  const float scale = 1.0f / std::sqrt(static_cast<float>(D));
  for (int64_t bh = 0; bh < B * H; ++bh)
    dnnl_sgemm('N', 'T', S, S, D, scale, q + bh * S * D, D, k + bh * S * D, D, 0.0f,
               qk.data() + bh * S * S, S);
  const auto f32 = memory::data_type::f32;
  memory::desc qk_md({B, H, S, S}, f32, memory::format_tag::abcd);
  memory::desc mask_md({1, H, S, S}, f32, memory::format_tag::abcd);
  memory qk_m(qk_md, eng, qk.data()), mask_m(mask_md, eng, mask.data());
  binary(binary::primitive_desc(binary::desc(algorithm::binary_mul, qk_md, mask_md, qk_md), eng))
      .execute(strm, {{DNNL_ARG_SRC_0, qk_m}, {DNNL_ARG_SRC_1, mask_m}, {DNNL_ARG_DST, qk_m}});
  strm.wait();
  // Row L1 norm, clamp, divide: oneDNN 2.6 runs its reduction (lp_sum over the last axis) and a
  // binary division broadcast along it with reference (non-JIT) code, ~30x slower than these
  // three eager passes, so they are plain loops, one per framework op.
  for (int64_t r = 0; r < B * H * S; ++r) {
    const float* row = qk.data() + r * S;
    float a = 0;
    for (int64_t j = 0; j < S; ++j) a += std::fabs(row[j]);
    l1[r] = a;
  }
  for (int64_t r = 0; r < B * H * S; ++r)
    l1[r] = l1[r] < 1.0f ? 1.0f : (l1[r] > 5e4f ? 5e4f : l1[r]);
  for (int64_t r = 0; r < B * H * S; ++r) {
    float* row = qk.data() + r * S;
    for (int64_t j = 0; j < S; ++j) row[j] = row[j] / l1[r];
  }
  for (int64_t bh = 0; bh < B * H; ++bh)
    dnnl_sgemm('N', 'N', S, D, S, 1.0f, qk.data() + bh * S * S, S, v + bh * S * D, D, 0.0f,
               o + bh * S * D, D);
}
