# 64-bit big-endian (IBM Z): cross compiler and qemu-user from
# Debian's gcc-s390x-linux-gnu, libc6-dev-s390x-cross and qemu-user.
# ctest runs each test binary through CMAKE_CROSSCOMPILING_EMULATOR.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR s390x)
set(CAIRN_CROSS_TRIPLE s390x-linux-gnu)
set(CMAKE_C_COMPILER ${CAIRN_CROSS_TRIPLE}-gcc)
set(CMAKE_FIND_ROOT_PATH /usr/${CAIRN_CROSS_TRIPLE})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-s390x -L /usr/${CAIRN_CROSS_TRIPLE})
