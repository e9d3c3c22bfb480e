// three_loops.cpp's loops over std::vector, with <fmt/format.h>: the plain C++ program
// of the same size scripts/compile_time.sh compares it with.
#include <cmath>
#include <cstddef>
#include <vector>

#include <fmt/format.h>

int main() {
  std::vector<float> R(100 * 100), W(800), H(800);
  std::vector<double> v(1000);
  for (int u = 0; u < 100; ++u)
    for (int i = 0; i < 100; ++i) {
      const float r = R[static_cast<std::size_t>(u * 100 + i)];
      float* w = &W[static_cast<std::size_t>(u * 8)];
      float* h = &H[static_cast<std::size_t>(i * 8)];
      float e = r;
      for (int k = 0; k < 8; ++k) e -= w[k] * h[k];
      for (int k = 0; k < 8; ++k) {
        const float wk = w[k];
        w[k] += 0.01f * (e * h[k]);
        h[k] += 0.01f * (e * wk);
      }
    }
  for (auto& x : v) x = std::sqrt(x + 1.0);
  for (std::size_t i = 0; i < v.size(); ++i) v[i] += 1.0;
  fmt::print("{}\n", v[0]);
}
