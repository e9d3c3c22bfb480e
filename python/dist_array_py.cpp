// strata.DistArray: a real strata::DistArray (strata/dist_array.hpp) on an open
// strata.Runtime, made from a numpy array (copied in) or loaded from a checkpoint, and
// read back into numpy. Its loops (sum, scale) are parallel_for calls on the Runtime's
// threads, so they count as loop calls of the run (automatic checkpoints see them).
//
//   with strata.Runtime(threads=2) as rt:
//       x = strata.DistArray(rt, np.arange(12.0).reshape(3, 4), name="x")
//       x.scale(2.0); x.sum(); x.numpy(); x.save("ckpt/x")
//
// Under mpirun every rank passes the whole numpy array (a script computes the same on
// every rank; this is checked) and keeps its part; numpy() gathers the whole on every
// rank, local() is the rank's part.
#include "dist_array_py.hpp"

#include <optional>
#include <type_traits>
#include <variant>

#include <fmt/format.h>
#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include "array_kinds.hpp"
#include "runtime_py.hpp"
#include "strata/io/checkpoint.hpp"
#include "strata/loop/accumulator.hpp"
#include "strata/loop/parallel_for.hpp"

namespace py = pybind11;

namespace strata::python {

namespace {

// One of the kinds array_kinds.hpp handles, or nothing once its Runtime closed.
using AnyArray = std::variant<std::monostate, DistArray<float, 1>, DistArray<float, 2>, DistArray<float, 3>,
                              DistArray<double, 1>, DistArray<double, 2>, DistArray<double, 3>,
                              DistArray<std::int32_t, 1>, DistArray<std::int32_t, 2>, DistArray<std::int32_t, 3>,
                              DistArray<std::int64_t, 1>, DistArray<std::int64_t, 2>, DistArray<std::int64_t, 3>>;

template <class A>
constexpr bool is_array = !std::is_same_v<std::decay_t<A>, std::monostate>;

class PyDistArray final : public RuntimeBound {
 public:
  PyDistArray(std::shared_ptr<OpenRuntime> runtime, AnyArray array)
      : runtime_(std::move(runtime)), array_(std::move(array)) {}
  void end() override { array_ = std::monostate{}; }

  // f(DistArray<T, N>&); strata.Error once the array ended with its Runtime.
  template <class F>
  decltype(auto) visit(F&& f) {
    if (std::holds_alternative<std::monostate>(array_))
      throw Error("this strata.DistArray ended when its strata.Runtime closed");
    return std::visit(
        [&](auto& a) -> decltype(auto) {
          if constexpr (is_array<decltype(a)>) return f(a);
          else return f(std::get<DistArray<float, 1>>(array_));  // not reached: checked above
        },
        array_);
  }

