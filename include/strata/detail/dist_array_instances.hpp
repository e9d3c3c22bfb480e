// Which DistArray types are compiled once, in src/array/dist_array_*.cpp. Included at
// the end of dist_array.hpp.
#pragma once

// The element types most arrays hold are compiled once, in src/array/ (the movement
// and checkpoint code every DistArray type carries through its virtual members is
// the bulk of a user translation unit's work otherwise). Other element types
// (structs, small integers) are instantiated where they are used.
#define STRATA_DIST_ARRAY_INSTANCES(KEYWORD, T) \
  KEYWORD template class strata::DistArray<T, 1>; \
  KEYWORD template class strata::DistArray<T, 2>; \
  KEYWORD template class strata::DistArray<T, 3>; \
  KEYWORD template class strata::DistArray<T, 4>;
#define STRATA_EXTERN_INSTANCES(T) STRATA_DIST_ARRAY_INSTANCES(extern, T)
STRATA_EXTERN_INSTANCES(float)
STRATA_EXTERN_INSTANCES(double)
STRATA_EXTERN_INSTANCES(std::int32_t)
STRATA_EXTERN_INSTANCES(std::int64_t)
#undef STRATA_EXTERN_INSTANCES
