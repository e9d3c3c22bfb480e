// Picks the kernels' instruction set once per process: the widest the CPU and the
// operating system support, unless STRATA_KERNELS names one.
#include <cstdlib>
#include <string>

#include <fmt/format.h>

#include "strata/error.hpp"
#include "strata/kernels.hpp"

namespace strata::kernels {

#define STRATA_DECLARE_KERNELS(ns)                                                       \
  namespace ns {                                                                         \
  float dot(const float* a, const float* b, std::size_t n);                              \
  void axpy(float alpha, const float* x, float* y, std::size_t n);                       \
  float sgd_mf_step(float* w, float* h, std::size_t n, float r, float lr, float reg);     \
  float dot_and_norms(const float* w, const float* h, std::size_t n, float* ww, float* hh); \
  void pair_update(float* w, float* h, std::size_t n, float aw, float bw, float ah, float bh); \
  }
STRATA_DECLARE_KERNELS(baseline)
STRATA_DECLARE_KERNELS(avx2)
STRATA_DECLARE_KERNELS(avx512)
#undef STRATA_DECLARE_KERNELS

namespace {

using Table = detail::KernelSet;

constexpr Table kBaseline{"baseline", baseline::dot, baseline::axpy, baseline::sgd_mf_step, baseline::dot_and_norms,
                      baseline::pair_update};
constexpr Table kAvx2{"avx2", avx2::dot, avx2::axpy, avx2::sgd_mf_step, avx2::dot_and_norms,
                      avx2::pair_update};
constexpr Table kAvx512{"avx512", avx512::dot, avx512::axpy, avx512::sgd_mf_step, avx512::dot_and_norms,
                      avx512::pair_update};

// The kernels named `isa` if the CPU (and OS) support them, widest first.
const Table* supported(const std::string& isa) {
#if defined(__x86_64__)
  __builtin_cpu_init();
  if (isa == "avx512") return __builtin_cpu_supports("avx512f") ? &kAvx512 : nullptr;
  if (isa == "avx2") return __builtin_cpu_supports("avx2") ? &kAvx2 : nullptr;
#endif
  return isa == "baseline" ? &kBaseline : nullptr;
}

const Table& choose() {
  if (const char* forced = std::getenv("STRATA_KERNELS"); forced && *forced) {
    const std::string isa = forced;
    if (isa != "baseline" && isa != "avx2" && isa != "avx512")
      throw OptionError(fmt::format("STRATA_KERNELS={}: expected baseline, avx2 or avx512", isa));
    if (const Table* t = supported(isa)) return *t;
    throw OptionError(fmt::format("STRATA_KERNELS={}: this CPU does not support it", isa));
  }
  for (const char* isa : {"avx512", "avx2"})
    if (const Table* t = supported(isa)) return *t;
  return kBaseline;
}

const Table& table() {
  static const Table& t = choose();
  return t;
}

}  // namespace

float dot(const float* a, const float* b, std::size_t n) { return table().dot(a, b, n); }
void axpy(float alpha, const float* x, float* y, std::size_t n) { table().axpy(alpha, x, y, n); }
float sgd_mf_step(float* w, float* h, std::size_t n, float r, float lr, float reg) {
  return table().sgd_mf_step(w, h, n, r, lr, reg);
}
float dot_and_norms(const float* w, const float* h, std::size_t n, float* ww, float* hh) {
  return table().dot_and_norms(w, h, n, ww, hh);
}
void pair_update(float* w, float* h, std::size_t n, float aw, float bw, float ah, float bh) {
  table().pair_update(w, h, n, aw, bw, ah, bh);
}
const char* instruction_set() { return table().name; }

const detail::KernelSet* detail::kernel_set(const char* isa) { return supported(isa ? isa : ""); }

}  // namespace strata::kernels
