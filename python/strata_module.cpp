// The Python module `strata` (docs/using.md): train and explain the apps with the
// options of the `strata` command, which its own parser reads (tools/strata), and get
// the per-pass metrics and the model back as numpy arrays. Strata's errors become
// exceptions of the same names, derived from strata.Error, with the command's messages.
// The Runtimes calls run on are runtime_py.cpp's (strata.Runtime); strata.DistArray is
// dist_array_py.cpp's; models and checkpoints as numpy are checkpoints_py.cpp's.
//
//   r = strata.train("mf", synthetic="users=2000,items=500,ratings=100000", rank=16, epochs=5, threads=2)
//   r["metrics"]["test_rmse"][-1], r["model"]["W"].shape
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "checkpoints_py.hpp"
#include "command_line.hpp"
#include "dist_array_py.hpp"
#include "runtime_py.hpp"
#include "strata/error.hpp"
#include "strata/runtime.hpp"
#include "training.hpp"

namespace py = pybind11;
using strata::cli::CommandLine;
using strata::python::CallRuntime;
using strata::python::Options;

namespace {

// Keyword arguments as the command's words: "--name value", with "_" in a name read as
// "-" (top_words= is --top-words); True alone is a flag (serial=True), False and None
// leave the option out; a dict (synthetic={"users": 100}) is written key=value,...
std::vector<std::string> command_words(const std::string& verb, const std::string& app, const py::kwargs& kw) {
  std::vector<std::string> words{verb, app};
  for (const auto& [key, value] : kw) {
    std::string name = py::str(key);
    for (char& c : name)
      if (c == '_') c = '-';
    if (value.is_none() || (py::isinstance<py::bool_>(value) && !value.cast<bool>())) continue;
    words.push_back("--" + name);
    if (py::isinstance<py::bool_>(value)) continue;
    if (py::isinstance<py::dict>(value)) {
      std::string spec;
      // Appended piece by piece: "," + std::string(...) trips GCC 12's -Wstringop-overflow
      // false positive at -O3 with LTO (pybind11's Release flags).
      for (const auto& [k, v] : value.cast<py::dict>()) {
        if (!spec.empty()) spec += ',';
        spec.append(py::str(k)).append("=").append(py::str(v));
      }
      words.push_back(spec);
    } else {
      words.push_back(py::str(value));
    }
  }
  return words;
}

// A directory for the model when the caller asked for none: named by rank 0, the same
// on every rank (saving is collective), removed by rank 0 when done.
struct ScratchDir {
  std::filesystem::path path;
  bool lead;
  explicit ScratchDir(strata::Runtime& rt) : lead(rt.rank() == 0) {
    std::string name;
    if (lead) name = fmt::format("strata-py-{}-{:x}", getpid(), std::random_device{}());
    std::vector<char> chars(name.begin(), name.end());
    rt.comm().broadcast_vector(chars, 0);
    path = std::filesystem::temp_directory_path() / std::string(chars.begin(), chars.end());
  }
  ~ScratchDir() {
    std::error_code ec;
    if (lead) std::filesystem::remove_all(path, ec);
  }
};

py::dict metrics_arrays(const std::vector<strata::apps::PassReport>& passes) {
  const auto n = static_cast<py::ssize_t>(passes.size());
  py::array_t<std::int64_t> pass(n), items(n);
  py::array_t<double> seconds(n);
  py::dict out;
  for (py::ssize_t i = 0; i < n; ++i) {
    pass.mutable_at(i) = passes[static_cast<std::size_t>(i)].pass;
    items.mutable_at(i) = passes[static_cast<std::size_t>(i)].items;
    seconds.mutable_at(i) = passes[static_cast<std::size_t>(i)].seconds;
  }
  out["pass"] = pass;
  out["seconds"] = seconds;
  out["items"] = items;
  if (passes.empty()) return out;
  for (std::size_t m = 0; m < passes.front().metrics.size(); ++m) {
    py::array_t<double> values(n);
    for (py::ssize_t i = 0; i < n; ++i) values.mutable_at(i) = passes[static_cast<std::size_t>(i)].metrics.at(m).value;
    out[py::str(passes.front().metrics[m].name)] = values;
  }
  return out;
}

py::dict train(const std::string& app, const py::kwargs& kw) {
  CommandLine cl = strata::cli::parse_command_line(command_words("train", app, kw));
  strata::cli::TrainCommand& t = cl.train;
  if (!t.metrics_path.empty() || !t.plot_path.empty())
    throw strata::OptionError("--metrics and --plot are the command's options: strata.train returns the metrics");
  CallRuntime call(strata::cli::runtime_arguments(cl), Options::required);
  // The model comes back through the app's own --save: into the caller's directory,
  // else into a scratch one.
  ScratchDir scratch(call.rt());
  if (t.config.save_dir.empty()) t.config.save_dir = scratch.path.string();
  std::vector<std::string> info;
  strata::cli::TrainingResult result;
  {
    py::gil_scoped_release free_python;  // Strata's threads train; Python's threads may go on
    result = strata::cli::run_training(call.rt(), t, [&](const std::string& line) { info.push_back(line); },
                                       [](const strata::apps::PassReport&) {});
  }
  if (!result.diverged.empty()) throw strata::Error(result.diverged);
  py::dict out;
  out["app"] = app;
  out["rank"] = call.rt().rank();
  out["ranks"] = call.rt().size();
  out["threads"] = call.rt().threads();
  out["info"] = info;
  out["metrics"] = metrics_arrays(result.passes);
  out["model"] = strata::python::load_saved_model(call.rt(), t.config.save_dir);
  call.rt().comm().barrier();  // every rank has read the model before the scratch directory goes
  return out;
}

// What the app's explain prints to stdout (rank 0), captured as text.
std::string explain(const std::string& app, const py::kwargs& kw) {
  CommandLine cl = strata::cli::parse_command_line(command_words("explain", app, kw));
  CallRuntime call(strata::cli::runtime_arguments(cl), Options::required);
  std::fflush(stdout);
  std::FILE* capture = std::tmpfile();
  if (!capture) throw strata::IoError("strata.explain: cannot create a temporary file");
  const int saved = dup(fileno(stdout));
  dup2(fileno(capture), fileno(stdout));
  auto restore = [&] {
    std::fflush(stdout);
    dup2(saved, fileno(stdout));
    close(saved);
  };
  try {
    strata::apps::find_app(cl.train.app->name).explain(call.rt(), cl.train.config);
  } catch (...) {
    restore();
    std::fclose(capture);
    throw;
  }
  restore();
  std::string text;
  std::rewind(capture);
  char buffer[4096];
  for (std::size_t n; (n = std::fread(buffer, 1, sizeof buffer, capture)) > 0;) text.append(buffer, n);
  std::fclose(capture);
  return text;
}

}  // namespace

