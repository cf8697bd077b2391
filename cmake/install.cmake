# Install rules (CAIRN_INSTALL): the core (cairn::cairn), the simulator
# (cairn::sim, for tests on the host) and their headers, a CMake package for
# find_package(cairn CONFIG) and pkg-config files (cairn, cairn-sim).
include(CMakePackageConfigHelpers)

set(CAIRN_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/cairn CACHE STRING
    "Where cairn's CMake package files are installed (relative to the prefix)")
mark_as_advanced(CAIRN_INSTALL_CMAKEDIR)

install(TARGETS cairn cairn_sim cairn_headers EXPORT cairnTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(FILES
  ${PROJECT_SOURCE_DIR}/include/cairn.h
  ${PROJECT_SOURCE_DIR}/include/cairn_config.h
  ${PROJECT_SOURCE_DIR}/include/cairn_device.h
  ${PROJECT_SOURCE_DIR}/sim/csim.h
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})

install(EXPORT cairnTargets NAMESPACE cairn:: DESTINATION ${CAIRN_INSTALL_CMAKEDIR})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/cairnConfig.cmake.in
  ${PROJECT_BINARY_DIR}/cairnConfig.cmake
  INSTALL_DESTINATION ${CAIRN_INSTALL_CMAKEDIR})
# 0.x: a minor version may change the API
write_basic_package_version_file(${PROJECT_BINARY_DIR}/cairnConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/cairnConfig.cmake
              ${PROJECT_BINARY_DIR}/cairnConfigVersion.cmake
  DESTINATION ${CAIRN_INSTALL_CMAKEDIR})

# pkg-config. The prefix is the one installed to (cmake --install --prefix
# may differ from CMAKE_INSTALL_PREFIX): the files are written at install
# time from a template filled in here with everything else.
foreach(_dir LIBDIR INCLUDEDIR)
  if(IS_ABSOLUTE "${CMAKE_INSTALL_${_dir}}")
    set(CAIRN_PC_${_dir} "${CMAKE_INSTALL_${_dir}}")
  else()
    set(CAIRN_PC_${_dir} "\${prefix}/${CMAKE_INSTALL_${_dir}}")
  endif()
endforeach()
if(IS_ABSOLUTE "${CMAKE_INSTALL_LIBDIR}")
  set(_cairn_pc_dest "${CMAKE_INSTALL_LIBDIR}/pkgconfig")
else()
  set(_cairn_pc_dest "\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_LIBDIR}/pkgconfig")
endif()
set(CAIRN_PC_CFLAGS)
foreach(_def IN LISTS CAIRN_CONFIG_DEFINITIONS)
  string(APPEND CAIRN_PC_CFLAGS " -D${_def}")
endforeach()
set(CAIRN_PC_LIBS_EXTRA) # a sanitized build needs the runtime where it is linked
foreach(_opt IN LISTS CAIRN_SANITIZE_LINK)
  string(APPEND CAIRN_PC_LIBS_EXTRA " ${_opt}")
endforeach()
set(CAIRN_PC_PREFIX "@CAIRN_PC_PREFIX@") # kept for the install step
foreach(_pc cairn cairn-sim)
  configure_file(${PROJECT_SOURCE_DIR}/cmake/${_pc}.pc.in ${PROJECT_BINARY_DIR}/pkgconfig/${_pc}.pc.in @ONLY)
  install(CODE "
    set(CAIRN_PC_PREFIX \"\${CMAKE_INSTALL_PREFIX}\")
    configure_file(\"${PROJECT_BINARY_DIR}/pkgconfig/${_pc}.pc.in\"
                   \"${PROJECT_BINARY_DIR}/pkgconfig/${_pc}.pc\" @ONLY)
    file(INSTALL DESTINATION \"${_cairn_pc_dest}\" TYPE FILE
         FILES \"${PROJECT_BINARY_DIR}/pkgconfig/${_pc}.pc\")")
endforeach()
