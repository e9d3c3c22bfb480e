// A model an app saved (`--save DIR`: one checkpoint directory per array, as
// apps/<app>/app.cpp writes them) read back as numpy arrays, for strata.train.
#pragma once

#include <filesystem>

#include <pybind11/pybind11.h>

#include "strata/runtime.hpp"

namespace strata::python {

/// Collective: {name: numpy array} for every checkpoint directly in `dir` (a
/// subdirectory holding manifest.txt), whole and row-major on every rank; other files
/// (model.txt, vocab.txt) are left out. Element types f32, f64, i32, i64 of 1 or 2
/// dimensions, the ones the apps save; CheckpointError for any other.
pybind11::dict load_saved_model(Runtime& rt, const std::filesystem::path& dir);

}  // namespace strata::python
