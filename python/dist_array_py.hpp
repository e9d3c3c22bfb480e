// strata.DistArray (dist_array_py.cpp): a strata::DistArray on an open strata.Runtime,
// to and from numpy.
#pragma once

#include <pybind11/pybind11.h>

namespace strata::python {

/// Defines strata.DistArray.
void register_dist_array(pybind11::module_& m);

}  // namespace strata::python
