// Deterministic random numbers whose values never depend on the number of ranks
// or threads: a value is a pure function of (seed, stream, counter), so the value
// of element i is the same whichever worker computes it.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <numbers>

namespace strata {

/// SplitMix64's output function: a bijective 64-bit mixer that passes BigCrush
/// when applied to a Weyl sequence.
constexpr std::uint64_t mix64(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

/// Counter-based generator: bits(c) is the c-th output of stream `stream` of `seed`.
class CounterRng {
 public:
  constexpr explicit CounterRng(std::uint64_t seed, std::uint64_t stream = 0)
      : key_(mix64(mix64(seed + 0x632BE59BD9B4E019ULL) ^ (stream * 0x9E3779B97F4A7C15ULL + 1))) {}

  constexpr std::uint64_t bits(std::uint64_t counter) const {
    return mix64(key_ + (counter + 1) * 0x9E3779B97F4A7C15ULL);
  }
  /// Uniform in the open interval (0, 1).
  constexpr double uniform(std::uint64_t counter) const {
    return (static_cast<double>(bits(counter) >> 11) + 0.5) * 0x1.0p-53;
  }
  /// Standard normal by Box-Muller over counters 2c and 2c+1.
  double normal(std::uint64_t counter) const {
    const double u1 = uniform(2 * counter), u2 = uniform(2 * counter + 1);
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
  }
  /// Uniform integer in [0, n) (n > 0), by Lemire's multiply-shift.
  std::uint64_t below(std::uint64_t counter, std::uint64_t n) const {
    __extension__ using u128 = unsigned __int128;
    return static_cast<std::uint64_t>((static_cast<u128>(bits(counter)) * n) >> 64);
  }

 private:
  std::uint64_t key_;
};

/// A sequential engine over a CounterRng, usable with <random> and std::shuffle.
/// Driver code on every rank that uses the same stream sees the same numbers.
class RandomStream {
 public:
  using result_type = std::uint64_t;
  explicit RandomStream(std::uint64_t seed, std::uint64_t stream = 0) : rng_(seed, stream) {}
  static constexpr result_type min() { return 0; }
  static constexpr result_type max() { return std::numeric_limits<result_type>::max(); }
  result_type operator()() { return rng_.bits(counter_++); }
  double uniform() { return rng_.uniform(counter_++); }
  double normal() { return rng_.normal(counter_++); }
  std::uint64_t below(std::uint64_t n) { return rng_.below(counter_++, n); }
  std::uint64_t position() const { return counter_; }

 private:
  CounterRng rng_;
  std::uint64_t counter_ = 0;
};

}  // namespace strata
