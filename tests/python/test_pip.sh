#!/bin/sh
# The Python package as a user gets it (part of `make test`, about a minute):
# in a temporary folder outside the repository, a fresh virtualenv,
#   pip install <repo>/python        (compiles libcairn_py.so into the package)
# then, from that folder and with CAIRN_LIB unset, an image built from Python
# (a dict and a folder), saved, read back and listed by the `cairn` console
# script; then `pip wheel <repo>/python` (the wheel must carry the library),
# and an sdist made in the repository, built into a wheel elsewhere and
# installed into a second fresh virtualenv (the sdist carries the C sources).
#
# pip needs the package index for the build requirement (setuptools, pinned in
# python/pyproject.toml) and cffi: when it cannot be reached the test says
# "skipped" and passes.
# Usage: tests/python/test_pip.sh   (env: PYTHON, default python3)
set -eu
REPO=$(cd "$(dirname "$0")/../.." && pwd)
PYTHON=${PYTHON:-python3}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/cairn-pip.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
unset CAIRN_LIB CAIRN_TOOL PYTHONPATH CAIRN_PY_CLI_EXEC
start=$(date +%s)
say() { echo "test_pip: $*"; }
fail() { say "FAILED: $*"; exit 1; }
PIN=$(sed -n 's/^requires = \["\(setuptools==[^"]*\)"\]/\1/p' "$REPO/python/pyproject.toml")
[ -n "$PIN" ] || fail "no pinned setuptools in python/pyproject.toml"

cd "$WORK"
"$PYTHON" -m venv venv || fail "$PYTHON -m venv"
PY=$WORK/venv/bin/python
pip() { "$PY" -m pip --disable-pip-version-check -q "$@"; }
if ! pip download --no-deps -d dl "$PIN" >pip-download.log 2>&1; then
    tail -n 3 pip-download.log
    say "skipped: the package index cannot be reached (pip download $PIN failed)"
    exit 0
fi

say "pip install $REPO/python (into $WORK/venv)"
pip install "$REPO/python" || fail "pip install"

"$PY" - <<'EOF' || fail "building and reading an image from Python"
import os, pathlib, cairn
here = pathlib.Path.cwd()
site = pathlib.Path(cairn.__file__).parent
assert site.is_relative_to(here / "venv"), f"cairn imported from {site}, not the venv"
assert cairn.lib_path == site / "libcairn_py.so", cairn.lib_path
files = {"etc/config.json": b'{"a": 1}\n', "data/blob.bin": bytes(range(256)) * 500,
         "empty": b"", "logs": None}
with cairn.Image.from_files(files, model="nor-m25p16", size="1M") as image:
    image.save("dict.img")
with cairn.Image.open("dict.img") as image:
    assert image.read_file("etc/config.json") == files["etc/config.json"]
    assert image.read_file("data/blob.bin") == files["data/blob.bin"]
    assert image.isdir("logs") and image.check().ok
    image.extract("tree")
with cairn.Image.from_dir("tree", model="nand-dhara", size="2M") as a, \
        cairn.Image.from_dir("tree", model="nand-dhara", size="2M") as b:
    assert a.tobytes() == b.tobytes()
    a.save("tree.img")
with cairn.Image.open("tree.img") as image:
    assert image.files() == cairn.Image.open("dict.img").files()
print(f"test_pip: cairn {cairn.__version__} from {site}: images built and read back")
EOF

listing=$(PATH="$WORK/venv/bin:/usr/bin:/bin" cairn ls -R tree.img) || fail "cairn ls (console script)"
want=$(printf 'data/\ndata/blob.bin\nempty\netc/\netc/config.json\nlogs/')
[ "$listing" = "$want" ] || fail "cairn ls -R gave: $listing"

say "pip wheel $REPO/python"
pip wheel --no-deps -w wheels "$REPO/python" || fail "pip wheel"
"$PY" - <<'EOF' || fail "the wheel"
import glob, zipfile
wheels = glob.glob("wheels/*.whl")
assert len(wheels) == 1 and "-py3-none-" in wheels[0], wheels
assert "cairn/libcairn_py.so" in zipfile.ZipFile(wheels[0]).namelist(), wheels[0]
EOF

say "sdist, then a wheel from it, into a second virtualenv"
pip install --no-index --find-links dl "$PIN" || fail "setuptools into the venv"
(cd "$REPO/python" && "$PY" -c 'import sys; from setuptools import build_meta as b; b.build_sdist(sys.argv[1])' \
    "$WORK/sdist" >"$WORK/sdist.log" 2>&1) || { tail -n 20 sdist.log; fail "sdist"; }
tar tzf sdist/*.tar.gz | grep -q '/csrc/src/fs.c$' || fail "the sdist lacks the C sources"
pip wheel --no-deps -w wheels-sdist sdist/*.tar.gz || fail "pip wheel of the sdist"
"$PYTHON" -m venv venv2 || fail "$PYTHON -m venv (second)"
"$WORK/venv2/bin/python" -m pip --disable-pip-version-check -q install wheels-sdist/*.whl ||
    fail "pip install of the sdist's wheel"
"$WORK/venv2/bin/python" -c '
import cairn
with cairn.Image.open("tree.img") as image:
    assert image.read_file("etc/config.json") == b"{\"a\": 1}\n"
' || fail "the sdist's wheel"

say "passed in $(( $(date +%s) - start )) s"
