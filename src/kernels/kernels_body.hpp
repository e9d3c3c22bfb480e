// The kernels' one implementation, included by each instruction-set translation unit
// inside its own namespace (STRATA_KERNEL_NS). It is written with GCC vector types
// of 16 floats, which the compiler lowers to one AVX-512 register, two AVX2
// registers or four SSE registers; lane-wise operations give the same results at
// every width, and the reductions below fix the order of the remaining additions.
// These files are compiled with -ffp-contract=off so no multiply-add is fused.
#include <cstddef>
#include <cstring>

namespace strata::kernels::STRATA_KERNEL_NS {

typedef float f16 __attribute__((vector_size(64)));

inline f16 load(const float* p) {
  f16 v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
inline void store(float* p, f16 v) { std::memcpy(p, &v, sizeof v); }
inline f16 splat(float x) { return f16{} + x; }

typedef float f8 __attribute__((vector_size(32)));
typedef float f4 __attribute__((vector_size(16)));

// Lanes summed pairwise: (0..7)+(8..15), then halves again down to one, lane k of
// each half added to lane k of the other. In vector halves: a few instructions where
// a loop over the lanes in memory took dozens (the row step makes three of these).
inline float reduce(f16 v) {
  const f8 a = __builtin_shufflevector(v, v, 0, 1, 2, 3, 4, 5, 6, 7) +
               __builtin_shufflevector(v, v, 8, 9, 10, 11, 12, 13, 14, 15);
  const f4 b = __builtin_shufflevector(a, a, 0, 1, 2, 3) + __builtin_shufflevector(a, a, 4, 5, 6, 7);
  const float c0 = b[0] + b[2], c1 = b[1] + b[3];
  return c0 + c1;
}

// Two accumulators of 16 lanes take alternate chunks of 16 elements (so two
// independent chains of additions hide their latency); a scalar tail follows.
float dot(const float* a, const float* b, std::size_t n) {
  f16 acc0{}, acc1{};
  std::size_t k = 0;
  for (; k + 32 <= n; k += 32) {
    acc0 += load(a + k) * load(b + k);
    acc1 += load(a + k + 16) * load(b + k + 16);
  }
  if (k + 16 <= n) {
    acc0 += load(a + k) * load(b + k);
    k += 16;
  }
  float sum = reduce(acc0 + acc1);
  for (; k < n; ++k) sum += a[k] * b[k];
  return sum;
}

void axpy(float alpha, const float* x, float* y, std::size_t n) {
  const f16 a = splat(alpha);
  std::size_t k = 0;
  for (; k + 16 <= n; k += 16) store(y + k, load(y + k) + a * load(x + k));
  for (; k < n; ++k) y[k] += alpha * x[k];
}

void pair_update(float* w, float* h, std::size_t n, float aw, float bw, float ah, float bh) {
  const f16 va = splat(aw), vb = splat(bw), vc = splat(ah), vd = splat(bh);
  std::size_t k = 0;
  for (; k + 16 <= n; k += 16) {
    const f16 wk = load(w + k), hk = load(h + k);
    store(w + k, va * wk + vb * hk);
    store(h + k, vc * hk + vd * wk);
  }
  for (; k < n; ++k) {
    const float wk = w[k], hk = h[k];
    w[k] = aw * wk + bw * hk;
    h[k] = ah * hk + bh * wk;
  }
}

// The plain step is the pair update with both rows shrunk alike and stepped alike.
float sgd_mf_step(float* w, float* h, std::size_t n, float r, float lr, float reg) {
  const float e = r - dot(w, h, n);
  const float shrink = 1.0f - lr * reg, step = lr * e;
  pair_update(w, h, n, shrink, step, shrink, step);
  return e;
}

// dot's order for each of the three sums, in one sweep over both rows.
float dot_and_norms(const float* w, const float* h, std::size_t n, float* ww, float* hh) {
  f16 wh0{}, wh1{}, ww0{}, ww1{}, hh0{}, hh1{};
  std::size_t k = 0;
  for (; k + 32 <= n; k += 32) {
    const f16 a0 = load(w + k), b0 = load(h + k), a1 = load(w + k + 16), b1 = load(h + k + 16);
    wh0 += a0 * b0;
    wh1 += a1 * b1;
    ww0 += a0 * a0;
    ww1 += a1 * a1;
    hh0 += b0 * b0;
    hh1 += b1 * b1;
  }
  if (k + 16 <= n) {
    const f16 a0 = load(w + k), b0 = load(h + k);
    wh0 += a0 * b0;
    ww0 += a0 * a0;
    hh0 += b0 * b0;
    k += 16;
  }
  float wh = reduce(wh0 + wh1), sw = reduce(ww0 + ww1), sh = reduce(hh0 + hh1);
  for (; k < n; ++k) {
    wh += w[k] * h[k];
    sw += w[k] * w[k];
    sh += h[k] * h[k];
  }
  *ww = sw;
  *hh = sh;
  return wh;
}

}  // namespace strata::kernels::STRATA_KERNEL_NS
