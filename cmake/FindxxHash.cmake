# Finds xxHash (Debian: libxxhash-dev), which ships a pkg-config file but no CMake
# package, and defines the imported target xxHash::xxhash. Used by Strata's build and
# installed beside StrataConfig.cmake: a static libstrata links xxHash privately, so its
# users link it too (the exported target names xxHash::xxhash).
find_library(XXHASH_LIBRARY NAMES xxhash)
find_path(XXHASH_INCLUDE_DIR NAMES xxhash.h)
include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(xxHash REQUIRED_VARS XXHASH_LIBRARY XXHASH_INCLUDE_DIR)
if(xxHash_FOUND AND NOT TARGET xxHash::xxhash)
  add_library(xxHash::xxhash UNKNOWN IMPORTED)
  set_target_properties(xxHash::xxhash PROPERTIES IMPORTED_LOCATION "${XXHASH_LIBRARY}"
                                                  INTERFACE_INCLUDE_DIRECTORIES "${XXHASH_INCLUDE_DIR}")
endif()
mark_as_advanced(XXHASH_LIBRARY XXHASH_INCLUDE_DIR)
