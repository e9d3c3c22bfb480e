// Checkpoints written with one rank count and loaded with another. ctest runs
//   mpirun -np A checkpoint_cross_ranks save DIR     and then
//   mpirun -np B checkpoint_cross_ranks verify DIR
// Both modes build the same arrays from formulas and fixed seeds; verify loads the
// checkpoints and exits non-zero if any differs from what it expects.
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>

#include "strata/io/checkpoint.hpp"

namespace {
using namespace strata;
namespace fs = std::filesystem;

using Row = std::array<float, 4>;

// Skewed explicit bounds for the writer's rank count: they cannot fit another count.
std::vector<std::int64_t> skewed_bounds(std::int64_t extent, int ranks) {
  std::vector<std::int64_t> b{0};
  for (int r = 1; r < ranks; ++r) b.push_back(r);
  b.push_back(extent);
  return b;
}

std::vector<Entry<float, 2>> sparse2(const Runtime& rt) {
  std::vector<Entry<float, 2>> out;
  for (std::int64_t k = rt.rank(); k < 200; k += rt.size())
    out.push_back({{(k * 13) % 50, (k * 7) % 31}, 0.25f * float(k)});
  return out;
}

std::vector<Entry<std::int64_t, 4>> sparse4(const Runtime& rt) {
  std::vector<Entry<std::int64_t, 4>> out;
  for (std::int64_t k = rt.rank(); k < 60; k += rt.size())
    out.push_back({{k % 3, k % 4, k % 5, k / 12}, k * k});
  return out;
}

struct Arrays {
  DistArray<float, 2> dense_f32;
  DistArray<std::int64_t, 3> dense_i64;
  DistArray<Row, 2> dense_rows;
  DistArray<double, 1> dense_bounds;
  DistArray<float, 2> sparse_f32;
  DistArray<std::int64_t, 4> sparse_i64;

  explicit Arrays(Runtime& rt, int writer_ranks)
      : dense_f32(DistArray<float, 2>::randn(rt, {41, 7}, 1.0, 0.0, Partition::range(0), 1)),
        dense_i64(DistArray<std::int64_t, 3>::generate(
            rt, {9, 5, 4}, [](const Index<3>& i) { return i[0] * 1000 + i[1] * 10 - i[2]; },
            Partition::hash(1))),
        dense_rows(DistArray<Row, 2>::rand(rt, {12, 10}, 0.0, 1.0, Partition::block2d(0, 1), 2)),
        dense_bounds(DistArray<double, 1>::generate(
            rt, {29}, [](const Index<1>& i) { return 0.5 * double(i[0]); },
            Partition::range(0, writer_ranks == rt.size() ? skewed_bounds(29, rt.size())
                                                          : std::vector<std::int64_t>{}))),
        sparse_f32(DistArray<float, 2>::sparse(rt, {50, 31}, sparse2(rt), Duplicates::error,
                                               Partition::range(1))),
        sparse_i64(DistArray<std::int64_t, 4>::sparse(rt, {3, 4, 5, 5}, sparse4(rt),
                                                      Duplicates::first, Partition::hash(2))) {}
};

int failures = 0;

void check(const Runtime& rt, bool ok, const std::string& what) {
  if (ok) return;
  ++failures;
  std::fprintf(stderr, "[rank %d] MISMATCH: %s\n", rt.rank(), what.c_str());
}

template <class A>
bool same_entries(const A& a, const A& b) {
  const auto x = a.gather_entries(), y = b.gather_entries();
  if (x.size() != y.size()) return false;
  for (std::size_t k = 0; k < x.size(); ++k)
    if (x[k].index != y[k].index || std::memcmp(&x[k].value, &y[k].value, sizeof(x[k].value)) != 0)
      return false;
  return true;
}

void save(Runtime& rt, const fs::path& dir) {
  const Arrays a(rt, rt.size());
  save_checkpoint(a.dense_f32, dir / "dense_f32");
  save_checkpoint(a.dense_i64, dir / "dense_i64");
  save_checkpoint(a.dense_rows, dir / "dense_rows");
  save_checkpoint(a.dense_bounds, dir / "dense_bounds");
  save_checkpoint(a.sparse_f32, dir / "sparse_f32");
  save_checkpoint(a.sparse_i64, dir / "sparse_i64");
}

void verify(Runtime& rt, const fs::path& dir) {
  const Arrays want(rt, -1);
  const auto f32 = load_checkpoint<float, 2>(rt, dir / "dense_f32");
  check(rt, f32.gather() == want.dense_f32.gather(), "dense_f32");
  check(rt, f32.partition() == Partition::range(0), "dense_f32 partition");
  const auto i64 = load_checkpoint<std::int64_t, 3>(rt, dir / "dense_i64");
  check(rt, i64.gather() == want.dense_i64.gather(), "dense_i64");
  check(rt, i64.partition() == Partition::hash(1), "dense_i64 partition");
  const auto rows = load_checkpoint<Row, 2>(rt, dir / "dense_rows");
  check(rt, rows.gather() == want.dense_rows.gather(), "dense_rows");
  check(rt, rows.distribution() == want.dense_rows.distribution(), "dense_rows distribution");
  const auto bounds = load_checkpoint<double, 1>(rt, dir / "dense_bounds");
  check(rt, bounds.gather() == want.dense_bounds.gather(), "dense_bounds");
  check(rt, bounds.partition().kind() == Partition::Kind::range && bounds.partition().dim() == 0,
        "dense_bounds partition");
  const auto rows_hashed = load_checkpoint<Row, 2>(rt, dir / "dense_rows", Partition::hash(1));
  check(rt, rows_hashed.gather() == want.dense_rows.gather(), "dense_rows into hash(1)");
  const auto sf = load_checkpoint<float, 2>(rt, dir / "sparse_f32");
  check(rt,
        sf.is_sparse() && sf.nnz() == want.sparse_f32.nnz() && same_entries(sf, want.sparse_f32),
        "sparse_f32");
  const auto si = load_checkpoint<std::int64_t, 4>(rt, dir / "sparse_i64");
  check(rt,
        si.is_sparse() && si.nnz() == want.sparse_i64.nnz() && same_entries(si, want.sparse_i64),
        "sparse_i64");
  check(rt, si.partition() == Partition::hash(2), "sparse_i64 partition");
  for (const auto& k : si.local_keys())
    check(rt, si.is_local(k), "sparse_i64 key on the wrong rank");
}

}  // namespace

int main(int argc, char** argv) {
  strata::RuntimeOptions defaults;
  defaults.timeout_seconds = 30;
  defaults.threads = 2;
  defaults.log_level = strata::LogLevel::warn;
  strata::Runtime rt(argc, argv, defaults);
  if (argc != 3 || (std::strcmp(argv[1], "save") != 0 && std::strcmp(argv[1], "verify") != 0)) {
    std::fprintf(stderr, "usage: %s save|verify DIR\n", argv[0]);
    return 2;
  }
  try {
    if (std::strcmp(argv[1], "save") == 0)
      save(rt, argv[2]);
    else
      verify(rt, argv[2]);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "[rank %d] error: %s\n", rt.rank(), e.what());
    ++failures;
  }
  const int total = rt.comm().allreduce(failures, ReduceOp::sum);
  if (rt.rank() == 0)
    std::printf("%s %s with %d ranks: %s\n", argv[1], argv[2], rt.size(), total ? "FAILED" : "ok");
  return total ? 1 : 0;
}
