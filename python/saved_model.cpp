#include "saved_model.hpp"

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <pybind11/numpy.h>

#include "strata/error.hpp"
#include "strata/io/checkpoint.hpp"
#include "strata/io/checkpoint_format.hpp"
#include "strata/io/files.hpp"

namespace py = pybind11;

namespace strata::python {

namespace {

template <class T, std::size_t N>
py::array load_array(Runtime& rt, const std::filesystem::path& dir) {
  const auto a = load_checkpoint<T, N>(rt, dir);
  std::vector<py::ssize_t> shape;
  for (std::size_t d = 0; d < N; ++d) shape.push_back(a.extent(static_cast<int>(d)));
  std::vector<T> values = a.gather();
  py::array_t<T> out(shape);
  std::copy(values.begin(), values.end(), out.mutable_data());
  return out;
}

template <class T>
py::array load_typed(Runtime& rt, const std::filesystem::path& dir, std::uint64_t dims) {
  if (dims == 1) return load_array<T, 1>(rt, dir);
  if (dims == 2) return load_array<T, 2>(rt, dir);
  throw CheckpointError(fmt::format("{}: {} dimensions; a saved model has 1 or 2", dir.string(), dims));
}

}  // namespace

py::dict load_saved_model(Runtime& rt, const std::filesystem::path& dir) {
  std::vector<std::filesystem::path> arrays;
  for (const auto& entry : std::filesystem::directory_iterator(dir))
    if (entry.is_directory() && std::filesystem::exists(entry.path() / detail::kManifestName))
      arrays.push_back(entry.path());
  std::sort(arrays.begin(), arrays.end());  // the same order on every rank: loads are collective
  py::dict model;
  for (const auto& path : arrays) {
    const auto file = path / detail::kManifestName;
    // A manifest is a few lines; 1 MiB bounds what a crafted one can make us read.
    const Bytes text = detail::read_file(file, 1 << 20, detail::Links::refuse);
    const std::string_view chars(reinterpret_cast<const char*>(text.data()), text.size());
    const detail::CheckpointManifest m = detail::parse_manifest(chars, file.string());
    py::array a;
    if (m.type_tag == "f32") a = load_typed<float>(rt, path, m.dims);
    else if (m.type_tag == "f64") a = load_typed<double>(rt, path, m.dims);
    else if (m.type_tag == "i32") a = load_typed<std::int32_t>(rt, path, m.dims);
    else if (m.type_tag == "i64") a = load_typed<std::int64_t>(rt, path, m.dims);
    else
      throw CheckpointError(fmt::format("{}: element type {} is not one a saved model has", file.string(), m.type_tag));
    model[py::str(path.filename().string())] = a;
  }
  return model;
}

}  // namespace strata::python
