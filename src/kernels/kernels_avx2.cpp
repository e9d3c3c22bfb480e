// The kernels compiled for the avx2 instruction set (flags in src/CMakeLists.txt).
#define STRATA_KERNEL_NS avx2
#include "kernels_body.hpp"
