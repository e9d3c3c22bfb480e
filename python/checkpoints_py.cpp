#include "checkpoints_py.hpp"

#include <algorithm>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <pybind11/numpy.h>

#include "array_kinds.hpp"
#include "runtime_py.hpp"
#include "strata/error.hpp"
#include "strata/io/checkpoint.hpp"
#include "strata/io/checkpoint_format.hpp"
#include "strata/recovery.hpp"

namespace py = pybind11;
namespace fs = std::filesystem;

namespace strata::python {

namespace {

// Collective: the array saved in `dir` as the model dicts hold it.
py::object load_value(Runtime& rt, const fs::path& dir, const std::string& tag, std::uint64_t dims) {
  return with_kind<CheckpointError>(tag, dims, dir.string(), [&]<class T, std::size_t N>(Kind<T, N>) {
    return model_value(load_checkpoint<T, N>(rt, dir));
  });
}

// A name save_model writes as a directory of `dir`: one plain path component.
void check_array_name(const std::string& name) {
  const bool plain = !name.empty() && name != "." && name != ".." &&
                     std::none_of(name.begin(), name.end(), [](char c) {
                       return c == '/' || c == '\\' || static_cast<unsigned char>(c) < 0x20 || c == 0x7f;
                     });
  if (!plain)
    throw OptionError(fmt::format("strata.save_model: array name '{}' is not a plain file name (it names the "
                                  "array's directory)",
                                  printable(name, 80)));
}

void save_model(const std::string& dir, const py::dict& model) {
  if (model.empty()) throw OptionError("strata.save_model: no arrays to save");
  std::vector<std::pair<std::string, py::array>> arrays;
  for (const auto& [key, value] : model) {
    if (!py::isinstance<py::str>(key))
      throw OptionError(fmt::format("strata.save_model: array names are strings, not {}",
                                    std::string(py::str(py::type::of(key).attr("__name__")))));
    arrays.emplace_back(key.cast<std::string>(), py::array::ensure(value));
    check_array_name(arrays.back().first);
    if (!arrays.back().second)
      throw OptionError(fmt::format("strata.save_model: '{}' is not an array", arrays.back().first));
  }
  std::sort(arrays.begin(), arrays.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  CallRuntime call({}, Options::any);
  Runtime& rt = call.rt();
  std::string names;
  for (const auto& [name, a] : arrays) names += name + '\n';
  check_same_on_every_rank(rt, {}, std::as_bytes(std::span(names.data(), names.size())), "strata.save_model's names");
  for (const auto& [name, a] : arrays) {
    const std::string what = fmt::format("strata.save_model: '{}' ({})", name, std::string(py::str(a.dtype())));
    with_kind<ShapeError>(numpy_tag(a), static_cast<std::uint64_t>(a.ndim()), what,
                          [&]<class T, std::size_t N>(Kind<T, N>) {
                            const auto dense = py::array_t<T, py::array::c_style>::ensure(a);
                            save_checkpoint(array_from_numpy<T, N>(rt, dense, what), fs::path(dir) / name);
                          });
  }
}

py::dict load_checkpoint_arrays(const std::string& dir) {
  CallRuntime call({}, Options::any);
  const recovery::RunCheckpoint c = recovery::newest_checkpoint(call.rt(), dir);
  py::dict out;
  for (const auto& a : c.arrays) {
    // A name two arrays share: the later one goes by its directory (array-<id>).
    const std::string key = out.contains(a.name) ? a.dir.filename().string() : a.name;
    out[py::str(key)] = load_value(call.rt(), a.dir, a.type_tag, a.shape.size());
  }
  return out;
}

}  // namespace

py::dict load_saved_model(Runtime& rt, const fs::path& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) throw IoError(fmt::format("{}: no such directory", dir.string()));
  std::vector<fs::path> arrays;
  for (const auto& entry : fs::directory_iterator(dir))
    if (entry.is_directory() && fs::exists(entry.path() / detail::kManifestName)) arrays.push_back(entry.path());
  if (arrays.empty())
    throw CheckpointError(
        fmt::format("{}: holds no saved array (a directory with {} in it)", dir.string(), detail::kManifestName));
  std::sort(arrays.begin(), arrays.end());  // the same order on every rank: loads are collective
  py::dict model;
  for (const auto& path : arrays) {
    const SavedKind kind = saved_kind(path);
    model[py::str(path.filename().string())] = load_value(rt, path, kind.tag, kind.dims);
  }
  return model;
}

void register_checkpoints(py::module_& m) {
  m.def(
      "load_model",
      [](const std::string& dir) {
        CallRuntime call({}, Options::any);
        return load_saved_model(call.rt(), dir);
      },
      py::arg("dir"),
      "load_model(dir) -> {name: numpy array}: a model saved by `--save DIR`, strata.train(save=DIR) or "
      "strata.save_model (one checkpoint directory per array), whole on every rank. A sparse array comes as "
      "{'shape', 'indices', 'values'}.");
  m.def("save_model", &save_model, py::arg("dir"), py::arg("model"),
        "save_model(dir, {name: numpy array}): writes each array (float32/float64/int32/int64, 1 to 3 dimensions) "
        "as a checkpoint directory dir/name, the format of `--save DIR`, readable by strata.load_model and "
        "strata::load_checkpoint. Collective under mpirun: every rank passes the same arrays.");
  m.def("load_checkpoint", &load_checkpoint_arrays, py::arg("dir"),
        "load_checkpoint(dir) -> {name: numpy array}: the arrays of the newest automatic checkpoint in dir (a "
        "run's checkpoint_dir=/--checkpoint-dir), verified as resuming verifies it, whole on every rank.");
}

}  // namespace strata::python
