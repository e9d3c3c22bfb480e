# Debian packages (cpack -G DEB in the build folder; scripts/package.sh), one per
# install component (cmake/strata_install.cmake), as Debian splits a library:
#   libstrata-dev  libstrata.a, headers, CMake package, strata.pc. Programs link the
#                  static library, so it depends on the -dev packages they compile and
#                  link with (Debian 12: Open MPI 4.1, fmt 9, xxHash 0.8).
#   strata         the `strata` command, linked statically against libstrata: it needs
#                  the run-time libraries only, which dpkg-shlibdeps reads off the binary.
#   python3-strata the Python module (with STRATA_BUILD_PYTHON), for the python3 it was
#                  built with, and numpy.
# Files are named <package>_<version>_<arch>.deb.
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME strata)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "Strata maintainers <strata@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "Serial ML training loops run in parallel over threads and MPI ranks")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)  # the command; CMake never strips static libraries
set(CPACK_COMPONENTS_ALL dev command)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)

set(CPACK_DEBIAN_DEV_PACKAGE_NAME libstrata-dev)
set(CPACK_DEBIAN_DEV_PACKAGE_SECTION libdevel)
set(CPACK_DEBIAN_DEV_PACKAGE_DEPENDS "libopenmpi-dev (>= 4.1), libfmt-dev (>= 9), libxxhash-dev (>= 0.8)")
set(CPACK_DEBIAN_DEV_PACKAGE_RECOMMENDS "openmpi-bin, cmake (>= 3.25), pkg-config, g++ (>= 4:12)")
set(CPACK_COMPONENT_DEV_DESCRIPTION "Strata: the library, headers, CMake package and pkg-config file")

set(CPACK_DEBIAN_COMMAND_PACKAGE_NAME strata)
set(CPACK_DEBIAN_COMMAND_PACKAGE_SECTION science)
set(CPACK_DEBIAN_COMMAND_PACKAGE_SHLIBDEPS ON)
# mpirun runs it on several ranks; one rank needs no mpirun.
set(CPACK_DEBIAN_COMMAND_PACKAGE_RECOMMENDS "openmpi-bin")
set(CPACK_COMPONENT_COMMAND_DESCRIPTION "Strata: the strata command, which trains the apps (mf, slr, lda)")

if(TARGET strata_python)
  list(APPEND CPACK_COMPONENTS_ALL python)
  get_target_property(strata_py_version strata_python STRATA_PYTHON_VERSION)
  set(CPACK_DEBIAN_PYTHON_PACKAGE_NAME python3-strata)
  set(CPACK_DEBIAN_PYTHON_PACKAGE_SECTION python)
  set(CPACK_DEBIAN_PYTHON_PACKAGE_SHLIBDEPS ON)
  # A CPython extension works with the minor version it was built for only.
  string(REPLACE "." ";" strata_py_parts ${strata_py_version})
  list(GET strata_py_parts 0 strata_py_major)
  list(GET strata_py_parts 1 strata_py_minor)
  math(EXPR strata_py_minor "${strata_py_minor} + 1")
  set(CPACK_DEBIAN_PYTHON_PACKAGE_DEPENDS
      "python3 (>= ${strata_py_version}), python3 (<< ${strata_py_major}.${strata_py_minor}), python3-numpy")
  set(CPACK_COMPONENT_PYTHON_DESCRIPTION "Strata: the Python module (import strata)")
endif()

include(CPack)