 private:
  std::shared_ptr<OpenRuntime> runtime_;  // keeps the Runtime alive while the array is
  AnyArray array_;
};

std::shared_ptr<PyDistArray> adopt(const std::shared_ptr<OpenRuntime>& open, AnyArray array) {
  auto out = std::make_shared<PyDistArray>(open, std::move(array));
  open->adopt(out);
  return out;
}

std::shared_ptr<PyDistArray> from_numpy(const std::shared_ptr<OpenRuntime>& open, const py::array& a,
                                        const std::optional<std::string>& name) {
  const std::string what = fmt::format("strata.DistArray from a numpy array of {}", std::string(py::str(a.dtype())));
  Runtime& rt = open->rt();
  AnyArray array = with_kind<ShapeError>(numpy_tag(a), static_cast<std::uint64_t>(a.ndim()), what,
                                         [&]<class T, std::size_t N>(Kind<T, N>) -> AnyArray {
                                           const auto dense = py::array_t<T, py::array::c_style>::ensure(a);
                                           auto d = array_from_numpy<T, N>(rt, dense, what);
                                           if (name) d.set_name(*name);
                                           return d;
                                         });
  return adopt(open, std::move(array));
}

std::shared_ptr<PyDistArray> load(const std::shared_ptr<OpenRuntime>& open, const std::string& dir) {
  Runtime& rt = open->rt();
  const SavedKind kind = saved_kind(dir);
  AnyArray array = with_kind<CheckpointError>(kind.tag, kind.dims, dir, [&]<class T, std::size_t N>(Kind<T, N>) {
    return AnyArray(load_checkpoint<T, N>(rt, dir));
  });
  return adopt(open, std::move(array));
}

// Collective: the sum of the elements by a parallel loop with an accumulator (in
// double for floating-point elements, int64 for integers).
template <class T, std::size_t N>
py::object sum(DistArray<T, N>& a) {
  using S = std::conditional_t<std::is_floating_point_v<T>, double, std::int64_t>;
  Accumulator<S> total(a.runtime());
  {
    py::gil_scoped_release free_python;
    parallel_for(a, [&](const Index<N>&, T v) { total += static_cast<S>(v); });
  }
  return py::cast(total.take());
}

// Collective: every element times `factor`, in place, by a parallel loop.
template <class T, std::size_t N>
void scale(DistArray<T, N>& a, const py::object& factor) {
  if (std::is_integral_v<T> && !py::isinstance<py::int_>(factor))
    throw OptionError("strata.DistArray.scale: an integer array scales by an integer");
  const T f = factor.cast<T>();
  py::gil_scoped_release free_python;
  parallel_for(a, [f](const Index<N>&, T& v) { v = static_cast<T>(v * f); });
}

// This rank's part of a dense array, shaped as its box (local_box()).
template <class T, std::size_t N>
py::array local_part(const DistArray<T, N>& a) {
  if (a.is_sparse()) throw ShapeError("local() needs a dense array; use entries()");
  std::vector<py::ssize_t> shape;
  for (const auto& s : a.local_box()) shape.push_back(s.size());
  py::array_t<T> out(shape);
  std::copy(a.local_values().begin(), a.local_values().end(), out.mutable_data());
  return out;
}

template <class T, std::size_t N>
py::list local_box(const DistArray<T, N>& a) {
  py::list out;
  for (const auto& s : a.local_box()) {
    py::array_t<std::int64_t> indices(s.size());
    for (std::int64_t k = 0; k < s.size(); ++k) indices.mutable_at(k) = s.global(k);
    out.append(indices);
  }
  return out;
}

}  // namespace

void register_dist_array(py::module_& m) {
  py::class_<PyDistArray, std::shared_ptr<PyDistArray>>(
      m, "DistArray",
      "DistArray(runtime, array, name=None): a strata::DistArray on an open strata.Runtime holding a copy of a "
      "numpy array (float32/float64/int32/int64, 1 to 3 dimensions), each rank its part. It ends when the Runtime "
      "closes.")
      .def(py::init(&from_numpy), py::arg("runtime"), py::arg("array"), py::arg("name") = py::none())
      .def_static("load", &load, py::arg("runtime"), py::arg("dir"),
                  "load(runtime, dir) -> DistArray: the array saved in dir (save(), save_model, --save), on any "
                  "number of ranks.")
      .def_property_readonly("shape",
                             [](PyDistArray& p) {
                               return p.visit([](auto& a) { return py::tuple(py::cast(a.shape())); });
                             })
      .def_property_readonly("dtype",
                             [](PyDistArray& p) {
                               return p.visit([](auto& a) {
                                 return py::dtype::of<typename std::decay_t<decltype(a)>::value_type>();
                               });
                             })
      .def_property_readonly("name", [](PyDistArray& p) { return p.visit([](auto& a) { return a.name(); }); })
      .def_property_readonly("sparse", [](PyDistArray& p) { return p.visit([](auto& a) { return a.is_sparse(); }); })
      .def_property_readonly(
          "partition", [](PyDistArray& p) { return p.visit([](auto& a) { return a.distribution().describe(); }); })
      .def(
          "numpy", [](PyDistArray& p) { return p.visit([](auto& a) { return dense_numpy(a); }); },
          "The whole array as numpy, on every rank (collective). ShapeError for a sparse array: use entries().")
      .def(
          "entries", [](PyDistArray& p) { return p.visit([](auto& a) { return entries_numpy(a); }); },
          "(indices: int64 [count, dims], values: [count]): every stored element, sorted by index, on every rank "
          "(collective).")
      .def(
          "local", [](PyDistArray& p) { return p.visit([](auto& a) { return local_part(a); }); },
          "This rank's part of a dense array as numpy, shaped as its box (local_box()).")
      .def(
          "local_box", [](PyDistArray& p) { return p.visit([](auto& a) { return local_box(a); }); },
          "The indices this rank holds, one int64 array per dimension.")
      .def(
          "sum", [](PyDistArray& p) { return p.visit([](auto& a) { return sum(a); }); },
          "The sum of the elements, by a parallel loop on the Runtime's threads (collective).")
      .def(
          "scale", [](PyDistArray& p, const py::object& f) { p.visit([&](auto& a) { scale(a, f); }); },
          py::arg("factor"), "Multiplies every element by factor in place, by a parallel loop (collective).")
      .def(
          "save", [](PyDistArray& p, const std::string& dir) { p.visit([&](auto& a) { save_checkpoint(a, dir); }); },
          py::arg("dir"),
          "Writes the array as a checkpoint directory (the format of --save; strata.load_model reads its parent) "
          "(collective).");
}

}  // namespace strata::python
