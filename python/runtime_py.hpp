// The Runtimes the Python module's calls run on (strata.train, strata.load_model,
// strata.Runtime, ...): which one a call gets, and how long it lives.
//
// In one process each call has a Runtime of its own, unless a strata.Runtime is open:
// then every call runs on that one. Under mpirun MPI cannot start again once a Runtime
// has ended it, so the first Runtime is kept for the whole process (ended at interpreter
// exit) and every later call runs on it. A call that asks for runtime options (threads=,
// checkpoint_dir=, ...) other than those of the Runtime it must share gets an
// OptionError saying so.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>  // in every file of the module: its casters must agree

#include "strata/runtime.hpp"

namespace strata::python {

/// A Runtime started with the command's runtime options (--strata-threads=2, ...).
class HeldRuntime {
 public:
  explicit HeldRuntime(std::vector<std::string> options);
  Runtime& rt() { return *rt_; }
  /// As asked, before the Runtime read them.
  const std::vector<std::string>& options() const { return options_; }

 private:
  std::vector<std::string> options_;
  std::vector<std::string> args_;
  std::vector<char*> argv_;
  int argc_ = 0;
  std::unique_ptr<Runtime> rt_;
};

/// How a call's runtime options are held against the Runtime it must share.
enum class Options {
  required,  ///< the call's options must be the shared Runtime's (strata.train, strata.Runtime)
  any,       ///< the call asks for none and takes the shared Runtime as it is (model files)
};

/// The Runtime of one call: the shared one (an open strata.Runtime's, or the process's
/// under mpirun), else one of its own, ended with the call (one process) or kept
/// (mpirun).
class CallRuntime {
 public:
  CallRuntime(const std::vector<std::string>& options, Options check);
  Runtime& rt() { return held_->rt(); }
  const std::shared_ptr<HeldRuntime>& held() const { return held_; }

 private:
  std::shared_ptr<HeldRuntime> held_;
};

/// strata.Runtime's arguments as runtime options: threads=2 is --strata-threads=2,
/// checkpoint_dir="d" --strata-checkpoint-dir=d (the same words strata.train makes).
std::vector<std::string> runtime_options(const pybind11::kwargs& kw);

/// What lives on an open Runtime and must end before it does (a DistArray's storage).
class RuntimeBound {
 public:
  virtual ~RuntimeBound() = default;
  virtual void end() = 0;
};

/// What a strata.Runtime holds: a Runtime shared as CallRuntime shares it, and the
/// things made on it, ended when it closes (by `with`, close(), or when the last
/// reference goes), so that none outlives the Runtime it points into.
class OpenRuntime {
 public:
  explicit OpenRuntime(const std::vector<std::string>& options);
  ~OpenRuntime();
  OpenRuntime(const OpenRuntime&) = delete;
  OpenRuntime& operator=(const OpenRuntime&) = delete;

  bool is_open() const { return held_ != nullptr; }
  /// The Runtime; strata.Error when closed.
  Runtime& rt() const;
  /// Ends `thing` when this closes.
  void adopt(const std::shared_ptr<RuntimeBound>& thing);
  /// Collective: waits for the automatic checkpoint being written, ends what was made
  /// on the Runtime and lets the Runtime go (it ends unless shared: under mpirun it
  /// stays the process's). Idempotent.
  void close();

 private:
  std::shared_ptr<HeldRuntime> held_;
  std::vector<std::weak_ptr<RuntimeBound>> things_;
};

/// Defines strata.Runtime and ends what is still open at interpreter exit.
void register_runtime(pybind11::module_& m);

}  // namespace strata::python
