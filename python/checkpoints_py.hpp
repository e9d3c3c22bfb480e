// Models and checkpoints as numpy arrays: strata.load_model and strata.save_model (the
// format of `--save DIR`: one checkpoint directory per array, strata/io/checkpoint.hpp)
// and strata.load_checkpoint (the arrays of a run's newest automatic checkpoint).
#pragma once

#include <filesystem>

#include <pybind11/pybind11.h>

#include "strata/runtime.hpp"

namespace strata::python {

/// Collective: {name: array} for every checkpoint directly in `dir` (a subdirectory
/// holding manifest.txt), whole on every rank; other files (model.txt, vocab.txt) are
/// left out. Dense arrays come as numpy arrays, sparse ones as {"shape", "indices",
/// "values"}. IoError when `dir` is not a directory, CheckpointError when it holds no
/// saved array or one is damaged, naming the file.
pybind11::dict load_saved_model(Runtime& rt, const std::filesystem::path& dir);

/// Defines strata.load_model, strata.save_model and strata.load_checkpoint.
void register_checkpoints(pybind11::module_& m);

}  // namespace strata::python
