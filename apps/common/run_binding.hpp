// What binds a `strata train` run's checkpoints to it: the options that change its
// results and a fingerprint of its data. Resuming with another value of any of them is
// refused, naming it (recovery::bind_checkpoints), since the run would otherwise go on
// from a model that matches neither its options nor the checkpointed run's.
#pragma once

#include <string>

#include "common/app.hpp"
#include "strata/runtime.hpp"

namespace strata::apps {

/// Binds the app, --seed, --plan, --serial, every app option, the --synthetic spec or
/// the --data file's fingerprint (its size and XXH3 checksum). Does nothing unless the
/// run writes or resumes checkpoints: the fingerprint reads the whole file.
void bind_run_to_checkpoints(Runtime& rt, const AppInfo& app, const RunConfig& config);

/// "bytes 123456 xxh3 0123456789abcdef" for a regular file; IoError naming the path
/// for one that cannot be read.
std::string file_fingerprint(const std::string& path);

}  // namespace strata::apps
