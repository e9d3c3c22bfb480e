// The kernels compiled for the avx512 instruction set (flags in src/CMakeLists.txt).
#define STRATA_KERNEL_NS avx512
#include "kernels_body.hpp"
