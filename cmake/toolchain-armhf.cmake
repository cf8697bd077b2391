# 32-bit ARM (hard float), little-endian: cross compiler and qemu-user from
# Debian's gcc-arm-linux-gnueabihf, libc6-dev-armhf-cross and qemu-user.
# ctest runs each test binary through CMAKE_CROSSCOMPILING_EMULATOR.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR arm)
set(CAIRN_CROSS_TRIPLE arm-linux-gnueabihf)
set(CMAKE_C_COMPILER ${CAIRN_CROSS_TRIPLE}-gcc)
set(CMAKE_FIND_ROOT_PATH /usr/${CAIRN_CROSS_TRIPLE})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-arm -L /usr/${CAIRN_CROSS_TRIPLE})
