# cairn used as a library by a project of its own (tests/consumer), and the
# README's example compiled as the README shows. CTest tests (label
# consumer), one way each:
#   subdir   add_subdirectory(cairn) in a project built with its own flags
#            (-Wall -Wextra -Werror, no sanitizers): it links (no undefined
#            __asan_*), cairn's targets get no sanitizer and no warning flag,
#            none of cairn's tests, benchmarks or Python targets appear, no
#            option leaks into the consumer's directory
#   fetch    FetchContent from a release-like archive holding only what the
#            library needs (CMakeLists.txt cmake include src sim LICENSE)
#   package  cairn configured on its own, built, `cmake --install`ed into a
#            prefix; find_package(cairn CONFIG) finds cairn::cairn and
#            cairn::sim; pkg-config (when installed) gives the flags of a
#            plain compiler call
#   options  add_subdirectory with every cairn_config.h switch on as a CMake
#            option and the sanitizers asked for: the consumer sees the
#            switches (the left-out calls answer INVAL) and links
#   readme   README.md "Using it" shows examples/hello.c verbatim, and its
#            compile command, run in a copy of the sources, builds a program
#            that runs
# Each way configures, builds and runs its program.
# Called as: cmake -DWAY=.. -DSRC=<cairn source> -DBIN=<work dir> -DGEN=<generator>
#                  -DCC=<C compiler> -P run.cmake
foreach(_v WAY SRC BIN GEN CC)
  if(NOT DEFINED ${_v})
    message(FATAL_ERROR "consumer: -D${_v}= missing")
  endif()
endforeach()
set(CONSUMER ${SRC}/tests/consumer)
file(REMOVE_RECURSE ${BIN})
file(MAKE_DIRECTORY ${BIN})

