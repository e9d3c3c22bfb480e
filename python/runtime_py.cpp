#include "runtime_py.hpp"

#include <algorithm>
#include <cstdio>
#include <exception>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "strata/error.hpp"
#include "strata/recovery.hpp"

namespace py = pybind11;

namespace strata::python {

namespace {

// Under mpirun: the process's Runtime, from the first call to interpreter exit.
std::shared_ptr<HeldRuntime>& kept() {
  static std::shared_ptr<HeldRuntime> runtime;
  return runtime;
}

// In one process: the Runtime of the open strata.Runtime objects, if any is open.
std::weak_ptr<HeldRuntime>& opened() {
  static std::weak_ptr<HeldRuntime> runtime;
  return runtime;
}

// Every strata.Runtime not yet destroyed, to close at interpreter exit.
std::vector<std::weak_ptr<OpenRuntime>>& open_runtimes() {
  static std::vector<std::weak_ptr<OpenRuntime>> all;
  return all;
}

std::vector<std::string> with_program(const std::vector<std::string>& options) {
  std::vector<std::string> args{"python3"};
  args.insert(args.end(), options.begin(), options.end());
  return args;
}

}  // namespace

HeldRuntime::HeldRuntime(std::vector<std::string> options)
    : options_(std::move(options)), args_(with_program(options_)) {
  for (auto& a : args_) argv_.push_back(a.data());
  argv_.push_back(nullptr);
  argc_ = static_cast<int>(args_.size());
  rt_ = std::make_unique<Runtime>(argc_, argv_.data());
}

CallRuntime::CallRuntime(const std::vector<std::string>& options, Options check) {
  std::shared_ptr<HeldRuntime> shared = kept() ? kept() : opened().lock();
  if (!shared) {
    held_ = std::make_shared<HeldRuntime>(options);
    if (held_->rt().uses_mpi()) kept() = held_;
    return;
  }
  // The same options in any order are the same Runtime.
  auto sorted = [](std::vector<std::string> o) {
    std::sort(o.begin(), o.end());
    return o;
  };
  if (check == Options::required && sorted(shared->options()) != sorted(options)) {
    const std::string mine = fmt::format("{}", fmt::join(shared->options(), " "));
    const std::string asked = fmt::format("{}", fmt::join(options, " "));
    if (shared == kept())
      throw OptionError(fmt::format("under mpirun every call of a process runs on the first call's Runtime: "
                                    "runtime options [{}], not [{}]",
                                    mine, asked));
    throw OptionError(fmt::format("a strata.Runtime is open, and every call runs on it: runtime options [{}], not "
                                  "[{}] (close it first, or ask for its options)",
                                  mine, asked));
  }
  held_ = std::move(shared);
}

std::vector<std::string> runtime_options(const py::kwargs& kw) {
  std::vector<std::string> options;
  for (const auto& [key, value] : kw) {
    std::string name = py::str(key);
    std::replace(name.begin(), name.end(), '_', '-');
    if (value.is_none()) continue;
    // The command's spellings: --threads and --resume DIR become these.
    if (name == "resume" || name == "threads" || name == "checkpoint-dir" || name == "checkpoint-every" ||
        name == "checkpoint-write" || name == "record" || name == "replay" || name == "seed" || name == "log" ||
        name == "timeout")
      options.push_back(fmt::format("--strata-{}={}", name, std::string(py::str(value))));
    else
      throw OptionError(fmt::format("strata.Runtime: unknown option '{}' (threads, seed, log, timeout, checkpoint_dir, "
                                    "checkpoint_every, checkpoint_write, resume, record, replay)",
                                    std::string(py::str(key))));
  }
  return options;
}

OpenRuntime::OpenRuntime(const std::vector<std::string>& options)
    : held_(CallRuntime(options, Options::required).held()) {
  if (held_ != kept()) opened() = held_;
}

Runtime& OpenRuntime::rt() const {
  if (!held_) throw Error("this strata.Runtime is closed");
  return held_->rt();
}

void OpenRuntime::adopt(const std::shared_ptr<RuntimeBound>& thing) {
  std::erase_if(things_, [](const auto& t) { return t.expired(); });
  things_.push_back(thing);
}

void OpenRuntime::close() {
  if (!held_) return;
  std::shared_ptr<HeldRuntime> held = std::move(held_);
  // The last automatic checkpoint is committed first, so that its failure is the
  // caller's error rather than a line in the log; what was made on the Runtime ends
  // either way, then the Runtime (unless shared).
  std::exception_ptr failure;
  try {
    recovery::finish_checkpoints(held->rt());
  } catch (...) {
    failure = std::current_exception();
  }
  for (auto& t : things_)
    if (auto thing = t.lock()) thing->end();
  things_.clear();
  held.reset();
  if (failure) std::rethrow_exception(failure);
}

OpenRuntime::~OpenRuntime() {
  try {
    close();
  } catch (const std::exception& e) {  // nowhere to raise it: the Runtime's log has it
    std::fprintf(stderr, "strata.Runtime: %s\n", e.what());
  }
}

void register_runtime(py::module_& m) {
  py::class_<OpenRuntime, std::shared_ptr<OpenRuntime>>(
      m, "Runtime",
      "Runtime(threads=, seed=, checkpoint_dir=, resume=, ...): a Strata Runtime (ranks and threads) held open "
      "for DistArrays; strata.train and the model functions run on it while it is open. A context manager.")
      .def(py::init([](const py::kwargs& kw) {
             auto open = std::make_shared<OpenRuntime>(runtime_options(kw));
             std::erase_if(open_runtimes(), [](const auto& o) { return o.expired(); });
             open_runtimes().push_back(open);
             return open;
           }))
      .def_property_readonly("rank", [](const OpenRuntime& o) { return o.rt().rank(); })
      .def_property_readonly("ranks", [](const OpenRuntime& o) { return o.rt().size(); })
      .def_property_readonly("threads", [](const OpenRuntime& o) { return o.rt().threads(); })
      .def_property_readonly("closed", [](const OpenRuntime& o) { return !o.is_open(); })
      .def("close", &OpenRuntime::close,
           "Commits the last automatic checkpoint, ends the DistArrays made on this Runtime and lets it end.")
      .def("__enter__", [](const std::shared_ptr<OpenRuntime>& o) { return o; })
      .def("__exit__", [](OpenRuntime& o, const py::args&) { o.close(); });
  // At interpreter exit: every strata.Runtime closes, then the kept Runtime ends
  // (MPI_Finalize with it).
  py::module_::import("atexit").attr("register")(py::cpp_function([] {
    for (auto& o : open_runtimes())
      if (auto open = o.lock()) open->close();
    open_runtimes().clear();
    kept().reset();
  }));
}

}  // namespace strata::python
