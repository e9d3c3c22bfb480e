// DistArray<double, 1..4>, compiled once (see the end of strata/dist_array.hpp).
#include "strata/dist_array.hpp"  // with detail/dist_array_instances.hpp

STRATA_DIST_ARRAY_INSTANCES(, double)
