#!/bin/sh
# Cross-target C tests (part of `make test`): builds the C tests for each
# target named on the command line (armhf: 32-bit ARM; s390x: 64-bit
# big-endian) with its cross compiler and runs them with ctest under
# qemu-user (CMAKE_CROSSCOMPILING_EMULATOR of cmake/toolchain-<target>.cmake).
# Optimised (-O2), no sanitizers (qemu-user and ASan do not mix).
# A target whose compiler, libc or qemu is missing is skipped with a message.
# Usage: tests/cross.sh [armhf] [s390x]   (env: JOBS, CMAKE)
set -u
cd "$(dirname "$0")/.."
CMAKE=${CMAKE:-cmake}
JOBS=${JOBS:-2}
status=0
for target in "$@"; do
    case $target in
    armhf) triple=arm-linux-gnueabihf; qemu=qemu-arm; pkgs="gcc-arm-linux-gnueabihf libc6-dev-armhf-cross" ;;
    s390x) triple=s390x-linux-gnu; qemu=qemu-s390x; pkgs="gcc-s390x-linux-gnu libc6-dev-s390x-cross" ;;
    *) echo "cross: unknown target '$target' (armhf, s390x)"; status=1; continue ;;
    esac
    if ! command -v "$triple-gcc" >/dev/null 2>&1 || ! command -v "$qemu" >/dev/null 2>&1 ||
        [ ! -e "/usr/$triple/lib/libc.so.6" ]; then
        echo "cross $target: SKIPPED: needs $triple-gcc, its libc and $qemu" \
             "(Debian: apt-get install $pkgs qemu-user)"
        continue
    fi
    dir=build-$target
    log=$dir/cross-build.log
    mkdir -p "$dir"
    start=$(date +%s)
    echo "cross $target: building the C tests with $triple-gcc into $dir"
    if ! "$CMAKE" -S . -B "$dir" -DCMAKE_TOOLCHAIN_FILE="cmake/toolchain-$target.cmake" \
            -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCAIRN_SANITIZE=OFF >"$log" 2>&1 ||
        ! "$CMAKE" --build "$dir" -j "$JOBS" >>"$log" 2>&1; then
        tail -n 40 "$log"
        echo "cross $target: FAILED to build (log: $log)"
        status=1
        continue
    fi
    built=$(date +%s)
    echo "cross $target: built in $((built - start)) s; running ctest under $qemu"
    if (cd "$dir" && ctest --output-on-failure -j "$JOBS"); then
        echo "cross $target: passed (build $((built - start)) s, tests $(($(date +%s) - built)) s)"
    else
        echo "cross $target: FAILED (tests $(($(date +%s) - built)) s)"
        status=1
    fi
done
exit $status
