// The DistArrays the Python module handles (elements f32, f64, i32, i64 of 1 to 3
// dimensions: what the apps save and checkpoint) and their numpy forms.
#pragma once

#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>  // in every file of the module: its casters must agree

#include "strata/dist_array.hpp"
#include "strata/error.hpp"

namespace strata::python {

/// One kind of DistArray: element type T, N dimensions.
template <class T, std::size_t N>
struct Kind {
  using type = T;
  static constexpr std::size_t dims = N;
};

/// f(Kind<T, N>{}) for the element type a checkpoint type tag names ("f32", "f64",
/// "i32", "i64") and N = dims in 1..3; otherwise E naming `where`.
template <class E, class F>
decltype(auto) with_kind(const std::string& tag, std::uint64_t dims, const std::string& where, F&& f) {
  auto by_dims = [&]<class T>() -> decltype(auto) {
    if (dims == 1) return f(Kind<T, 1>{});
    if (dims == 2) return f(Kind<T, 2>{});
    if (dims == 3) return f(Kind<T, 3>{});
    throw E(fmt::format("{}: {} dimensions; strata's numpy arrays have 1 to 3", where, dims));
  };
  if (tag == "f32") return by_dims.template operator()<float>();
  if (tag == "f64") return by_dims.template operator()<double>();
  if (tag == "i32") return by_dims.template operator()<std::int32_t>();
  if (tag == "i64") return by_dims.template operator()<std::int64_t>();
  throw E(fmt::format("{}: element type {}; strata's numpy arrays hold float32, float64, int32 or int64 "
                      "(f32, f64, i32, i64)",
                      where, tag));
}

/// The checkpoint type tag of a numpy array's dtype, "" for one strata does not hold.
std::string numpy_tag(const pybind11::array& a);

/// The element type and dimensions a saved array's manifest (DIR/manifest.txt) names,
/// read on this rank. CheckpointError naming the file when it is missing or damaged.
struct SavedKind {
  std::string tag;
  std::uint64_t dims = 0;
};
SavedKind saved_kind(const std::filesystem::path& dir);

/// Collective: every rank passed the same bytes (an array's shape and values, names),
/// as a script run on every rank under mpirun does; else OptionError on every rank
/// naming `what` and the first rank that differs. Nothing is read in one process.
void check_same_on_every_rank(Runtime& rt, std::span<const std::byte> head, std::span<const std::byte> body,
                              const std::string& what);

/// Collective: a dense DistArray holding a C-contiguous numpy array of T (copied in:
/// each rank keeps its part). Every rank passes the whole array.
template <class T, std::size_t N>
DistArray<T, N> array_from_numpy(Runtime& rt, const pybind11::array_t<T, pybind11::array::c_style>& a,
                                 const std::string& what) {
  Shape<N> shape{};
  for (std::size_t d = 0; d < N; ++d) shape[d] = a.shape(static_cast<pybind11::ssize_t>(d));
  const T* data = a.data();
  check_same_on_every_rank(rt, std::as_bytes(std::span(shape)),
                           std::as_bytes(std::span(data, static_cast<std::size_t>(a.size()))), what);
  return DistArray<T, N>::generate(rt, shape, [&](const Index<N>& i) {
    std::int64_t off = 0;
    for (std::size_t d = 0; d < N; ++d) off = off * shape[d] + i[d];
    return data[off];
  });
}

/// Collective: the whole dense array as numpy, on every rank (ShapeError for a sparse one).
template <class T, std::size_t N>
pybind11::array dense_numpy(const DistArray<T, N>& a) {
  std::vector<pybind11::ssize_t> shape(a.shape().begin(), a.shape().end());
  const std::vector<T> values = a.gather();
  pybind11::array_t<T> out(shape);
  std::copy(values.begin(), values.end(), out.mutable_data());
  return out;
}

/// Collective: every stored element as (indices: int64 [count, N], values: [count]),
/// sorted by index, on every rank.
template <class T, std::size_t N>
pybind11::tuple entries_numpy(const DistArray<T, N>& a) {
  const auto entries = a.gather_entries();
  const auto count = static_cast<pybind11::ssize_t>(entries.size());
  pybind11::array_t<std::int64_t> indices({count, static_cast<pybind11::ssize_t>(N)});
  pybind11::array_t<T> values(count);
  std::int64_t* ix = indices.mutable_data();
  T* v = values.mutable_data();
  for (const auto& e : entries) {
    ix = std::copy(e.index.begin(), e.index.end(), ix);
    *v++ = e.value;
  }
  return pybind11::make_tuple(indices, values);
}

/// Collective: a saved or checkpointed array as the model dicts hold it: a dense one as
/// a numpy array, a sparse one (lda's token topics) as {"shape", "indices", "values"}.
template <class T, std::size_t N>
pybind11::object model_value(const DistArray<T, N>& a) {
  if (!a.is_sparse()) return dense_numpy(a);
  const pybind11::tuple e = entries_numpy(a);
  pybind11::dict out;
  pybind11::tuple shape(N);
  for (std::size_t d = 0; d < N; ++d) shape[d] = a.shape()[d];
  out["shape"] = shape;
  out["indices"] = e[0];
  out["values"] = e[1];
  return out;
}

}  // namespace strata::python
