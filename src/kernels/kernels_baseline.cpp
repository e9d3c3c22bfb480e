// The kernels compiled for the baseline instruction set (flags in src/CMakeLists.txt).
#define STRATA_KERNEL_NS baseline
#include "kernels_body.hpp"
