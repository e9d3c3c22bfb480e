// The check every app makes of --data before reading it: the apps read their data
// through the library's loaders, which map the file into memory and read it in
// parallel, so it must be a regular file. A FIFO, a pipe (--data /dev/stdin), a
// device or a directory is refused at once, naming the option: opening a FIFO would
// wait for a writer, and reading a stream would consume what a second look needs.
#pragma once

#include <string>

#include "common/app.hpp"

namespace strata::apps {

/// OptionError "--data: 'PATH' is a FIFO ..., not a regular file" unless `path` names
/// a regular file (after symlinks); IoError "--data: cannot open WHAT 'PATH': why"
/// when it does not exist or cannot be examined. `what` names the data ("rating
/// file"), `option` the option that gave the path. Opens nothing.
void check_data_file(const std::string& path, const std::string& what, const std::string& option = "--data");

/// The fraction of --data to hold out: the app's --holdout, or 0 when --test FILE
/// names the held-out data instead (OptionError when both are given). For apps that
/// declare both options.
double holdout_fraction(const RunConfig& config);

/// A classifier's data (slr, mlr): --data's LIBSVM file through `load(path, holdout)`
/// or, without --data, `generate(holdout)`; then --test's file, loaded whole with
/// `load(path, 0.0)`, becomes the held-out samples through `attach(problem, test, path)`.
template <class Load, class Generate, class Attach>
auto classifier_data(const RunConfig& c, Load&& load, Generate&& generate, Attach&& attach) {
  const double holdout = holdout_fraction(c);
  auto p = c.data_path.empty() ? generate(holdout)
                               : (check_data_file(c.data_path, "LIBSVM file"), load(c.data_path, holdout));
  if (const std::string& test = c.options.text("test"); !test.empty()) {
    check_data_file(test, "LIBSVM file", "--test");
    attach(p, load(test, 0.0), test);
  }
  return p;
}

}  // namespace strata::apps
