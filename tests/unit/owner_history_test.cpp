// OwnerHistory (ps/owner_history.hpp): an owner's values as of an earlier clock.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "ps/owner_history.hpp"

namespace strata::ps {
namespace {

// An owner of 4 units of 2 values each applies clocks 0..3; unit u gets +10^c in
// clock c when (u + c) is even. Rolling back gives each unit as of every clock.
TEST(OwnerHistory, RollsUnitsBackToTheClockAskedFor) {
  constexpr int units = 4, len = 2, clocks = 4;
  std::vector<double> values(units * len, 0.0);
  std::vector<std::vector<double>> as_of;  // as_of[c + 1]: the values after clock c
  as_of.push_back(values);
  OwnerHistory<double> h(len);
  for (int c = 0; c < clocks; ++c) {
    h.begin_clock(c);
    for (int u = 0; u < units; ++u) {
      if ((u + c) % 2 != 0) continue;
      h.note(u, values.data() + u * len);
      for (int k = 0; k < len; ++k) values[static_cast<std::size_t>(u * len + k)] += std::pow(10.0, c) * (k + 1);
    }
    as_of.push_back(values);
  }
  for (int version = -1; version < clocks; ++version)
    for (int u = 0; u < units; ++u) {
      std::vector<double> row(values.begin() + u * len, values.begin() + (u + 1) * len);
      h.roll_back(u, version, row.data());
      const auto& want = as_of[static_cast<std::size_t>(version + 1)];
      EXPECT_EQ(row, std::vector<double>(want.begin() + u * len, want.begin() + (u + 1) * len))
          << "unit " << u << " as of clock " << version;
    }
}

TEST(OwnerHistory, ForgetsOldClocksAndLeavesLaterOnesUsable) {
  std::vector<int> v{0};
  OwnerHistory<int> h;
  for (int c = 0; c < 5; ++c) {
    h.begin_clock(c);
    h.note(0, v.data());
    v[0] += 1;
  }
  EXPECT_EQ(h.oldest(9), 0);
  h.forget_before(3);
  EXPECT_EQ(h.oldest(9), 3);
  int x = v[0];
  h.roll_back(0, 2, &x);  // clocks 3 and 4 undone
  EXPECT_EQ(x, 3);
  x = v[0];
  h.roll_back(0, 4, &x);  // nothing after clock 4
  EXPECT_EQ(x, 5);
  h.clear();
  EXPECT_EQ(h.oldest(9), 9);
}

}  // namespace
}  // namespace strata::ps
