// A user program with three small loop bodies (an mf step over a sparse 2-D array, a
// 1-D map, an element update): what scripts/compile_time.sh compiles to measure what
// including Strata costs a program. plain_loops.cpp is the same loops over std::vector.
#include <cmath>

#include "strata/strata.hpp"

using namespace strata;

int main(int argc, char** argv) {
  Runtime rt(argc, argv);
  auto R = DistArray<float, 2>::sparse(rt, {100, 100}, {{{1, 2}, 3.0f}});
  auto W = DistArray<float, 2>::randn(rt, {100, 8}, 0.1);
  auto H = DistArray<float, 2>::randn(rt, {100, 8}, 0.1);
  auto v = DistArray<double, 1>::zeros(rt, {1000});
  parallel_for(R, [&](const Index<2>& ij, float r) {
    auto w = W.row(ij[0]);
    auto h = H.row(ij[1]);
    float e = r;
    for (int k = 0; k < 8; ++k) e -= w[k] * h[k];
    for (int k = 0; k < 8; ++k) {
      const float wk = w[k];
      w[k] += 0.01f * (e * h[k]);
      h[k] += 0.01f * (e * wk);
    }
  });
  parallel_for(v, [&](const Index<1>&, double& x) { x = std::sqrt(x + 1.0); });
  parallel_for(v, [&](const Index<1>& i, const double&) { v[i[0]] += 1.0; });
  return 0;
}
