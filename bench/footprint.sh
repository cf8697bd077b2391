#!/bin/sh
# Code size and worst-case stack of the cairn core on Cortex-M3, with littlefs's
# (the version pinned in bench/requirements.txt) beside it.
#   sh bench/footprint.sh            (from the repository root or anywhere)
# Measures only: always exits 0. Needs arm-none-eabi-gcc with newlib's headers
# (override the compiler with ARM_CC=...) and python3; littlefs's sources are
# fetched with pip into build/bench-cache/ (bench/lfs_sdist.py). bench/footprint.py
# does the work.
cd "$(dirname "$0")/.." || exit 0
cc="${ARM_CC:-arm-none-eabi-gcc}"
install="apt-get install -y gcc-arm-none-eabi libnewlib-arm-none-eabi"
if ! command -v "$cc" >/dev/null 2>&1; then
  echo "footprint: skipped: $cc not found"
  echo "  install it with: $install"
  exit 0
fi
probe="${TMPDIR:-/tmp}/cairn-footprint-probe.$$"
if ! printf '#include <string.h>\n#include <assert.h>\n' > "$probe.c" ||
   ! "$cc" -mcpu=cortex-m3 -mthumb -c "$probe.c" -o "$probe.o" >/dev/null 2>&1; then
  rm -f "$probe.c" "$probe.o"
  echo "footprint: skipped: $cc cannot compile '#include <string.h>' for Cortex-M3 (no C library headers)"
  echo "  install them with: $install"
  exit 0
fi
rm -f "$probe.c" "$probe.o"
# The project's environment (make venv) has pip for fetching littlefs's sources.
py=python3
[ -x .venv/bin/python ] && py=.venv/bin/python
if ! command -v "$py" >/dev/null 2>&1; then
  echo "footprint: skipped: no python3"
  exit 0
fi
"$py" bench/footprint.py "$cc" || echo "footprint: analysis failed (see above)"
exit 0
