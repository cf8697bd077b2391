#!/bin/sh
# Code size and worst-case stack of the cairn core on Cortex-M3.
#   sh bench/footprint.sh            (from the repository root or anywhere)
# Measures only: always exits 0. Needs arm-none-eabi-gcc (override with
# ARM_CC=...) and python3; bench/footprint.py does the work.
cd "$(dirname "$0")/.." || exit 0
cc="${ARM_CC:-arm-none-eabi-gcc}"
if ! command -v "$cc" >/dev/null 2>&1; then
  echo "footprint: skipped (no arm-none-eabi-gcc)"
  echo "  install it with: apt-get install -y gcc-arm-none-eabi"
  exit 0
fi
if ! command -v python3 >/dev/null 2>&1; then
  echo "footprint: skipped (no python3)"
  exit 0
fi
python3 bench/footprint.py "$cc" || echo "footprint: analysis failed (see above)"
exit 0
