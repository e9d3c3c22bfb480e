// Vector kernels for loop bodies: the inner products and updates ML models spend
// their time in, vectorised for the machine the program runs on.
//
// Strata is built for a portable baseline (x86-64-v2), so a loop body compiled with
// the rest of the program cannot use AVX2 or AVX-512. These functions are compiled
// once per instruction set and picked at startup from what the CPU supports
// (STRATA_KERNELS=baseline|avx2|avx512 forces a choice). Every version performs the
// same floating-point operations in the same order (32 lanes of partial sums, a
// fixed reduction tree, no fused multiply-add), so results are bit-identical on
// every x86-64 machine, whichever version runs.
#pragma once

#include <cstddef>
#include <span>

namespace strata::kernels {

/// sum_k a[k] * b[k] over n elements.
float dot(const float* a, const float* b, std::size_t n);

/// y[k] += alpha * x[k].
void axpy(float alpha, const float* x, float* y, std::size_t n);

/// One SGD step of matrix factorisation with squared loss and L2 regularisation on
/// the factor rows w (user) and h (item) of length n:
///   e = r - <w, h>;  w <- (1 - lr*reg) w + lr*e h;  h <- (1 - lr*reg) h + lr*e w_old.
/// Returns the error e before the step.
float sgd_mf_step(float* w, float* h, std::size_t n, float r, float lr, float reg);

/// <w, h>, with |w|^2 in *ww and |h|^2 in *hh, each summed in dot's order, in one
/// sweep over both rows (an adaptive step's gradient norms follow from the three).
float dot_and_norms(const float* w, const float* h, std::size_t n, float* ww, float* hh);

/// Both rows of a factorisation step at once, each moved by its own coefficients:
///   w <- aw w + bw h;  h <- ah h + bh w_old.
/// sgd_mf_step's update is the case aw = ah = 1 - lr*reg, bw = bh = lr*e (same bits).
void pair_update(float* w, float* h, std::size_t n, float aw, float bw, float ah, float bh);

inline float dot(std::span<const float> a, std::span<const float> b) { return dot(a.data(), b.data(), a.size()); }
inline float sgd_mf_step(std::span<float> w, std::span<float> h, float r, float lr, float reg) {
  return sgd_mf_step(w.data(), h.data(), w.size(), r, lr, reg);
}

/// The instruction set the kernels run with: "avx512", "avx2" or "baseline".
const char* instruction_set();

namespace detail {
/// The kernels of one instruction set, for tests that compare them.
struct KernelSet {
  const char* name;
  float (*dot)(const float*, const float*, std::size_t);
  void (*axpy)(float, const float*, float*, std::size_t);
  float (*sgd_mf_step)(float*, float*, std::size_t, float, float, float);
  float (*dot_and_norms)(const float*, const float*, std::size_t, float*, float*);
  void (*pair_update)(float*, float*, std::size_t, float, float, float, float);
};
/// The set for "baseline", "avx2" or "avx512"; nullptr if unknown or this CPU lacks it.
const KernelSet* kernel_set(const char* isa);
}  // namespace detail

}  // namespace strata::kernels
