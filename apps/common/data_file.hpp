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

}  // namespace strata::apps
