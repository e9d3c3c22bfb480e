# What `cmake --install` puts under the prefix, by component:
#   dev      libstrata.a, include/strata (detail/ too: the API's inline templates need
#            it), the CMake package (StrataConfig.cmake, version file, exported
#            Strata::strata, FindxxHash.cmake) and strata.pc for pkg-config;
#   command  bin/strata (with STRATA_BUILD_APPS).
# CPack (cmake/strata_cpack.cmake) makes one Debian package of each.
include(CMakePackageConfigHelpers)
set(STRATA_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/Strata)

install(TARGETS strata EXPORT StrataTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT dev
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT dev)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/strata DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} COMPONENT dev)
install(EXPORT StrataTargets NAMESPACE Strata:: DESTINATION ${STRATA_CMAKE_DIR} COMPONENT dev)

configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/StrataConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/StrataConfig.cmake INSTALL_DESTINATION ${STRATA_CMAKE_DIR})
# 0.x: a minor version may change the API, so only the same minor version is compatible.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/StrataConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/StrataConfig.cmake ${PROJECT_BINARY_DIR}/StrataConfigVersion.cmake
              ${CMAKE_CURRENT_LIST_DIR}/FindxxHash.cmake
        DESTINATION ${STRATA_CMAKE_DIR} COMPONENT dev)

# pkg-config: paths relative to the .pc file's own location (${pcfiledir}), so an
# unpacked or relocated prefix works as the installed one does.
file(RELATIVE_PATH STRATA_PC_TO_PREFIX ${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_LIBDIR}/pkgconfig
     ${CMAKE_INSTALL_PREFIX})
configure_file(${CMAKE_CURRENT_LIST_DIR}/strata.pc.in ${PROJECT_BINARY_DIR}/strata.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/strata.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig COMPONENT dev)

if(TARGET strata-cli)
  install(TARGETS strata-cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT command)
endif()
