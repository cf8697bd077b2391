#!/bin/sh
# Runs every benchmark scenario found in bench/ against the build in $1.
# The scenarios arrive with the benchmark issue; until then this says so.
build="${1:-build-release}"
found=0
for s in bench/scenarios/*.py; do
  [ -e "$s" ] || continue
  found=1
done
if [ "$found" = 0 ]; then
  echo "cairn bench: no scenarios yet (build in $build is ready)"
fi
