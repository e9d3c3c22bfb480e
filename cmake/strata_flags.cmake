# Compile flags of Strata's own targets: the warnings, -Werror, -march and the
# sanitizers. They are options of Strata's directory (add_compile_options), so every
# target Strata defines below it (the library, apps, tools, tests, benchmarks, examples)
# has them and none of a parent project's does, and no usage requirement carries them:
# a program using Strata, installed or as a subproject, compiles with its own flags.
# (Not an INTERFACE target linked to them: link_libraries() and a PUBLIC link would
# hand its flags on to whatever links libstrata.)
#
# What a program must share with the library is set on the `strata` target itself
# (src/CMakeLists.txt): C++20, STRATA_CHECKED_DEFAULT (the default of
# LoopOptions::checked in the headers), and the link option that keeps the recovery layer.
add_compile_options(-Wall -Wextra -Wpedantic)
if(STRATA_WERROR)
  add_compile_options(-Werror)
endif()
# GCC 12 at -O3 warns -Wrestrict inside libstdc++'s std::string concatenation and
# assignment, where nothing overlaps (false positives: GCC bugs 105329, 105651): off for
# GCC 12 only, so a Release build with -Werror succeeds.
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_GREATER_EQUAL 12
   AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13)
  add_compile_options(-Wno-restrict)
endif()
if(STRATA_ARCH AND CMAKE_SYSTEM_PROCESSOR MATCHES "x86_64|AMD64")
  add_compile_options(-march=${STRATA_ARCH})
endif()
if(STRATA_SANITIZE)
  add_compile_options(-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined)
  add_link_options(-fsanitize=address,undefined)
endif()
