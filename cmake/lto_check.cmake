# build_lto (a CTest test): configures a separate build of this source tree
# with -O3 -flto -Wall -Wextra -Werror and builds the core library and two
# programs linked against it. With LTO gcc inlines across files at link time
# and can warn there (e.g. -Wmaybe-uninitialized), which breaks a consumer's
# -Werror build although every file compiles cleanly on its own.
# Called as: cmake -DSRC=.. -DBIN=.. -DGEN=.. -DCC=.. -P lto_check.cmake
set(_flags "-O3 -flto=auto -Wall -Wextra -Werror")
message(STATUS "build_lto: ${CC} ${_flags} in ${BIN}")
execute_process(
  COMMAND ${CMAKE_COMMAND} -S ${SRC} -B ${BIN} -G ${GEN}
          -DCMAKE_BUILD_TYPE=Release -DCMAKE_C_COMPILER=${CC}
          "-DCMAKE_C_FLAGS=${_flags}" -DCAIRN_SANITIZE=OFF
          -DCAIRN_CXX_CHECK=OFF -DCAIRN_LTO_CHECK=OFF
  RESULT_VARIABLE _rc OUTPUT_QUIET)
if(NOT _rc EQUAL 0)
  message(FATAL_ERROR "build_lto: configure failed (${_rc})")
endif()
# test_api links the core, the simulator and the test support; cpu_cost the
# core and the simulator alone: both link steps run the LTO optimiser.
execute_process(
  COMMAND ${CMAKE_COMMAND} --build ${BIN} -j 2 --target cairn test_api cpu_cost
  RESULT_VARIABLE _rc)
if(NOT _rc EQUAL 0)
  message(FATAL_ERROR "build_lto: FAIL: the -O3 -flto -Werror build broke (${_rc})")
endif()
message(STATUS "build_lto: ok: core, test_api and cpu_cost built with ${_flags}")