function(run what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(NOT rc EQUAL 0)
    message("${out}")
    message(FATAL_ERROR "consumer ${WAY}: FAIL: ${what} (${rc})")
  endif()
  set(run_out "${out}" PARENT_SCOPE)
  message(STATUS "consumer ${WAY}: ${what}: ok")
endfunction()

# Configures tests/consumer in ${BIN}/<dir> with the consumer's own flags,
# builds it and runs the program.
function(consumer dir)
  run("configure the consumer (${dir})" ${CMAKE_COMMAND} -S ${CONSUMER} -B ${BIN}/${dir}
      -G ${GEN} -DCMAKE_C_COMPILER=${CC} -DCMAKE_BUILD_TYPE=Debug
      "-DCMAKE_C_FLAGS=-Wall -Wextra -Werror" -DCMAKE_EXPORT_COMPILE_COMMANDS=ON ${ARGN})
  run("build the consumer (${dir})" ${CMAKE_COMMAND} --build ${BIN}/${dir} -j 2)
  run("run the consumer (${dir})" ${BIN}/${dir}/consumer)
  if(NOT run_out MATCHES "consumer: ok")
    message(FATAL_ERROR "consumer ${WAY}: FAIL: the program did not say ok: ${run_out}")
  endif()
endfunction()

# No compile command of the consumer's build (cairn's sources included)
# carries the project's own flags.
function(no_project_flags dir)
  file(READ ${BIN}/${dir}/compile_commands.json cc_json)
  foreach(flag -fsanitize -Wconversion -Wshadow CAIRN_STATE_CHECKS)
    string(FIND "${cc_json}" "${flag}" at)
    if(NOT at EQUAL -1)
      message(FATAL_ERROR "consumer ${WAY}: FAIL: ${flag} in a compile command of the consumer's build")
    endif()
  endforeach()
  string(FIND "${cc_json}" "src/fs.c" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "consumer ${WAY}: FAIL: cairn's sources not compiled in the consumer's build")
  endif()
  message(STATUS "consumer ${WAY}: no -fsanitize, -Wconversion, -Wshadow or state checks in its compile commands: ok")
endfunction()

if(WAY STREQUAL "subdir")
  consumer(subdir -DCAIRN_WAY=subdir -DCAIRN_SOURCE=${SRC})
  no_project_flags(subdir)

elseif(WAY STREQUAL "fetch")
  # what a release archive of the library holds; tests/, bench/, python/ left out
  set(stage ${BIN}/stage/cairn-0.1.0)
  file(MAKE_DIRECTORY ${stage})
  file(COPY ${SRC}/CMakeLists.txt ${SRC}/LICENSE ${SRC}/cmake ${SRC}/include ${SRC}/src ${SRC}/sim
       DESTINATION ${stage})
  execute_process(COMMAND ${CMAKE_COMMAND} -E tar czf ${BIN}/cairn-0.1.0.tar.gz cairn-0.1.0
                  WORKING_DIRECTORY ${BIN}/stage RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "consumer fetch: cannot make the archive (${rc})")
  endif()
  consumer(fetch -DCAIRN_WAY=fetch -DCAIRN_URL=file://${BIN}/cairn-0.1.0.tar.gz
           -DFETCHCONTENT_BASE_DIR=${BIN}/fetch-deps)
  no_project_flags(fetch)

elseif(WAY STREQUAL "package")
  set(prefix ${BIN}/prefix)
  run("configure cairn on its own" ${CMAKE_COMMAND} -S ${SRC} -B ${BIN}/cairn-build -G ${GEN}
      -DCMAKE_C_COMPILER=${CC} -DCMAKE_BUILD_TYPE=Release -DCAIRN_BUILD_TESTS=OFF
      -DCAIRN_BUILD_BENCH=OFF -DCAIRN_BUILD_PYTHON=OFF)
  run("build cairn" ${CMAKE_COMMAND} --build ${BIN}/cairn-build -j 2)
  run("install cairn into ${prefix}" ${CMAKE_COMMAND} --install ${BIN}/cairn-build --prefix ${prefix})
  foreach(f include/cairn.h include/cairn_config.h include/cairn_device.h include/csim.h)
    if(NOT EXISTS ${prefix}/${f})
      message(FATAL_ERROR "consumer package: FAIL: ${f} not installed")
    endif()
  endforeach()
  file(GLOB_RECURSE config ${prefix}/*/cairnConfig.cmake)
  file(GLOB_RECURSE pcs ${prefix}/*/cairn.pc)
  if(NOT config OR NOT pcs)
    message(FATAL_ERROR "consumer package: FAIL: cairnConfig.cmake or cairn.pc not installed")
  endif()
  consumer(package -DCAIRN_WAY=package -DCMAKE_PREFIX_PATH=${prefix})

  # pkg-config, as a Makefile would use it
  find_program(PKG_CONFIG NAMES pkg-config pkgconf)
  if(NOT PKG_CONFIG)
    message(STATUS "consumer package: pkg-config SKIPPED: not installed (Debian: apt-get install pkg-config)")
  else()
    get_filename_component(pcdir ${pcs} DIRECTORY)
    set(ENV{PKG_CONFIG_PATH} ${pcdir})
    run("pkg-config --modversion cairn" ${PKG_CONFIG} --modversion cairn)
    string(STRIP "${run_out}" version)
    if(NOT version STREQUAL "0.1.0")
      message(FATAL_ERROR "consumer package: FAIL: pkg-config says version '${version}'")
    endif()
    run("pkg-config --cflags --libs cairn-sim" ${PKG_CONFIG} --cflags --libs cairn-sim)
    string(STRIP "${run_out}" flags)
    message(STATUS "consumer package: pkg-config: ${flags}")
    separate_arguments(flags UNIX_COMMAND "${flags}")
    run("compile with pkg-config's flags" ${CC} -std=c99 -Wall -Wextra -Werror
        ${CONSUMER}/main.c ${flags} -o ${BIN}/consumer-pc)
    run("run the pkg-config build" ${BIN}/consumer-pc)
  endif()

elseif(WAY STREQUAL "options")
  consumer(options -DCAIRN_WAY=subdir -DCAIRN_SOURCE=${SRC}
           -DCAIRN_NO_MALLOC=ON -DCAIRN_NO_ATTRS=ON -DCAIRN_NO_RING=ON -DCAIRN_NO_BD=ON
           -DCAIRN_NO_CHECK=ON -DCAIRN_CONTEXT_SIZE=1024 -DCAIRN_SANITIZE=ON)
  file(READ ${BIN}/options/compile_commands.json cc_json)
  foreach(def CAIRN_NO_MALLOC CAIRN_NO_ATTRS CAIRN_NO_RING CAIRN_NO_BD CAIRN_NO_CHECK
          CAIRN_CONTEXT_SIZE=1024)
    string(REGEX MATCH "[^\n]*-D${def}[^\n]*tests/consumer/main.c" hit "${cc_json}")
    if(NOT hit)
      message(FATAL_ERROR "consumer options: FAIL: the consumer is not compiled with -D${def}")
    endif()
  endforeach()
  string(REGEX MATCH "[^\n]*-fsanitize[^\n]*tests/consumer/main.c" hit "${cc_json}")
  if(hit)
    message(FATAL_ERROR "consumer options: FAIL: cairn's sanitizers reached the consumer's compile line")
  endif()
  message(STATUS "consumer options: the switches reach the consumer's compile line, the sanitizers do not: ok")
  find_program(NM nm)
  if(NM)
    file(GLOB_RECURSE lib ${BIN}/options/*libcairn.a)
    run("nm libcairn.a" ${NM} -u ${lib})
    if(run_out MATCHES "[ \t](malloc|free|calloc|realloc)\n")
      message(FATAL_ERROR "consumer options: FAIL: CAIRN_NO_MALLOC, but libcairn.a calls malloc or free")
    endif()
    message(STATUS "consumer options: CAIRN_NO_MALLOC: libcairn.a calls no malloc or free: ok")
  endif()

elseif(WAY STREQUAL "readme")
  # The program README.md shows is examples/hello.c, byte for byte.
  file(READ ${SRC}/README.md readme)
  string(FIND "${readme}" "## Using it" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "consumer readme: FAIL: no \"## Using it\" in README.md")
  endif()
  string(SUBSTRING "${readme}" ${at} -1 using)
  string(FIND "${using}" "```c\n" start)
  if(start EQUAL -1)
    message(FATAL_ERROR "consumer readme: FAIL: no ```c block in \"Using it\"")
  endif()
  math(EXPR start "${start} + 5")
  string(SUBSTRING "${using}" ${start} -1 shown)
  string(FIND "${shown}" "\n```\n" end)
  if(end EQUAL -1)
    message(FATAL_ERROR "consumer readme: FAIL: the ```c block in \"Using it\" does not end")
  endif()
  math(EXPR end "${end} + 1")
  string(SUBSTRING "${shown}" 0 ${end} shown)
  file(READ ${SRC}/examples/hello.c hello)
  if(NOT shown STREQUAL hello)
    file(WRITE ${BIN}/readme-example.c "${shown}")
    message(FATAL_ERROR "consumer readme: FAIL: README.md's example differs from examples/hello.c "
                        "(diff ${BIN}/readme-example.c ${SRC}/examples/hello.c)")
  endif()
  message(STATUS "consumer readme: README.md shows examples/hello.c: ok")
  # Its compile command, run as shown at the top of a copy of the sources.
  string(REGEX MATCH "\ncc [^\n]*" cmd "${using}")
  string(STRIP "${cmd}" cmd)
  if(NOT cmd)
    message(FATAL_ERROR "consumer readme: FAIL: no `cc ...` command line in \"Using it\"")
  endif()
  file(COPY ${SRC}/include ${SRC}/src ${SRC}/sim ${SRC}/examples DESTINATION ${BIN}/tree)
  string(REGEX REPLACE "^cc " "\"${CC}\" " run_cmd "${cmd}")
  message(STATUS "consumer readme: ${cmd}")
  execute_process(COMMAND sh -c "${run_cmd}" WORKING_DIRECTORY ${BIN}/tree
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(NOT rc EQUAL 0 OR NOT out MATCHES "log.txt: hello")
    message("${out}")
    message(FATAL_ERROR "consumer readme: FAIL: the README's command failed (${rc})")
  endif()
  message(STATUS "consumer readme: the README's command builds and runs hello: ok")

else()
  message(FATAL_ERROR "consumer: unknown WAY '${WAY}'")
endif()
message(STATUS "consumer ${WAY}: passed")
