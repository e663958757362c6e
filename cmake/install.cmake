# Install rules: the libraries, the public headers under include/quasistep/, the CLI, a CMake
# package (find_package(quasistep 0.2 CONFIG REQUIRED), target quasistep::quasistep) and a
# pkg-config file. docs/api.md shows both ways of using them.
include(CMakePackageConfigHelpers)
set(QS_PACKAGE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/quasistep)

install(TARGETS quasistep_abi quasistep_kernels quasistep_core quasistep_batch quasistep_library
        EXPORT quasistep-targets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(TARGETS quasistep RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})

# The public headers (include/quasistep/: the library's private ones stay beside its sources
# and are not installed) and the generated ones (the version, the built-in study); the OMPL
# adapter's below.
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/quasistep/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/quasistep
        FILES_MATCHING PATTERN "*.hpp" PATTERN planning EXCLUDE)
install(FILES ${QS_BUILD_INCLUDE_DIR}/quasistep/version.hpp DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/quasistep)
install(FILES ${QS_BUILD_INCLUDE_DIR}/quasistep/batch/default_study.hpp DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/quasistep/batch)

install(EXPORT quasistep-targets NAMESPACE quasistep:: DESTINATION ${QS_PACKAGE_DIR})

# The OMPL adapter, when built: quasistep::ompl (libompl and its headers by their absolute
# paths on this machine), in its own export set that the package includes when present.
if(QS_HAVE_OMPL)
  install(TARGETS quasistep_ompl EXPORT quasistep-ompl-targets ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/quasistep/planning/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/quasistep/planning
          FILES_MATCHING PATTERN "*.hpp")
  install(EXPORT quasistep-ompl-targets NAMESPACE quasistep:: DESTINATION ${QS_PACKAGE_DIR})
endif()
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/quasistep-config.cmake.in
                              ${PROJECT_BINARY_DIR}/quasistep-config.cmake INSTALL_DESTINATION ${QS_PACKAGE_DIR})
# 0.x: a minor version may change the API, so 0.2 accepts 0.2.y only.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/quasistep-config-version.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/quasistep-config.cmake ${PROJECT_BINARY_DIR}/quasistep-config-version.cmake
        DESTINATION ${QS_PACKAGE_DIR})

# pkg-config: the same compile definitions and option as the CMake target, the archives in link order,
# then their dependencies (Eigen, nlohmann-json and oneTBB's own .pc files). C++20 is the
# user's to ask for (-std=c++20 or later).
file(RELATIVE_PATH QS_PC_TO_PREFIX /prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig /prefix)
string(REGEX REPLACE "/$" "" QS_PC_TO_PREFIX "${QS_PC_TO_PREFIX}")
configure_file(${PROJECT_SOURCE_DIR}/cmake/quasistep.pc.in ${PROJECT_BINARY_DIR}/quasistep.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/quasistep.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