PYBIND11_MODULE(strata, m) {
  m.doc() =
      "Strata: train its apps (mf, slr, lda) with the strata command's options, results as numpy arrays; models "
      "and checkpoints to and from numpy; DistArrays on a strata.Runtime.";
  static py::exception<strata::Error> error(m, "Error", PyExc_RuntimeError);
  // Subclasses first: a translator catches the first type that matches.
  static py::exception<strata::OptionError> option_error(m, "OptionError", error.ptr());
  static py::exception<strata::ParseError> parse_error(m, "ParseError", error.ptr());
  static py::exception<strata::IoError> io_error(m, "IoError", error.ptr());
  static py::exception<strata::CheckpointError> checkpoint_error(m, "CheckpointError", error.ptr());
  static py::exception<strata::ShapeError> shape_error(m, "ShapeError", error.ptr());
  static py::exception<strata::CommError> comm_error(m, "CommError", error.ptr());
  static py::exception<strata::TimeoutError> timeout_error(m, "TimeoutError", error.ptr());
  static py::exception<strata::ReplayError> replay_error(m, "ReplayError", error.ptr());
  py::register_exception_translator([](std::exception_ptr p) {
    auto raise = [](PyObject* type, const std::exception& e) {
      PyErr_SetString(type, strata::cli::failure_line(e).c_str());
    };
    try {
      if (p) std::rethrow_exception(p);
    } catch (const strata::OptionError& e) {
      raise(option_error.ptr(), e);
    } catch (const strata::ParseError& e) {
      raise(parse_error.ptr(), e);
    } catch (const strata::IoError& e) {
      raise(io_error.ptr(), e);
    } catch (const strata::CheckpointError& e) {
      raise(checkpoint_error.ptr(), e);
    } catch (const strata::ShapeError& e) {
      raise(shape_error.ptr(), e);
    } catch (const strata::CommError& e) {
      raise(comm_error.ptr(), e);
    } catch (const strata::TimeoutError& e) {
      raise(timeout_error.ptr(), e);
    } catch (const strata::ReplayError& e) {
      raise(replay_error.ptr(), e);
    } catch (const strata::Error& e) {
      raise(error.ptr(), e);
    } catch (const std::bad_alloc& e) {
      raise(PyExc_MemoryError, e);
    }
  });
  strata::python::register_runtime(m);
  strata::python::register_dist_array(m);
  strata::python::register_checkpoints(m);
  m.def("train", &train, py::arg("app"),
        "train(app, **options) -> dict: trains app as `strata train app --option value ...` would "
        "(data=, synthetic=, epochs=, seed=, threads=, plan=, serial=True, save=, checkpoint_dir=, resume=, the "
        "app's options; "
        "'_' in a name stands for '-'). Returns {'metrics': {'pass', 'seconds', 'items', 'loss', ...: "
        "numpy arrays, one value per pass}, 'model': {array name: numpy array, whole on every rank}, 'info', "
        "'rank', 'ranks', 'threads'}.");
  m.def("explain", &explain, py::arg("app"),
        "explain(app, **options) -> str: the plans `strata explain app ...` prints, without training.");
}
