// The check every app makes of --data before reading it: the apps read their data
// through the library's loaders, which map the file into memory and read it in
// parallel, so it must be a regular file. A FIFO, a pipe (--data /dev/stdin), a
// device or a directory is refused at once, naming the option: opening a FIFO would
// wait for a writer, and reading a stream would consume what a second look needs.
#pragma once

#include <string>

namespace strata::apps {

/// OptionError "--data: 'PATH' is a FIFO ..., not a regular file" unless `path` names
/// a regular file (after symlinks); IoError "--data: cannot open WHAT 'PATH': why"
/// when it does not exist or cannot be examined. `what` names the data ("rating
/// file"). Opens nothing.
void check_data_file(const std::string& path, const std::string& what);

}  // namespace strata::apps
