// The vector kernels: every instruction set this CPU supports gives exactly the bits
// of a scalar reference that performs the documented operations in the documented
// order, for lengths around the 16- and 32-element steps.
#include <gtest/gtest.h>

#include <array>
#include <vector>

#include "strata/kernels.hpp"
#include "strata/random.hpp"

namespace {

using strata::kernels::detail::KernelSet;

std::vector<float> random_vector(std::size_t n, std::uint64_t seed) {
  std::vector<float> v(n);
  strata::RandomStream rng(seed);
  for (auto& x : v) x = static_cast<float>(rng.normal());
  return v;
}

// 32 lanes: chunk pairs of 16 go to two accumulators, a leftover chunk of 16 to the
// first; lanes added pairwise down to one; the tail added in order.
float reference_dot(const float* a, const float* b, std::size_t n) {
  std::array<float, 16> acc0{}, acc1{};
  std::size_t k = 0;
  for (; k + 32 <= n; k += 32)
    for (std::size_t j = 0; j < 16; ++j) {
      acc0[j] += a[k + j] * b[k + j];
      acc1[j] += a[k + 16 + j] * b[k + 16 + j];
    }
  if (k + 16 <= n) {
    for (std::size_t j = 0; j < 16; ++j) acc0[j] += a[k + j] * b[k + j];
    k += 16;
  }
  std::array<float, 16> l{};
  for (std::size_t j = 0; j < 16; ++j) l[j] = acc0[j] + acc1[j];
  for (std::size_t width = 8; width >= 1; width /= 2)
    for (std::size_t j = 0; j < width; ++j) l[j] += l[j + width];
  float sum = l[0];
  for (; k < n; ++k) sum += a[k] * b[k];
  return sum;
}

std::vector<const KernelSet*> available() {
  std::vector<const KernelSet*> sets;
  for (const char* isa : {"baseline", "avx2", "avx512"})
    if (const KernelSet* s = strata::kernels::detail::kernel_set(isa)) sets.push_back(s);
  return sets;
}

const std::size_t kLengths[] = {0, 1, 7, 15, 16, 17, 31, 32, 33, 48, 64, 100, 129};

TEST(Kernels, BaselineIsAlwaysThereAndUnknownNamesAreNot) {
  EXPECT_NE(strata::kernels::detail::kernel_set("baseline"), nullptr);
  EXPECT_EQ(strata::kernels::detail::kernel_set("sse9"), nullptr);
  const std::string chosen = strata::kernels::instruction_set();
  EXPECT_TRUE(chosen == "baseline" || chosen == "avx2" || chosen == "avx512") << chosen;
}

TEST(Kernels, DotMatchesTheReferenceBitForBit) {
  for (const KernelSet* set : available())
    for (std::size_t n : kLengths) {
      const auto a = random_vector(n, 1 + n), b = random_vector(n, 100 + n);
      EXPECT_EQ(set->dot(a.data(), b.data(), n), reference_dot(a.data(), b.data(), n)) << set->name << " n=" << n;
    }
}

TEST(Kernels, AxpyMatchesTheReferenceBitForBit) {
  for (const KernelSet* set : available())
    for (std::size_t n : kLengths) {
      const auto x = random_vector(n, 7 + n);
      auto y = random_vector(n, 70 + n), expected = y;
      for (std::size_t k = 0; k < n; ++k) expected[k] += 0.37f * x[k];
      set->axpy(0.37f, x.data(), y.data(), n);
      EXPECT_EQ(y, expected) << set->name << " n=" << n;
    }
}

TEST(Kernels, SgdStepMatchesTheReferenceBitForBit) {
  const float r = 3.5f, lr = 0.01f, reg = 0.05f;
  for (const KernelSet* set : available())
    for (std::size_t n : kLengths) {
      auto w = random_vector(n, 11 + n), h = random_vector(n, 111 + n);
      auto we = w, he = h;
      const float e = r - reference_dot(we.data(), he.data(), n);
      const float shrink = 1.0f - lr * reg, step = lr * e;
      for (std::size_t k = 0; k < n; ++k) {
        const float wk = we[k], hk = he[k];
        we[k] = shrink * wk + step * hk;
        he[k] = shrink * hk + step * wk;
      }
      EXPECT_EQ(set->sgd_mf_step(w.data(), h.data(), n, r, lr, reg), e) << set->name << " n=" << n;
      EXPECT_EQ(w, we) << set->name << " n=" << n;
      EXPECT_EQ(h, he) << set->name << " n=" << n;
    }
}

TEST(Kernels, SgdStepReducesTheError) {
  auto w = random_vector(64, 5), h = random_vector(64, 6);
  const float first = strata::kernels::sgd_mf_step(w, h, 2.0f, 0.005f, 0.0f);
  float last = first;
  for (int i = 0; i < 50; ++i) last = strata::kernels::sgd_mf_step(w, h, 2.0f, 0.005f, 0.0f);
  EXPECT_LT(std::abs(last), 0.01f * std::abs(first));
}

// The three sums each in dot's order; the pair update lane by lane, and with
// sgd_mf_step's coefficients it is sgd_mf_step's update to the bit.
TEST(Kernels, DotAndNormsMatchTheReferenceBitForBit) {
  for (const KernelSet* set : available())
    for (std::size_t n : kLengths) {
      const auto w = random_vector(n, 3 + n), h = random_vector(n, 300 + n);
      float ww = -1, hh = -1;
      EXPECT_EQ(set->dot_and_norms(w.data(), h.data(), n, &ww, &hh), reference_dot(w.data(), h.data(), n))
          << set->name << " n=" << n;
      EXPECT_EQ(ww, reference_dot(w.data(), w.data(), n)) << set->name << " n=" << n;
      EXPECT_EQ(hh, reference_dot(h.data(), h.data(), n)) << set->name << " n=" << n;
    }
}

TEST(Kernels, PairUpdateMatchesTheReferenceAndTheSgdStep) {
  const float r = 3.5f, lr = 0.01f, reg = 0.05f;
  for (const KernelSet* set : available())
    for (std::size_t n : kLengths) {
      auto w = random_vector(n, 13 + n), h = random_vector(n, 113 + n);
      auto we = w, he = h;
      for (std::size_t k = 0; k < n; ++k) {
        const float wk = we[k], hk = he[k];
        we[k] = 0.9f * wk + 0.2f * hk;
        he[k] = 0.8f * hk - 0.3f * wk;
      }
      set->pair_update(w.data(), h.data(), n, 0.9f, 0.2f, 0.8f, -0.3f);
      EXPECT_EQ(w, we) << set->name << " n=" << n;
      EXPECT_EQ(h, he) << set->name << " n=" << n;
      auto ws = random_vector(n, 17 + n), hs = random_vector(n, 117 + n);
      auto wp = ws, hp = hs;
      const float e = set->sgd_mf_step(ws.data(), hs.data(), n, r, lr, reg);
      set->pair_update(wp.data(), hp.data(), n, 1.0f - lr * reg, lr * e, 1.0f - lr * reg, lr * e);
      EXPECT_EQ(ws, wp) << set->name << " n=" << n;
      EXPECT_EQ(hs, hp) << set->name << " n=" << n;
    }
}

}  // namespace
