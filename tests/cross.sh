#!/bin/sh
# Cross-target C tests (part of `make test`): builds the C tests for each
# target named on the command line (armhf: 32-bit ARM; s390x: 64-bit
# big-endian) with its cross compiler and runs them with ctest under
# qemu-user (CMAKE_CROSSCOMPILING_EMULATOR of cmake/toolchain-<target>.cmake).
# Optimised (-O2), no sanitizers (qemu-user and ASan do not mix).
# A target whose compiler, libc or qemu is missing is skipped with a message.
# Usage: tests/cross.sh [armhf] [s390x]   (env: JOBS, CMAKE, NATIVE_BUILD)
set -u
cd "$(dirname "$0")/.."
CMAKE=${CMAKE:-cmake}
JOBS=${JOBS:-2}
NATIVE_BUILD=${NATIVE_BUILD:-build}
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
    ok=1
    # CAIRN_TEST_CROSS: tests leave out long runs of space policy, which is
    # the same code on every target (test_ring's 1-byte full-volume laps).
    (cd "$dir" && CAIRN_TEST_CROSS=1 ctest --output-on-failure -j "$JOBS") || ok=0
    # Images across byte orders / word sizes: written by the native
    # test_interop, read by the cross one, and the other way round.
    native=$NATIVE_BUILD/tests/core/test_interop
    xbin=$dir/tests/core/test_interop
    if [ -x "$native" ] && [ -x "$xbin" ]; then
        x=$dir/interop
        rm -rf "$x" && mkdir -p "$x/native" "$x/$target"
        for way in "native $target" "$target native"; do
            set -- $way
            run_w="$native"; run_r="$qemu -L /usr/$triple $xbin"
            [ "$1" = native ] || { run_w="$qemu -L /usr/$triple $xbin"; run_r="$native"; }
            if $run_w write "$x/$1" >"$x/$1.write.log" 2>&1 &&
                $run_r verify "$x/$1" >"$x/$1.verify.log" 2>&1; then
                echo "cross $target: images written on $1, read on $2: $(tail -n 1 "$x/$1.verify.log")"
            else
                cat "$x/$1.write.log" "$x/$1.verify.log"
                echo "cross $target: FAILED: images written on $1, read on $2"
                ok=0
            fi
        done
        # Same program, same seed: the images must be the same bytes.
        for img in interop-nor.img interop-nand.img; do
            if cmp -s "$x/native/$img" "$x/$target/$img"; then
                echo "cross $target: $img written on native and on $target: byte-identical"
            else
                echo "cross $target: FAILED: $img differs between native and $target"
                ok=0
            fi
        done
    else
        echo "cross $target: image interchange skipped: needs $native (make build)"
    fi
    if [ $ok = 1 ]; then
        echo "cross $target: passed (build $((built - start)) s, tests $(($(date +%s) - built)) s)"
    else
        echo "cross $target: FAILED (tests $(($(date +%s) - built)) s)"
        status=1
    fi
done
exit $status
