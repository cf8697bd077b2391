#!/bin/sh
# Runs every benchmark scenario of bench/scenarios/ against the build in $1
# (default build-release) and writes bench/report/ (REPORT.md + one JSON each).
# Extra arguments name the scenarios to run (default: all); --update-docs also
# writes the summary table into docs/BENCHMARKS.md.
set -e
build="${1:-build-release}"
[ $# -gt 0 ] && shift
lib="$build/python/libcairn_py.so"
if [ ! -f "$lib" ]; then
  echo "cairn bench: $lib not found; build it first (make bench)" >&2
  exit 1
fi
if ! make -s venv-bench; then
  echo "cairn bench: could not create the Python environment (.venv) with 'make venv-bench'" >&2
  exit 1
fi
case "$lib" in /*) ;; *) lib="$(pwd)/$lib" ;; esac
CAIRN_LIB="$lib" exec .venv/bin/python bench/runner.py --out bench/report "$@"
